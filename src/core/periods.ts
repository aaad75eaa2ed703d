/**
 * The store's units of time: every rollup is kept in fifteen-minute buckets and summed per UTC day,
 * and every window and series is aligned to them.
 */

/** Seconds in one rollup bucket. */
export const BUCKET_SECONDS = 900;

/** Seconds in one day row. */
export const DAY_SECONDS = 86_400;

export function bucketStart(unixSeconds: number): number {
  return unixSeconds - (unixSeconds % BUCKET_SECONDS);
}

export function dayStart(unixSeconds: number): number {
  return unixSeconds - (unixSeconds % DAY_SECONDS);
}
