/**
 * Wash rules: which of a sale's parties are not independent of each other, from the token's recent
 * sales, who deployed the accounts involved and who sent them value shortly before. Pure: the
 * indexer hands in what it read. Each rule that fires is one flag on the sale; a flagged sale is
 * stored and counted apart from the organic figures (src/core/sale-classes.ts).
 */
import type { Address } from "../core/hex.ts";
import { WASH_RULES, type WashRule } from "../core/sale-classes.ts";
import type { PastSale, ValueFlow } from "../core/types.ts";

export type { PastSale };

/**
 * How far back a token's sales are looked at for a cycle: its last `sales` sales within `seconds`.
 * A month covers the rotations wash traders run (hours to days apart) and leaves out a collector
 * buying a token back months later.
 */
export const CYCLE_LOOKBACK = { sales: 8, seconds: 30 * 86_400 } as const;

/**
 * How far back value sent to a sale's parties is looked at for a common funder, and how many
 * accounts a funder may have sent value to in that time and still be taken as one party's own.
 * Wash traders fund their wallets minutes to hours before trading; exchange hot wallets, bridges
 * and routers send to hundreds of accounts an hour and must not tie their customers together.
 */
export const FUNDING_LOOKBACK = { seconds: 3_600 } as const;
export const MAX_FANOUT = 10;

/**
 * The value flows of transactions that moved no NFT, as the rules read them: each account's
 * incoming and outgoing flows in chain order. It may hold flows after the sale or older than the
 * lookback; the rule reads only those strictly before the sale and within the lookback.
 */
export interface FundingFlows {
  into(account: Address): readonly ValueFlow[];
  outOf(account: Address): readonly ValueFlow[];
}

export interface WashInput {
  seller: Address;
  buyer: Address;
  time: number;
  /** The sale's position: only flows strictly before it count as funding. */
  blockNumber: number;
  txIndex: number;
  /** The token's earlier sales, oldest first (at most `CYCLE_LOOKBACK.sales` are read). */
  history: readonly PastSale[];
  /** Who deployed an account, for the accounts that are contracts (the deploying transaction's sender). */
  deployerOf: (account: Address) => Address | undefined;
  /** Value sent shortly before the sale; absent, the funder rule reads nothing. */
  funding?: FundingFlows;
}

export function washRules(input: WashInput): WashRule[] {
  const rules: WashRule[] = [];
  if (cycleLegs(input).length > 0) rules.push(WASH_RULES.cycle);
  if (selfTrade(input)) rules.push(WASH_RULES.self);
  if (commonFunder(input)) rules.push(WASH_RULES.funder);
  return rules;
}

/**
 * The token comes back to an account that sold it in its recent sales: A→B→A, A→B→C→A and longer
 * rotations. A sale to a new account, or back to a holder of long ago, is not a cycle. The earlier
 * legs of the cycle are the token's sales from the buyer's latest sale of it on, oldest first (none
 * when the sale closes no cycle): each of them is as much a wash as the leg that closes it.
 */
export function cycleLegs({
  buyer,
  time,
  history,
}: Pick<WashInput, "buyer" | "time" | "history">): PastSale[] {
  const recent = history.slice(-CYCLE_LOOKBACK.sales);
  for (let k = recent.length - 1; k >= 0; k--) {
    const s = recent[k] as PastSale;
    if (time - s.time > CYCLE_LOOKBACK.seconds) break;
    if (s.seller === buyer) return recent.slice(k);
  }
  return [];
}

/**
 * Buyer and seller are one owner: one deployed the other (a trader's own contract buying from its
 * wallet, or selling to it). Two contracts deployed by one sender are not taken as one owner:
 * smart-account wallets are deployed by bundlers and relayers for many unrelated users.
 */
function selfTrade({ seller, buyer, deployerOf }: WashInput): boolean {
  return deployerOf(buyer) === seller || deployerOf(seller) === buyer;
}

/**
 * The buyer's money came from the seller, or both were funded by one account that funds few others,
 * within the lookback before the sale. A hub (more than MAX_FANOUT recipients in the lookback) is
 * not taken as a common owner.
 */
function commonFunder(input: WashInput): boolean {
  const { seller, buyer, funding } = input;
  if (!funding || seller === buyer) return false;
  const counts = fundingBefore(input);
  const buyerFunders = new Set<Address>();
  for (const f of funding.into(buyer)) {
    if (!counts(f)) continue;
    if (f.from === seller) return true;
    buyerFunders.add(f.from);
  }
  if (buyerFunders.size === 0) return false;
  const checked = new Set<Address>();
  for (const f of funding.into(seller)) {
    if (f.from === buyer || !buyerFunders.has(f.from) || checked.has(f.from) || !counts(f)) continue;
    checked.add(f.from);
    if (!isHub(funding.outOf(f.from), counts)) return true;
  }
  return false;
}

/** Whether a flow is funding for a sale at `at`: between two accounts, within the lookback, strictly before it. */
function fundingBefore(at: { time: number; blockNumber: number; txIndex: number }) {
  return (f: ValueFlow) =>
    f.from !== f.to &&
    at.time - f.time <= FUNDING_LOOKBACK.seconds &&
    (f.blockNumber < at.blockNumber || (f.blockNumber === at.blockNumber && f.txIndex < at.txIndex));
}

const NO_FUNDERS: ReadonlySet<Address> = new Set();

/**
 * The accounts that sent `account` value within the lookback before a sale at `at` and are not hubs:
 * those that may be its owner's other wallets. An exchange or a bridge paying out is left out.
 */
export function ownFunders(
  account: Address,
  at: { time: number; blockNumber: number; txIndex: number },
  funding: FundingFlows,
): ReadonlySet<Address> {
  const received = funding.into(account);
  if (received.length === 0) return NO_FUNDERS;
  const counts = fundingBefore(at);
  const funders = new Set<Address>();
  const hubs = new Set<Address>();
  for (const f of received) {
    if (!counts(f) || funders.has(f.from) || hubs.has(f.from)) continue;
    if (isHub(funding.outOf(f.from), counts)) hubs.add(f.from);
    else funders.add(f.from);
  }
  return funders;
}

function isHub(sent: readonly ValueFlow[], counts: (f: ValueFlow) => boolean): boolean {
  const recipients = new Set<Address>();
  for (const f of sent) {
    if (!counts(f)) continue;
    recipients.add(f.to);
    if (recipients.size > MAX_FANOUT) return true;
  }
  return false;
}
