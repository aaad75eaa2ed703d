/**
 * The proceeds-returned wash rule: a seller who hands the money back. Wash traders pay with their
 * own money and get it back for the next round, straight to the buying wallet or to the wallet
 * that funded it. Pure: the indexer hands in the deal and the value flows after it.
 *
 * A deal is what one seller sold one buyer in one transaction (a bundle is one deal). Its proceeds
 * are returned when, within the hour after it, the seller sends at least half its price to:
 * - the buyer, in a later transaction that moved no NFT;
 * - an account that funded the buyer within the hour before the deal (and is not a hub: see
 *   `ownFunders`), in a later such transaction or in the deal's own transaction (a contract
 *   forwarding the proceeds as it is paid).
 * Value is the native coin and the native-pegged tokens, counted 1:1 like the funding. A seller
 * paying the buyer back within the same transaction is part of the trade (a swap), not a return.
 */
import type { Address } from "../core/hex.ts";
import type { ValueFlow } from "../core/types.ts";

/** How long after a deal its seller's payments are looked at. */
export const RETURN_LOOKAHEAD = { seconds: 3_600 } as const;

export interface Deal {
  seller: Address;
  buyer: Address;
  blockNumber: number;
  txIndex: number;
  /** Unix seconds of the deal's block. */
  time: number;
  /** The price of the deal's priced sales, in wei. */
  price: bigint;
  /** The buyer's own funders before the deal (`ownFunders`). */
  funders: ReadonlySet<Address>;
}

/** Whether `flow` hands part of the deal's proceeds back. */
export function returnsProceeds(deal: Deal, flow: ValueFlow): boolean {
  if (flow.from !== deal.seller || flow.to === deal.seller) return false;
  if (flow.blockNumber === deal.blockNumber && flow.txIndex === deal.txIndex)
    return flow.inTrade === true && deal.funders.has(flow.to);
  const after =
    flow.blockNumber > deal.blockNumber ||
    (flow.blockNumber === deal.blockNumber && flow.txIndex > deal.txIndex);
  return (
    after &&
    flow.inTrade !== true &&
    flow.time - deal.time <= RETURN_LOOKAHEAD.seconds &&
    (flow.to === deal.buyer || deal.funders.has(flow.to))
  );
}

/** Whether `returned` wei is enough of a deal's price to call it returned: half or more. */
export function returnedEnough(price: bigint, returned: bigint): boolean {
  return price > 0n && returned * 2n >= price;
}
