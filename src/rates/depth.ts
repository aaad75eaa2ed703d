import type { PoolState } from "../core/types.ts";
import type { PoolDescription } from "./pools.ts";

const Q96 = 1n << 96n;

/**
 * What one side of a pool holds at a state, in that token's base units: a V2 pair's reserve, or a
 * V3 pool's in-range virtual reserve (L·2^96/√P of token0, L·√P/2^96 of token1: what a V2 pair of
 * the same price and depth would hold). Undefined when the state does not tell (a V3 row stored
 * before liquidity was kept).
 *
 * The V3 figure overstates what a narrow range can absorb, and a Mint or Burn between two swaps
 * changes it unseen until the next `Swap`; it still tells a pool pushed past its liquidity (0 in
 * range) from one that holds the market.
 */
export function sideDepth(pool: PoolDescription, state: PoolState, side: 0 | 1): bigint | undefined {
  if (pool.kind === "v2") return side === 0 ? state.reserve0 : state.reserve1;
  const { liquidity, sqrtPriceX96 } = state;
  if (liquidity === undefined || sqrtPriceX96 === undefined || sqrtPriceX96 === 0n) return undefined;
  return side === 0 ? (liquidity * Q96) / sqrtPriceX96 : (liquidity * sqrtPriceX96) / Q96;
}
