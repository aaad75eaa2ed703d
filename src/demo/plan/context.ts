/**
 * What every planner plans with. Planners plan realistic activity against the World model: every
 * planned transaction is valid at the point the node will execute it, given that transactions run
 * in the order they were planned (anvil orders transactions of equal fees by arrival, and a
 * sender's by nonce). As a margin, no token is touched twice within a block, so tokens never
 * depend on that ordering; only balances of ETH and the currencies, which are kept far above what
 * trades move, could.
 */
import type { TxRequest } from "../block-builder.ts";
import type { DemoContract } from "../contracts.ts";
import type { ActivityCounts } from "../counts.ts";
import type { Prng } from "../prng.ts";
import type { World } from "../world.ts";

export interface PlanContext {
  /** What the chain will hold once the planned transactions run; planners update it as they plan. */
  world: World;
  /** The one PRNG of a generation: every draw, in order, is part of what a seed means. */
  prng: Prng;
  counts: ActivityCounts;
}

/**
 * One user action: one to three transactions from the same sender, or undefined when it does not
 * apply now. `touched` holds the keys of the assets already used in the block being planned; an
 * action adds those it uses.
 */
export type Action = (touched: Set<string>) => TxRequest[] | undefined;

/** The key of a token of a contract in `touched`. */
export function tokenKey(contract: DemoContract, id: bigint): string {
  return `${contract.address}:${id}`;
}
