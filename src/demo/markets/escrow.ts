/**
 * The escrow market and its aggregator: listings in ETH of one token, a bundle of one collection
 * or a bundle across collections; purchases, a quarter of them overpaid and the change refunded in
 * the same transaction; and two or three listings of different sellers swept through the
 * aggregator, which buys them, passes the NFTs on and refunds the margin it was sent.
 */
import { type Address, ZERO_ADDRESS } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, type Erc721Key, GAS } from "../contracts.ts";
import { type PlanContext, tokenKey } from "../plan/context.ts";
import type { Erc721Model, EscrowListing } from "../world.ts";
import { anyHeldToken, approveOperator, ethPrice, marketContract } from "./trade.ts";

export function createEscrowPlanner(ctx: PlanContext) {
  const { world, prng, counts } = ctx;

  /** One token, a bundle of one collection, or a bundle across collections, for ETH. */
  function list(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    const first = trading && anyHeldToken(ctx, touched);
    if (!trading || !first) return undefined;
    const escrow = marketContract(world, "escrow");
    const items = [{ c: first.c, id: first.id }];
    if (prng.chance(0.4)) {
      // More of the seller's tokens, of this collection or, half the time, of any.
      const across = prng.chance(0.5);
      const wanted = prng.int(1, 2);
      for (const c of across ? [...world.erc721.values()] : [first.c]) {
        for (const id of c.held.values()) {
          if (items.length > wanted) break;
          if (c.owners.get(id) !== first.owner || touched.has(tokenKey(c.contract, id))) continue;
          if (across && c === first.c) continue;
          touched.add(tokenKey(c.contract, id));
          items.push({ c, id });
        }
      }
    }
    const id = trading.nextEscrowListing++;
    const price = ethPrice(prng);
    trading.escrowListings.set(id, {
      id,
      seller: first.owner,
      items: items.map((i) => ({ key: i.c.key, id: i.id })),
      price,
    });
    counts.escrowListings++;
    if (items.length > 1) counts.escrowBundles++;
    const approvals = [...new Set(items.map((i) => i.c))].flatMap((c) =>
      approveOperator(ctx, c, first.owner, escrow.address),
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

  /** Whether `owner` still holds the token and it is free in this block. */
  function available(key: Erc721Key, id: bigint, owner: Address, touched: Set<string>): boolean {
    const c = world.erc721.get(key);
    return c !== undefined && c.owners.get(id) === owner && !touched.has(tokenKey(c.contract, id));
  }

  /** Escrow listings whose tokens are all still their seller's and free in this block. */
  function openListings(touched: Set<string>): EscrowListing[] {
    const trading = world.trading;
    if (!trading) return [];
    return [...trading.escrowListings.values()].filter((l) => {
      const ok = l.items.every((i) => world.erc721.get(i.key)?.owners.get(i.id) === l.seller);
      if (!ok) trading.escrowListings.delete(l.id);
      return ok && l.items.every((i) => available(i.key, i.id, l.seller, touched));
    });
  }

  /**
   * The listing's tokens to the buyer: `hops` Transfer logs each, one from the market, or two
   * when the aggregator buys them and passes them on.
   */
  function take(listing: EscrowListing, buyer: Address, touched: Set<string>, hops: number): void {
    world.trading?.escrowListings.delete(listing.id);
    for (const item of listing.items) {
      const c = world.erc721.get(item.key) as Erc721Model;
      touched.add(tokenKey(c.contract, item.id));
      c.setOwner(item.id, buyer, world.accountSet);
      counts.nftTradeTransfers += hops;
    }
  }

  /** Buys a listing; a quarter of buyers send too much and get the change back. */
  function buy(touched: Set<string>): TxRequest[] | undefined {
    const open = openListings(touched);
    if (open.length === 0) return undefined;
    const listing = prng.pick(open);
    const buyer = world.pickAccount(prng, listing.seller);
    const overpaid = prng.chance(0.25);
    const value = overpaid ? listing.price + (listing.price * BigInt(prng.int(5, 30))) / 100n : listing.price;
    take(listing, buyer, touched, 1);
    counts.escrowSales++;
    if (overpaid) counts.escrowRefunds++;
    return [
      callTx(
        buyer,
        marketContract(world, "escrow").address,
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
  function sweep(touched: Set<string>): TxRequest[] | undefined {
    const bySeller = new Map<Address, EscrowListing>();
    for (const l of openListings(touched)) if (l.items.length === 1) bySeller.set(l.seller, l);
    if (bySeller.size < 2) return undefined;
    const chosen = prng.sample([...bySeller.entries()], prng.int(2, 3));
    const buyer = world.pickAccount(prng);
    if (chosen.some(([seller]) => seller === buyer)) return undefined;
    let total = 0n;
    for (const [, listing] of chosen) {
      take(listing, buyer, touched, 2);
      total += listing.price;
    }
    counts.escrowSweeps++;
    return [
      callTx(
        buyer,
        marketContract(world, "aggregator").address,
        "SweepAggregator",
        "sweep",
        [marketContract(world, "escrow").address, chosen.map(([, l]) => l.id)],
        GAS.sweepPerListing * BigInt(chosen.length),
        // Sent with a margin, which the aggregator refunds.
        { value: total + total / 20n },
      ),
    ];
  }

  return { list, buy, sweep };
}
