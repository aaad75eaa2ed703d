/**
 * Per-key token buckets that may go into debt: a request needs one whole point to be let in and
 * takes it; what the answer cost beyond that point is charged once it is known, and a balance
 * below one point makes the key wait until the refill has paid the debt. Unlike a fixed window,
 * a bucket admits at most `burst` + `rate` × t points in any span of t seconds.
 */

export interface TokenBucketsOptions {
  /** Points added per second. */
  ratePerSecond: number;
  /** Points a full bucket holds: what a key may spend at once after a pause. */
  burst: number;
  /** The clock, in ms. */
  now?: () => number;
}

export type Take = { ok: true } | { ok: false; retryAfterMs: number };

export interface TokenBuckets {
  /** Takes one point from `key`'s bucket, or says how long until it holds one (whole ms, rounded up). */
  take(key: string): Take;
  /** Takes `points` more from `key`'s bucket, however low that leaves it. */
  charge(key: string, points: number): void;
  /** The buckets that are not full: the keys that spent points recently. */
  readonly size: number;
}

interface Bucket {
  points: number;
  /** When `points` was counted, in ms. */
  at: number;
}

/** How often buckets that refilled to full are dropped, in ms: a full bucket is the same as none. */
const SWEEP_MS = 60_000;

export function createTokenBuckets(options: TokenBucketsOptions): TokenBuckets {
  const { ratePerSecond, burst, now = Date.now } = options;
  if (!(ratePerSecond > 0 && Number.isFinite(ratePerSecond)))
    throw new RangeError("ratePerSecond must be positive");
  if (!(burst >= 1 && Number.isFinite(burst))) throw new RangeError("burst must be at least 1");
  const buckets = new Map<string, Bucket>();
  let sweptAt = now();

  /** `key`'s bucket refilled up to `t`. */
  function refilled(key: string, t: number): Bucket {
    const bucket = buckets.get(key);
    if (bucket === undefined) {
      const fresh = { points: burst, at: t };
      buckets.set(key, fresh);
      return fresh;
    }
    bucket.points = Math.min(burst, bucket.points + (Math.max(0, t - bucket.at) * ratePerSecond) / 1000);
    bucket.at = t;
    return bucket;
  }

  function sweep(t: number): void {
    if (t - sweptAt < SWEEP_MS) return;
    sweptAt = t;
    for (const [key, bucket] of buckets) {
      if (bucket.points + ((t - bucket.at) * ratePerSecond) / 1000 >= burst) buckets.delete(key);
    }
  }

  return {
    take(key) {
      const t = now();
      sweep(t);
      const bucket = refilled(key, t);
      // The refill is summed in floating point: a bucket a rounding error short of a point has it.
      if (bucket.points < 1 - 1e-9) {
        return { ok: false, retryAfterMs: Math.ceil(((1 - bucket.points) * 1000) / ratePerSecond) };
      }
      bucket.points -= 1;
      return { ok: true };
    },
    charge(key, points) {
      if (!(points > 0)) return;
      refilled(key, now()).points -= points;
    },
    get size() {
      return buckets.size;
    },
  };
}
