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
export const GRID_BITS = 192n;
export const GRID = 1n << GRID_BITS;

export interface TimeWindow {
  /** Unix seconds; `from` may equal `to` (a window of nothing: the price at `to`). */
  from: number;
  to: number;
}

/** How a series of states is priced: exactly, and on the grid (floor(price · 2^192)). */
export interface PriceOf {
  exact(state: PoolState): Rate | undefined;
  grid(state: PoolState): bigint | undefined;
}

/** `sum / (2^192 · held)` in lowest terms, without a gcd of the large numbers. */
export function gridMean(sum: bigint, held: number): Rate {
  if (sum === 0n) return ratio(0n, 1n);
  // gcd(sum, 2^192·held) = gcd(sum, held_odd) · 2^min(twos(sum), 192 + twos(held)).
  let odd = BigInt(held);
  let twos = 0n;
  while ((odd & 1n) === 0n) {
    odd >>= 1n;
    twos++;
  }
  let a = sum % odd;
  let b = odd;
  while (a !== 0n) [a, b] = [b % a, a];
  const common = b;
  let num = sum / common;
  let shift = 0n;
  const maxShift = GRID_BITS + twos;
  while (shift < maxShift && (num & 1n) === 0n) {
    num >>= 1n;
    shift++;
  }
  return Object.freeze({ num, den: ((GRID << twos) * (odd / common)) >> shift });
}

/**
 * The time-weighted mean over `window` of the first `end` of `states` (chain order), counting
 * only the states `counts` admits. Undefined when no admitted state held any time of the window,
 * except for a pool with no state before `to` at all (new in that very block) and for an empty
 * window, which are read at their last state when `spot` allows it. One pass over the window's
 * states: what a floor that depends on other rates needs; `PriceSeries` answers the rest faster.
 */
export function timeWeighted(
  states: readonly PoolState[],
  end: number,
  price: PriceOf,
  counts: (state: PoolState) => boolean,
  window: TimeWindow | undefined,
  spot = true,
): Rate | undefined {
  const last = states[end - 1];
  if (last === undefined) return undefined;
  const atLast = () => (spot && counts(last) ? price.exact(last) : undefined);
  if (window === undefined || window.from >= window.to) return atLast();
  const { from, to } = window;
  let first: PoolState | undefined;
  let firstGrid = 0n;
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
    const q = price.grid(state);
    if (q === undefined) continue;
    if (first === undefined) {
      first = state;
      firstGrid = q;
    } else if (same && (q !== firstGrid || !sameExact(price, first, state))) same = false;
    sum += q * BigInt(seconds);
    held += seconds;
  }
  if (held === 0) return older ? undefined : atLast();
  if (same && first !== undefined) return price.exact(first);
  return gridMean(sum, held);
}

function sameExact(price: PriceOf, a: PoolState, b: PoolState): boolean {
  const x = price.exact(a);
  const y = price.exact(b);
  return x !== undefined && y !== undefined && x.num === y.num && x.den === y.den;
}

/**
 * The time-weighted means of one pool's price over any window, with a floor fixed per state:
 * prefix sums of price × seconds over the states, so a mean costs two binary searches whatever
 * the window's length. Answers exactly as `timeWeighted` does (a test holds them equal).
 */
export class PriceSeries {
  private readonly times: (number | undefined)[];
  private readonly grid: (bigint | undefined)[];
  private readonly counted: boolean[];
  /** sums[k], seconds[k]: over the whole segments of states before k (state i from its time to i+1's). */
  private readonly sums: bigint[];
  private readonly seconds: number[];
  /** The first counted state of the run of equal counted prices that ends at the last counted state ≤ i; -1 if none. */
  private readonly runStart: number[];
  /** The first counted state ≥ i; the length when none. */
  private readonly nextCounted: number[];

  constructor(
    private readonly states: readonly PoolState[],
    private readonly price: PriceOf,
    private readonly counts: (state: PoolState) => boolean,
  ) {
    const n = states.length;
    this.times = states.map((s) => s.blockTime);
    this.grid = states.map((s) => price.grid(s));
    this.counted = states.map((s, i) => this.grid[i] !== undefined && counts(s));
    this.sums = [0n];
    this.seconds = [0];
    this.runStart = [];
    let lastCounted = -1;
    let run = -1;
    for (let i = 0; i < n; i++) {
      const t = this.times[i];
      const next = this.times[i + 1];
      const span = t !== undefined && next !== undefined ? next - t : 0;
      const q = this.grid[i];
      const counted = this.counted[i] && span > 0;
      this.sums.push((this.sums[i] as bigint) + (counted ? (q as bigint) * BigInt(span) : 0n));
      this.seconds.push((this.seconds[i] as number) + (counted ? span : 0));
      if (this.counted[i]) {
        const previous = states[lastCounted];
        const equal =
          previous !== undefined &&
          this.grid[lastCounted] === q &&
          sameExact(price, previous, states[i] as PoolState);
        run = equal ? run : i;
        lastCounted = i;
      }
      this.runStart.push(lastCounted < 0 ? -1 : run);
    }
    this.nextCounted = new Array<number>(n + 1).fill(n);
    for (let i = n - 1; i >= 0; i--)
      this.nextCounted[i] = this.counted[i] ? i : (this.nextCounted[i + 1] as number);
  }

  /** The mean of the first `end` states over `window` (see `timeWeighted`). */
  mean(end: number, window: TimeWindow | undefined, spot = true): Rate | undefined {
    const { states } = this;
    const last = states[end - 1];
    if (last === undefined) return undefined;
    if (window === undefined || window.from >= window.to) {
      return spot && this.counted[end - 1] ? this.price.exact(last) : undefined;
    }
    const { from, to } = window;
    const a = anchorIndex(states, end, from);
    const ta = this.times[a];
    // Rows without a time sit before the window's anchor only just after an upgrade: one pass.
    if (ta === undefined) return timeWeighted(states, end, this.price, this.counts, window, spot);
    if (ta >= to) return spot && this.counted[end - 1] && a === 0 ? this.price.exact(last) : undefined;
    // The states from a on that start before `to`: those that hold some of the window.
    const stop = firstAtOrAfter(this.times, a, end, to);
    let sum = 0n;
    let held = 0;
    const add = (i: number, seconds: number) => {
      if (seconds > 0 && this.counted[i]) {
        sum += (this.grid[i] as bigint) * BigInt(seconds);
        held += seconds;
      }
    };
    if (stop - 1 === a) add(a, to - Math.max(ta, from));
    else {
      add(a, (this.times[a + 1] as number) - Math.max(ta, from));
      sum += (this.sums[stop - 1] as bigint) - (this.sums[a + 1] as bigint);
      held += (this.seconds[stop - 1] as number) - (this.seconds[a + 1] as number);
      add(stop - 1, to - (this.times[stop - 1] as number));
    }
    if (held === 0) return undefined;
    const firstCounted = this.nextCounted[a] as number;
    if ((this.runStart[stop - 1] as number) <= firstCounted) {
      return this.price.exact(states[firstCounted] as PoolState);
    }
    return gridMean(sum, held);
  }
}

/** The first index in [lo, hi) whose time is at or after `to`, else hi (times ascending there). */
function firstAtOrAfter(times: readonly (number | undefined)[], lo: number, hi: number, to: number): number {
  let l = lo;
  let h = hi;
  while (l < h) {
    const mid = (l + h) >>> 1;
    if ((times[mid] as number) < to) l = mid + 1;
    else h = mid;
  }
  return l;
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
