/**
 * Wash rules: which of a sale's parties are not independent of each other, from the token's recent
 * sales and who deployed the accounts involved. Pure: the indexer hands in what it read. Each rule
 * that fires is one flag on the sale; a flagged sale is stored and counted apart from the organic
 * figures (src/core/sale-classes.ts).
 */
import type { Address } from "../core/hex.ts";
import { WASH_RULES, type WashRule } from "../core/sale-classes.ts";

/** A sale of the token before this one, as the rules read it. */
export interface PastSale {
  seller: Address;
  buyer: Address;
  /** Unix seconds of its block. */
  time: number;
}

/**
 * How far back a token's sales are looked at for a cycle: its last `sales` sales within `seconds`.
 * A month covers the rotations wash traders run (hours to days apart) and leaves out a collector
 * buying a token back months later.
 */
export const CYCLE_LOOKBACK = { sales: 8, seconds: 30 * 86_400 } as const;

export interface WashInput {
  seller: Address;
  buyer: Address;
  time: number;
  /** The token's earlier sales, oldest first (at most `CYCLE_LOOKBACK.sales` are read). */
  history: readonly PastSale[];
  /** Who deployed an account, for the accounts that are contracts (the deploying transaction's sender). */
  deployerOf: (account: Address) => Address | undefined;
}

export function washRules(input: WashInput): WashRule[] {
  const rules: WashRule[] = [];
  if (cycles(input)) rules.push(WASH_RULES.cycle);
  if (selfTrade(input)) rules.push(WASH_RULES.self);
  return rules;
}

/**
 * The token comes back to an account that sold it in its recent sales: A→B→A, A→B→C→A and longer
 * rotations. A sale to a new account, or back to a holder of long ago, is not a cycle.
 */
function cycles({ buyer, time, history }: WashInput): boolean {
  const recent = history.slice(-CYCLE_LOOKBACK.sales);
  return recent.some((s) => s.seller === buyer && time - s.time <= CYCLE_LOOKBACK.seconds);
}

/**
 * Buyer and seller are one owner: one deployed the other (a trader's own contract buying from its
 * wallet, or selling to it). Two contracts deployed by one sender are not taken as one owner:
 * smart-account wallets are deployed by bundlers and relayers for many unrelated users.
 */
function selfTrade({ seller, buyer, deployerOf }: WashInput): boolean {
  return deployerOf(buyer) === seller || deployerOf(seller) === buyer;
}
