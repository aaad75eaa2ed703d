/**
 * Seaport 1.6: listings of one ERC-721 for ETH or for the dollar, and WETH offers, each validated
 * on chain by its maker; a listing filled by a buyer, an offer accepted by the token's holder, and
 * two to four ETH listings of different sellers bought in one transaction. Every order is made in
 * one block and filled in a later one.
 */
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, type Erc721Key, GAS } from "../contracts.ts";
import { type PlanContext, tokenKey } from "../plan/context.ts";
import type { Erc20Model, Erc721Model, TradingModel } from "../world.ts";
import { MARKET_FEE_BPS, ROYALTY_BPS } from "./fees.ts";
import { basicOrderArgs, fulfillAvailableArgs, type SeaportOrder, validateArgs } from "./seaport-orders.ts";
import { anyHeldToken, approveOperator, deliver, ethPrice, marketContract } from "./trade.ts";

const DOLLAR = 10n ** 6n;

type Order = SeaportOrder & { key: Erc721Key };

export function createSeaportPlanner(ctx: PlanContext) {
  const { world, prng, counts } = ctx;

  function cuts(price: bigint): { fee: bigint; royalty: bigint } {
    return { fee: (price * MARKET_FEE_BPS) / 10_000n, royalty: (price * ROYALTY_BPS) / 10_000n };
  }

  function salt(): bigint {
    return (BigInt(prng.uint32()) << 64n) | (BigInt(prng.uint32()) << 32n) | BigInt(prng.uint32());
  }

  function makeOrder(
    side: SeaportOrder["side"],
    offerer: Address,
    c: Erc721Model,
    id: bigint,
    currency: Address | null,
    price: bigint,
  ): Order {
    const trading = world.trading as TradingModel;
    const { fee, royalty } = cuts(price);
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
      salt: salt(),
    };
  }

  /** A listing of one NFT for ETH, or for the stablecoin, validated on chain by its seller. */
  function list(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    const token = trading && anyHeldToken(ctx, touched);
    if (!trading || !token) return undefined;
    const seaport = marketContract(world, "seaport");
    const inDollars = prng.chance(0.3);
    const price = inDollars ? BigInt(prng.logUniform(10, 50_000, 1)) * DOLLAR : ethPrice(prng);
    const currency = inDollars ? trading.stablecoin.contract.address : null;
    const listing = makeOrder("listing", token.owner, token.c, token.id, currency, price);
    trading.seaportOrders.set(listing.salt, listing);
    counts.seaportListings++;
    return [
      ...approveOperator(ctx, token.c, token.owner, seaport.address),
      callTx(token.owner, seaport.address, "Seaport", "validate", validateArgs(listing), GAS.seaportValidate),
    ];
  }

  /** Open listings whose token is still their seller's and free in this block; stale ones are dropped. */
  function openListings(touched: Set<string>, currency: "eth" | "any"): Order[] {
    const trading = world.trading;
    if (!trading) return [];
    const open: Order[] = [];
    for (const order of trading.seaportOrders.values()) {
      if (order.side !== "listing") continue;
      const c = world.erc721.get(order.key);
      if (c?.owners.get(order.tokenId) !== order.offerer) {
        trading.seaportOrders.delete(order.salt);
        continue;
      }
      if (touched.has(tokenKey(c.contract, order.tokenId))) continue;
      if (currency === "eth" && order.currency !== null) continue;
      open.push(order);
    }
    return open;
  }

  /** Moves an order's ERC-20 payment in the model: the payer's whole price, the seller's proceeds. */
  function pay(currency: Erc20Model, payer: Address, order: SeaportOrder, seller: Address = order.offerer) {
    currency.move(payer, seller, order.price - order.fee.amount - order.royalty.amount);
    currency.move(payer, order.fee.recipient, order.fee.amount);
    currency.move(payer, order.royalty.recipient, order.royalty.amount);
  }

  function buy(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    const open = openListings(touched, "any");
    if (!trading || open.length === 0) return undefined;
    const listing = prng.pick(open);
    const c = world.erc721.get(listing.key) as Erc721Model;
    const buyer = world.pickAccount(prng, listing.offerer);
    if (listing.currency !== null) {
      if (trading.stablecoin.balanceOf(buyer) < listing.price) return undefined;
      pay(trading.stablecoin, buyer, listing);
      counts.seaportStableSales++;
    } else {
      counts.seaportSales++;
    }
    touched.add(tokenKey(c.contract, listing.tokenId));
    trading.seaportOrders.delete(listing.salt);
    deliver(ctx, c, listing.tokenId, buyer);
    return [
      callTx(
        buyer,
        marketContract(world, "seaport").address,
        "Seaport",
        "fulfillBasicOrder",
        basicOrderArgs(listing),
        GAS.seaportBasic,
        {
          value: listing.currency === null ? listing.price : 0n,
          label: "Seaport.fulfillBasicOrder (listing)",
        },
      ),
    ];
  }

  /** An offer in WETH for a token someone else holds, validated on chain by the bidder. */
  function offer(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    const token = trading && anyHeldToken(ctx, touched);
    if (!trading || !token) return undefined;
    const bidder = world.pickAccount(prng, token.owner);
    const price = ethPrice(prng) / 2n;
    if (trading.weth.balanceOf(bidder) < price * 2n) return undefined;
    const bid = makeOrder("offer", bidder, token.c, token.id, trading.weth.contract.address, price);
    trading.seaportOrders.set(bid.salt, bid);
    counts.seaportOffers++;
    const seaport = marketContract(world, "seaport");
    return [callTx(bidder, seaport.address, "Seaport", "validate", validateArgs(bid), GAS.seaportValidate)];
  }

  /** The token's holder accepts an open WETH offer: the seller sends the transaction. */
  function acceptOffer(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    if (!trading) return undefined;
    const offers = [...trading.seaportOrders.values()].filter((o) => o.side === "offer");
    if (offers.length === 0) return undefined;
    const bid = prng.pick(offers);
    const c = world.erc721.get(bid.key) as Erc721Model;
    const seller = c.owners.get(bid.tokenId);
    if (
      seller === undefined ||
      seller === bid.offerer ||
      !world.accountSet.has(seller) ||
      trading.weth.balanceOf(bid.offerer) < bid.price
    ) {
      trading.seaportOrders.delete(bid.salt);
      return undefined;
    }
    if (touched.has(tokenKey(c.contract, bid.tokenId))) return undefined;
    touched.add(tokenKey(c.contract, bid.tokenId));
    trading.seaportOrders.delete(bid.salt);
    pay(trading.weth, bid.offerer, bid, seller);
    deliver(ctx, c, bid.tokenId, bid.offerer);
    counts.seaportOfferSales++;
    const seaport = marketContract(world, "seaport");
    return [
      ...approveOperator(ctx, c, seller, seaport.address),
      callTx(seller, seaport.address, "Seaport", "fulfillBasicOrder", basicOrderArgs(bid), GAS.seaportBasic, {
        label: "Seaport.fulfillBasicOrder (offer)",
      }),
    ];
  }

  /** Two to four ETH listings of different sellers bought in one transaction. */
  function sweep(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    const bySeller = new Map<Address, Order>();
    for (const listing of openListings(touched, "eth")) bySeller.set(listing.offerer, listing);
    if (!trading || bySeller.size < 2) return undefined;
    const listings = prng.sample([...bySeller.values()], prng.int(2, 4));
    const sellers = new Set(listings.map((o) => o.offerer));
    const buyer = world.pickAccount(prng);
    if (sellers.has(buyer)) return undefined;
    let total = 0n;
    for (const listing of listings) {
      const c = world.erc721.get(listing.key) as Erc721Model;
      touched.add(tokenKey(c.contract, listing.tokenId));
      trading.seaportOrders.delete(listing.salt);
      deliver(ctx, c, listing.tokenId, buyer);
      total += listing.price;
    }
    counts.seaportSweeps++;
    counts.seaportSweptTokens += listings.length;
    return [
      callTx(
        buyer,
        marketContract(world, "seaport").address,
        "Seaport",
        "fulfillAvailableAdvancedOrders",
        fulfillAvailableArgs(listings, buyer),
        GAS.seaportPerOrder * BigInt(listings.length + 1),
        { value: total },
      ),
    ];
  }

  return { list, buy, offer, acceptOffer, sweep };
}
