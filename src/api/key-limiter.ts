/**
 * A key's rate limit behind one interface, whether its points are counted in this process (token
 * buckets) or in a store every API process shares (rate-limiter-flexible's counters in Redis or
 * PostgreSQL). The guard asks it for a point per request and charges the answer's size after.
 */
import { BurstyRateLimiter, type RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import type { Take, TokenBuckets } from "./token-bucket.ts";

export interface KeyLimiter {
  /** Takes one point from `key`, or says how long until it may ask again. Throws when its store fails. */
  take(key: string): Promise<Take>;
  /** Takes `points` more from `key`, however far that overspends it. Throws when its store fails. */
  charge(key: string, points: number): Promise<void>;
}

/** Token buckets as a key limiter: the limit of one process. */
export function localKeyLimiter(buckets: TokenBuckets): KeyLimiter {
  return {
    async take(key) {
      return buckets.take(key);
    },
    async charge(key, points) {
      buckets.charge(key, points);
    },
  };
}

/**
 * How long a key's burst allowance lasts once spent, in whole seconds: ten times what a token
 * bucket takes to refill it, so a key that keeps asking gets at most a tenth more than its rate
 * from the burst (`burst` / this), while a key that paused has it back within seconds.
 */
export function burstWindowSeconds(ratePerSecond: number, burst: number): number {
  return Math.max(1, Math.ceil((10 * burst) / ratePerSecond));
}

/**
 * How long a key that overspent its second must wait, in whole seconds, or 0 when the end of its
 * window (`msBeforeNext` away) already pays the debt. A token bucket `consumed` − `rate` points in
 * debt refills in that many points' time; a fixed window forgets its count at its end, so a debt
 * larger than the window's rest is kept by blocking the key for that long.
 */
export function debtBlockSeconds(consumed: number, ratePerSecond: number, msBeforeNext: number): number {
  const debtMs = ((consumed - ratePerSecond) * 1000) / ratePerSecond;
  return debtMs > msBeforeNext ? Math.ceil(debtMs / 1000) : 0;
}

/**
 * Fixed-window counters of rate-limiter-flexible as a key limiter: `rate` counts `ratePerSecond`
 * points in each one-second window of a key, and `burst` lends up to its own points when a
 * window is spent (see `burstWindowSeconds`). Both count in the same store; their key prefixes
 * keep them apart.
 */
export function flexibleKeyLimiter(options: {
  rate: RateLimiterAbstract;
  burst: RateLimiterAbstract;
  ratePerSecond: number;
}): KeyLimiter {
  const { rate, ratePerSecond } = options;
  const bursty = new BurstyRateLimiter(rate, options.burst);
  return {
    async take(key) {
      try {
        await bursty.consume(key, 1);
        return { ok: true };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          return { ok: false, retryAfterMs: Math.max(1, Math.ceil(rejection.msBeforeNext)) };
        }
        throw rejection;
      }
    },
    async charge(key, points) {
      if (!(points > 0)) return;
      const counted = await rate.penalty(key, points);
      const seconds = debtBlockSeconds(counted.consumedPoints, ratePerSecond, counted.msBeforeNext);
      if (seconds > 0) await rate.block(key, seconds);
    },
  };
}
