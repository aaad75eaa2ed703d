/**
 * The demo's trading: Seaport 1.6 listings (in ETH or the stablecoin) and WETH offers, several
 * listings filled at once, escrow-market listings and bundles, aggregator sweeps, overpayments
 * refunded, direct deals in WETH or the stablecoin, wash pairs, paid mints, and swaps in the
 * Uniswap V2 pairs that move the exchange rates. Planned against the World model like the rest of
 * the activity (see plan/context.ts): an order is made in one block and filled in a later one, and no
 * token is touched twice within a block.
 */
import { keccak256, stringToHex } from "viem";
import { type Address, wordToAddress, ZERO_ADDRESS } from "../core/hex.ts";
import type { TxRequest } from "./block-builder.ts";
import type { Erc721Key } from "./contracts.ts";
import { callTx, type DemoContract, GAS } from "./contracts.ts";
import type { ActivityCounts } from "./counts.ts";
import type { Prng } from "./prng.ts";
import { basicOrderArgs, fulfillAvailableArgs, type SeaportOrder, validateArgs } from "./seaport.ts";
import type { Erc20Model, Erc721Model, PoolModel, TradingModel, World } from "./world.ts";

const MILLI_ETHER = 10n ** 15n;
const DOLLAR = 10n ** 6n;
/** The markets' fee and the creators' royalty, in basis points. */
export const MARKET_FEE_BPS = 250n;
export const ROYALTY_BPS = 500n;
/** Where the markets' fees and the collections' royalties go: addresses no one trades from. */
export const FEE_RECIPIENT = wordToAddress(keccak256(stringToHex("mintlens demo market fees")));
export const CREATOR = wordToAddress(keccak256(stringToHex("mintlens demo creator")));
/** What a pass of the paid-mint collection costs. */
export const PAID_MINT_PRICE = 50n * MILLI_ETHER;

type Action = (touched: Set<string>) => TxRequest[] | undefined;

export class TradingPlanner {
  constructor(
    private readonly world: World,
    private readonly prng: Prng,
    private readonly counts: ActivityCounts,
  ) {}

  actions(): { weight: number; run: Action }[] {
    return [
      { weight: 4, run: (t) => this.seaportList(t) },
      { weight: 4, run: (t) => this.seaportBuy(t) },
      { weight: 2.5, run: (t) => this.seaportOffer(t) },
      { weight: 2.5, run: (t) => this.seaportAcceptOffer(t) },
      { weight: 1.5, run: (t) => this.seaportSweep(t) },
      { weight: 4, run: (t) => this.escrowList(t) },
      { weight: 2, run: (t) => this.escrowBuy(t) },
      { weight: 1.5, run: (t) => this.escrowSweep(t) },
      { weight: 2, run: (t) => this.deal(t) },
      { weight: 2, run: (t) => this.washBack(t) },
      { weight: 1.5, run: () => this.paidMint() },
      { weight: 2.5, run: () => this.poolSwap() },
    ];
  }

  private get trading(): TradingModel | undefined {
    return this.world.trading;
  }

  private contract(key: "seaport" | "escrow" | "aggregator" | "dealDesk" | "paidMint"): DemoContract {
    const contract = this.world.contracts[key];
    if (!contract) throw new Error(`demo contract ${key} is missing`);
    return contract;
  }

  // --- helpers -------------------------------------------------------------------------------

  /** A token held by a demo account and not touched in this block; marks it touched. */
  private heldToken(touched: Set<string>): { c: Erc721Model; id: bigint; owner: Address } | undefined {
    const models = [...this.world.erc721.values()].filter((m) => m.held.size > 0);
    if (models.length === 0) return undefined;
    const c = this.prng.pick(models);
    const id = c.held.pick(this.prng, (i) => !touched.has(tokenKey(c, i)));
    if (id === undefined) return undefined;
    touched.add(tokenKey(c, id));
    return { c, id, owner: c.owners.get(id) as Address };
  }

  /** Whether `owner` still holds the token and it is free in this block. */
  private available(key: Erc721Key, id: bigint, owner: Address, touched: Set<string>): boolean {
    const c = this.world.erc721.get(key);
    return c !== undefined && c.owners.get(id) === owner && !touched.has(tokenKey(c, id));
  }

  /** The approval an operator needs to move `owner`'s tokens of `c`, unless already given. */
  private approve(c: Erc721Model, owner: Address, operator: Address): TxRequest[] {
    const trading = this.trading;
    const key = `${operator}:${c.contract.address}:${owner}`;
    if (!trading || trading.approvals.has(key)) return [];
    trading.approvals.add(key);
    this.counts.approvalsForAll++;
    return [
      callTx(
        owner,
        c.contract.address,
        c.contract.contractName,
        "setApprovalForAll",
        [operator, true],
        GAS.approvalForAll,
      ),
    ];
  }

  private ethPrice(): bigint {
    return BigInt(this.prng.logUniform(5, 20_000, 1)) * MILLI_ETHER;
  }

  private cuts(price: bigint): { fee: bigint; royalty: bigint } {
    return { fee: (price * MARKET_FEE_BPS) / 10_000n, royalty: (price * ROYALTY_BPS) / 10_000n };
  }

  private salt(): bigint {
    return (
      (BigInt(this.prng.uint32()) << 64n) | (BigInt(this.prng.uint32()) << 32n) | BigInt(this.prng.uint32())
    );
  }

  private setOwner(c: Erc721Model, id: bigint, owner: Address): void {
    c.setOwner(id, owner, this.world.accountSet);
    this.counts.nftTradeTransfers++;
  }

  // --- Seaport -------------------------------------------------------------------------------

  private order(
    side: SeaportOrder["side"],
    offerer: Address,
    c: Erc721Model,
    id: bigint,
    currency: Address | null,
    price: bigint,
  ): SeaportOrder & { key: Erc721Key } {
    const trading = this.trading as TradingModel;
    const { fee, royalty } = this.cuts(price);
    return {
      key: c.key,
      side,
      offerer,
      nft: c.contract.address,
      tokenId: id,
      currency,
      price,
      fee: { recipient: trading.feeRecipient, amount: fee },
      royalty: { recipient: trading.creator, amount: royalty },
      salt: this.salt(),
    };
  }

  /** A listing of one NFT for ETH, or for the stablecoin, validated on chain by its seller. */
  private seaportList(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    const token = trading && this.heldToken(touched);
    if (!trading || !token) return undefined;
    const seaport = this.contract("seaport");
    const inDollars = this.prng.chance(0.3);
    const price = inDollars ? BigInt(this.prng.logUniform(10, 50_000, 1)) * DOLLAR : this.ethPrice();
    const currency = inDollars ? trading.stablecoin.contract.address : null;
    const order = this.order("listing", token.owner, token.c, token.id, currency, price);
    trading.seaportOrders.set(order.salt, order);
    this.counts.seaportListings++;
    return [
      ...this.approve(token.c, token.owner, seaport.address),
      callTx(token.owner, seaport.address, "Seaport", "validate", validateArgs(order), GAS.seaportValidate),
    ];
  }

  /** Open listings whose token is still their seller's and free in this block; stale ones are dropped. */
  private openListings(touched: Set<string>, currency: "eth" | "any"): (SeaportOrder & { key: Erc721Key })[] {
    const trading = this.trading;
    if (!trading) return [];
    const open: (SeaportOrder & { key: Erc721Key })[] = [];
    for (const order of trading.seaportOrders.values()) {
      if (order.side !== "listing") continue;
      const c = this.world.erc721.get(order.key);
      if (c?.owners.get(order.tokenId) !== order.offerer) {
        trading.seaportOrders.delete(order.salt);
        continue;
      }
      if (touched.has(tokenKey(c, order.tokenId))) continue;
      if (currency === "eth" && order.currency !== null) continue;
      open.push(order);
    }
    return open;
  }

  private seaportBuy(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    const open = this.openListings(touched, "any");
    if (!trading || open.length === 0) return undefined;
    const order = this.prng.pick(open);
    const c = this.world.erc721.get(order.key) as Erc721Model;
    const buyer = this.world.pickAccount(this.prng, order.offerer);
    if (order.currency !== null) {
      if (trading.stablecoin.balanceOf(buyer) < order.price) return undefined;
      this.pay(trading.stablecoin, buyer, order);
      this.counts.seaportStableSales++;
    } else {
      this.counts.seaportSales++;
    }
    touched.add(tokenKey(c, order.tokenId));
    trading.seaportOrders.delete(order.salt);
    this.setOwner(c, order.tokenId, buyer);
    return [
      callTx(
        buyer,
        this.contract("seaport").address,
        "Seaport",
        "fulfillBasicOrder",
        basicOrderArgs(order),
        GAS.seaportBasic,
        {
          value: order.currency === null ? order.price : 0n,
          label: "Seaport.fulfillBasicOrder (listing)",
        },
      ),
    ];
  }

  /** Moves an order's ERC-20 payment in the model: the payer's whole price, the seller's proceeds. */
  private pay(
    currency: Erc20Model,
    payer: Address,
    order: SeaportOrder,
    seller: Address = order.offerer,
  ): void {
    currency.move(payer, seller, order.price - order.fee.amount - order.royalty.amount);
    currency.move(payer, order.fee.recipient, order.fee.amount);
    currency.move(payer, order.royalty.recipient, order.royalty.amount);
  }

  /** An offer in WETH for a token someone else holds, validated on chain by the bidder. */
  private seaportOffer(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    const token = trading && this.heldToken(touched);
    if (!trading || !token) return undefined;
    const bidder = this.world.pickAccount(this.prng, token.owner);
    const price = this.ethPrice() / 2n;
    if (trading.weth.balanceOf(bidder) < price * 2n) return undefined;
    const order = this.order("offer", bidder, token.c, token.id, trading.weth.contract.address, price);
    trading.seaportOrders.set(order.salt, order);
    this.counts.seaportOffers++;
    const seaport = this.contract("seaport");
    return [callTx(bidder, seaport.address, "Seaport", "validate", validateArgs(order), GAS.seaportValidate)];
  }

  /** The token's holder accepts an open WETH offer: the seller sends the transaction. */
  private seaportAcceptOffer(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    if (!trading) return undefined;
    const offers = [...trading.seaportOrders.values()].filter((o) => o.side === "offer");
    if (offers.length === 0) return undefined;
    const order = this.prng.pick(offers);
    const c = this.world.erc721.get(order.key) as Erc721Model;
    const seller = c.owners.get(order.tokenId);
    if (
      seller === undefined ||
      seller === order.offerer ||
      !this.world.accountSet.has(seller) ||
      trading.weth.balanceOf(order.offerer) < order.price
    ) {
      trading.seaportOrders.delete(order.salt);
      return undefined;
    }
    if (touched.has(tokenKey(c, order.tokenId))) return undefined;
    touched.add(tokenKey(c, order.tokenId));
    trading.seaportOrders.delete(order.salt);
    this.pay(trading.weth, order.offerer, order, seller);
    this.setOwner(c, order.tokenId, order.offerer);
    this.counts.seaportOfferSales++;
    const seaport = this.contract("seaport");
    return [
      ...this.approve(c, seller, seaport.address),
      callTx(
        seller,
        seaport.address,
        "Seaport",
        "fulfillBasicOrder",
        basicOrderArgs(order),
        GAS.seaportBasic,
        {
          label: "Seaport.fulfillBasicOrder (offer)",
        },
      ),
    ];
  }

  /** Two to four ETH listings of different sellers bought in one transaction. */
  private seaportSweep(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    const bySeller = new Map<Address, SeaportOrder & { key: Erc721Key }>();
    for (const order of this.openListings(touched, "eth")) bySeller.set(order.offerer, order);
    if (!trading || bySeller.size < 2) return undefined;
    const orders = this.prng.sample([...bySeller.values()], this.prng.int(2, 4));
    const sellers = new Set(orders.map((o) => o.offerer));
    const buyer = this.world.pickAccount(this.prng);
    if (sellers.has(buyer)) return undefined;
    let total = 0n;
    for (const order of orders) {
      const c = this.world.erc721.get(order.key) as Erc721Model;
      touched.add(tokenKey(c, order.tokenId));
      trading.seaportOrders.delete(order.salt);
      this.setOwner(c, order.tokenId, buyer);
      total += order.price;
    }
    this.counts.seaportSweeps++;
    this.counts.seaportSweptTokens += orders.length;
    return [
      callTx(
        buyer,
        this.contract("seaport").address,
        "Seaport",
        "fulfillAvailableAdvancedOrders",
        fulfillAvailableArgs(orders, buyer),
        GAS.seaportPerOrder * BigInt(orders.length + 1),
        { value: total },
      ),
    ];
  }

  // --- The escrow market and its aggregator ----------------------------------------------------

  /** One token, a bundle of one collection, or a bundle across collections, for ETH. */
  private escrowList(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    const first = trading && this.heldToken(touched);
    if (!trading || !first) return undefined;
    const escrow = this.contract("escrow");
    const items = [{ c: first.c, id: first.id }];
    if (this.prng.chance(0.4)) {
      // More of the seller's tokens, of this collection or, half the time, of any.
      const across = this.prng.chance(0.5);
      const wanted = this.prng.int(1, 2);
      for (const c of across ? [...this.world.erc721.values()] : [first.c]) {
        for (const id of c.held.values()) {
          if (items.length > wanted) break;
          if (c.owners.get(id) !== first.owner || touched.has(tokenKey(c, id))) continue;
          if (across && c === first.c) continue;
          touched.add(tokenKey(c, id));
          items.push({ c, id });
        }
      }
    }
    const id = trading.nextEscrowListing++;
    const price = this.ethPrice();
    trading.escrowListings.set(id, {
      id,
      seller: first.owner,
      items: items.map((i) => ({ key: i.c.key, id: i.id })),
      price,
    });
    this.counts.escrowListings++;
    if (items.length > 1) this.counts.escrowBundles++;
    const approvals = [...new Set(items.map((i) => i.c))].flatMap((c) =>
      this.approve(c, first.owner, escrow.address),
    );
    return [
      ...approvals,
      callTx(
        first.owner,
        escrow.address,
        "EscrowMarket",
        "list",
        [items.map((i) => ({ nft: i.c.contract.address, tokenId: i.id, amount: 0n })), ZERO_ADDRESS, price],
        GAS.escrowList + GAS.escrowPerItem * BigInt(items.length),
      ),
    ];
  }

  /** Escrow listings whose tokens are all still their seller's and free in this block. */
  private openEscrowListings(touched: Set<string>) {
    const trading = this.trading;
    if (!trading) return [];
    return [...trading.escrowListings.values()].filter((l) => {
      const ok = l.items.every((i) => this.world.erc721.get(i.key)?.owners.get(i.id) === l.seller);
      if (!ok) trading.escrowListings.delete(l.id);
      return ok && l.items.every((i) => this.available(i.key, i.id, l.seller, touched));
    });
  }

  private takeListing(
    listing: { id: bigint; items: { key: Erc721Key; id: bigint }[] },
    buyer: Address,
    touched: Set<string>,
    hops: number,
  ): void {
    this.trading?.escrowListings.delete(listing.id);
    for (const item of listing.items) {
      const c = this.world.erc721.get(item.key) as Erc721Model;
      touched.add(tokenKey(c, item.id));
      c.setOwner(item.id, buyer, this.world.accountSet);
      this.counts.nftTradeTransfers += hops;
    }
  }

  /** Buys a listing; a quarter of buyers send too much and get the change back. */
  private escrowBuy(touched: Set<string>): TxRequest[] | undefined {
    const open = this.openEscrowListings(touched);
    if (open.length === 0) return undefined;
    const listing = this.prng.pick(open);
    const buyer = this.world.pickAccount(this.prng, listing.seller);
    const overpaid = this.prng.chance(0.25);
    const value = overpaid
      ? listing.price + (listing.price * BigInt(this.prng.int(5, 30))) / 100n
      : listing.price;
    this.takeListing(listing, buyer, touched, 1);
    this.counts.escrowSales++;
    if (overpaid) this.counts.escrowRefunds++;
    return [
      callTx(
        buyer,
        this.contract("escrow").address,
        "EscrowMarket",
        "buy",
        [listing.id],
        GAS.escrowBuy + GAS.escrowPerItem * BigInt(listing.items.length),
        {
          value,
        },
      ),
    ];
  }

  /** Two or three single-token listings of different sellers, bought through the aggregator. */
  private escrowSweep(touched: Set<string>): TxRequest[] | undefined {
    const bySeller = new Map<
      Address,
      { id: bigint; items: { key: Erc721Key; id: bigint }[]; price: bigint }
    >();
    for (const l of this.openEscrowListings(touched)) if (l.items.length === 1) bySeller.set(l.seller, l);
    if (bySeller.size < 2) return undefined;
    const chosen = this.prng.sample([...bySeller.entries()], this.prng.int(2, 3));
    const buyer = this.world.pickAccount(this.prng);
    if (chosen.some(([seller]) => seller === buyer)) return undefined;
    let total = 0n;
    for (const [, listing] of chosen) {
      this.takeListing(listing, buyer, touched, 2);
      total += listing.price;
    }
    this.counts.escrowSweeps++;
    return [
      callTx(
        buyer,
        this.contract("aggregator").address,
        "SweepAggregator",
        "sweep",
        [this.contract("escrow").address, chosen.map(([, l]) => l.id)],
        GAS.sweepPerListing * BigInt(chosen.length),
        // Sent with a margin, which the aggregator refunds.
        { value: total + total / 20n },
      ),
    ];
  }

  // --- Direct deals --------------------------------------------------------------------------

  /** The seller settles a deal through the desk: the NFT to the buyer, WETH or dollars to the seller. */
  private deal(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    const token = trading && this.heldToken(touched);
    if (!trading || !token) return undefined;
    const buyer = this.world.pickAccount(this.prng, token.owner);
    const inDollars = this.prng.chance(0.4);
    const currency = inDollars ? trading.stablecoin : trading.weth;
    const price = inDollars ? BigInt(this.prng.logUniform(10, 20_000, 1)) * DOLLAR : this.ethPrice() / 2n;
    if (currency.balanceOf(buyer) < price) return undefined;
    currency.move(buyer, token.owner, price);
    this.setOwner(token.c, token.id, buyer);
    this.counts.dealSales++;
    // Some deals are the first leg of a wash pair: the buyer sells it straight back, later.
    if (!inDollars && this.prng.chance(0.5)) {
      trading.washLegs.push({ key: token.c.key, id: token.id, seller: token.owner, buyer, price });
    }
    return this.settle(token.c, token.id, token.owner, buyer, currency, price);
  }

  private settle(
    c: Erc721Model,
    id: bigint,
    seller: Address,
    buyer: Address,
    currency: Erc20Model,
    price: bigint,
  ): TxRequest[] {
    const desk = this.contract("dealDesk");
    return [
      ...this.approve(c, seller, desk.address),
      callTx(
        seller,
        desk.address,
        "DealDesk",
        "settle",
        [
          [
            {
              nft: c.contract.address,
              tokenId: id,
              seller,
              buyer,
              currency: currency.contract.address,
              price,
            },
          ],
        ],
        GAS.dealSettle,
      ),
    ];
  }

  /** The second leg of a wash pair: the buyer of a deal sells the NFT back to its seller, at the same price. */
  private washBack(touched: Set<string>): TxRequest[] | undefined {
    const trading = this.trading;
    if (!trading || trading.washLegs.length === 0) return undefined;
    const at = this.prng.int(0, trading.washLegs.length - 1);
    const leg = trading.washLegs[at] as (typeof trading.washLegs)[number];
    const c = this.world.erc721.get(leg.key);
    if (!c || c.owners.get(leg.id) !== leg.buyer || trading.weth.balanceOf(leg.seller) < leg.price) {
      trading.washLegs.splice(at, 1);
      return undefined;
    }
    if (touched.has(tokenKey(c, leg.id))) return undefined;
    trading.washLegs.splice(at, 1);
    touched.add(tokenKey(c, leg.id));
    trading.weth.move(leg.seller, leg.buyer, leg.price);
    this.setOwner(c, leg.id, leg.seller);
    this.counts.washPairs++;
    return this.settle(c, leg.id, leg.buyer, leg.seller, trading.weth, leg.price);
  }

  // --- Paid mints and the pools ---------------------------------------------------------------

  private paidMint(): TxRequest[] | undefined {
    const minter = this.world.pickAccount(this.prng);
    this.counts.paidMints++;
    return [
      callTx(minter, this.contract("paidMint").address, "PaidMintERC721", "mint", [], GAS.paidMint, {
        value: PAID_MINT_PRICE,
      }),
    ];
  }

  /**
   * A trader (the deployer) swaps 0.2% to 3% of one side of a pair through its low-level `swap`:
   * the tokens in first, then the amount out that Uniswap V2's formula (0.3% fee) allows.
   */
  private poolSwap(): TxRequest[] | undefined {
    const trading = this.trading;
    if (!trading || trading.pools.length === 0) return undefined;
    const pool = this.prng.pick(trading.pools);
    const zeroForOne = this.prng.chance(0.5);
    const reserveIn = zeroForOne ? pool.reserve0 : pool.reserve1;
    const amountIn = (reserveIn * BigInt(this.prng.int(20, 300))) / 10_000n;
    const amountOut = swapOutput(pool, zeroForOne, amountIn);
    if (amountOut <= 0n) return undefined;
    if (zeroForOne) {
      pool.reserve0 += amountIn;
      pool.reserve1 -= amountOut;
    } else {
      pool.reserve1 += amountIn;
      pool.reserve0 -= amountOut;
    }
    this.counts.poolSwaps++;
    const trader = this.world.deployer;
    const tokenIn = zeroForOne ? pool.token0 : pool.token1;
    return [
      callTx(trader, tokenIn, "TestERC20", "transfer", [pool.contract.address, amountIn], GAS.erc20Transfer),
      callTx(
        trader,
        pool.contract.address,
        "UniswapV2Pair",
        "swap",
        [zeroForOne ? 0n : amountOut, zeroForOne ? amountOut : 0n, trader, "0x"],
        GAS.poolSwap,
      ),
    ];
  }
}

/** Uniswap V2's getAmountOut: what `amountIn` buys after the 0.3% fee. */
export function swapOutput(pool: PoolModel, zeroForOne: boolean, amountIn: bigint): bigint {
  const [reserveIn, reserveOut] = zeroForOne
    ? [pool.reserve0, pool.reserve1]
    : [pool.reserve1, pool.reserve0];
  const withFee = amountIn * 997n;
  return (withFee * reserveOut) / (reserveIn * 1000n + withFee);
}

function tokenKey(c: Erc721Model, id: bigint): string {
  return `${c.contract.address}:${id}`;
}
