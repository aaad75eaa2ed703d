import type { PoolState } from "../core/types.ts";
import { type Rate, ratio } from "./rational.ts";

/**
 * A pool's price averaged over time, from the states it was left in block after block.
 *
 *   time ──────────────[from ─────────────────────────────── to]
 *   states   s0 ──────────────── s1 ────── s2 ─────────────── s3
 *   weight   (s0: from → s1)    (s1 → s2)  (s2 → s3)           s3: 0
 *
 * Each state holds from its block's time until the next state's. The state a block leaves its
 * pool in therefore weighs nothing in that block's own rate, and a price pushed at the end of a
 * block and pushed back in the next weighs only the seconds between the two blocks. A state
 * without a time (stored before block times were kept) is older than any window: it holds from
 * the window's start until the next state.
 *
 * Exact when the window saw one price; otherwise each price is put on a grid of 2^-192 (where
 * every V3 price already lies), rounded down, so the mean stays as small as one price and is never
 * above the true mean.
 */
const GRID = 1n << 192n;

export interface TimeWindow {
  /** Unix seconds; `from` may equal `to` (a window of nothing: the price at `to`). */
  from: number;
  to: number;
}

/**
 * The time-weighted mean over `window` of `price` of the first `end` of `states` (chain order),
 * counting only the states `counts` admits. Undefined when no admitted state held any time of
 * the window, except for a pool with no state before `to` at all (new in that very block) and for
 * an empty window, which are read at their last state when `spot` allows it.
 */
export function timeWeighted(
  states: readonly PoolState[],
  end: number,
  price: (state: PoolState) => Rate | undefined,
  counts: (state: PoolState) => boolean,
  window: TimeWindow | undefined,
  spot = true,
): Rate | undefined {
  const last = states[end - 1];
  if (last === undefined) return undefined;
  const atLast = () => (spot && counts(last) ? price(last) : undefined);
  if (window === undefined || window.from >= window.to) return atLast();
  const { from, to } = window;
  let first: Rate | undefined;
  let same = true;
  let sum = 0n;
  let held = 0;
  let older = false;
  for (let i = anchorIndex(states, end, from); i < end; i++) {
    const state = states[i] as PoolState;
    const since = state.blockTime ?? Number.NEGATIVE_INFINITY;
    if (since < to) older = true;
    const until = i + 1 < end ? ((states[i + 1] as PoolState).blockTime ?? from) : to;
    const seconds = Math.min(until, to) - Math.max(since, from);
    if (seconds <= 0 || !counts(state)) continue;
    const p = price(state);
    if (p === undefined) continue;
    if (first === undefined) first = p;
    else if (same && (p.num !== first.num || p.den !== first.den)) same = false;
    sum += ((p.num * GRID) / p.den) * BigInt(seconds);
    held += seconds;
  }
  if (held === 0) return older ? undefined : atLast();
  if (same && first !== undefined) return first;
  return ratio(sum, GRID * BigInt(held));
}

/**
 * The last of the first `end` states that started at or before `from` (the one in force when the
 * window opens), or 0. Block times never decrease along the chain, and rows without a time come
 * before every row with one, so a binary search finds it.
 */
export function anchorIndex(states: readonly PoolState[], end: number, from: number): number {
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = (states[mid] as PoolState).blockTime;
    if (t === undefined || t <= from) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 1);
}

/** How many of `states` (chain order) are at or before `block`. */
export function countUpTo(states: readonly PoolState[], block: number): number {
  let lo = 0;
  let hi = states.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((states[mid] as PoolState).blockNumber <= block) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
