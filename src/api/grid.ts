/**
 * The bucket grid of a time series: which points a request for (duration, period, timestampLt)
 * returns, and which of the store's fifteen-minute buckets each point counts. Pure: the current
 * time is handed in.
 *
 *   timestampLt (exclusive; default: the start of the current UTC day)
 *                                                          │
 *   ──┬────────────┬────────────┬─── … ───┬────────────┬───┼────────┬──
 *     │  point 0   │  point 1   │         │ point n-1  │   ·        │
 *     └ start                                          └ last start: the period holding the instant just before timestampLt
 *     │◄──────────────────── data counted ─────────────────►│
 *                                                       end: timestampLt rounded down to 15 minutes
 *
 * - Points are aligned to period boundaries in UTC (every period divides a day, and the epoch is
 *   a UTC midnight), ascending, exactly duration / period of them, each stamped with its start.
 * - The last point is the period that holds the instant just before timestampLt. When
 *   timestampLt is not on a period boundary, the last point is partial: it counts only what
 *   happened before timestampLt.
 * - The store keeps fifteen-minute buckets and cannot split one, so the data counted ends at the
 *   last fifteen-minute boundary at or before timestampLt: [start, end). That is exactly
 *   [start, timestampLt) whenever timestampLt is on a fifteen-minute boundary (the default, and
 *   any multiple of the period); otherwise the last, incomplete fifteen minutes are left out,
 *   never anything at or after timestampLt.
 */
import { InvalidArgumentError } from "./errors.ts";
import {
  checkSeriesShape,
  type Duration,
  FIELD,
  type GroupByPeriod,
  type Instant,
  MIN_SECONDS,
  type SeriesShape,
} from "./params.ts";

/** The store's bucket length (`collection_buckets.bucket_start`). */
export const STORE_BUCKET_SECONDS = 900;

export interface GridPoint {
  /** The bucket's start, in seconds since the epoch: the point's timestamp. */
  start: number;
  /** The end of what it counts (exclusive): its period's end, or the grid's `end` for the last point. */
  dataEnd: number;
}

export interface SeriesGrid {
  shape: SeriesShape;
  /** The exclusive end asked for, or the start of the current UTC day. */
  timestampLt: Instant;
  /** The first point's start: the start of the data counted. */
  start: number;
  /** The exclusive end of the data counted, on a fifteen-minute boundary. */
  end: number;
  /** Exactly `shape.points` points, ascending, `shape.periodSeconds` apart. */
  points: GridPoint[];
}

const floorDiv = (a: number, b: number) => Math.floor(a / b);

/** The start of the UTC day holding `now` (a Date, or milliseconds since the epoch). */
export function startOfUtcDay(now: Date | number): Instant {
  const ms = typeof now === "number" ? now : now.getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`invalid time: ${String(now)}`);
  return { seconds: floorDiv(floorDiv(ms, 1000), 86_400) * 86_400, nanos: 0 };
}

/**
 * The grid of a series. Throws an InvalidArgumentError naming `group_by_period` for a period
 * longer than the duration or more than 10,000 points, and naming `timestamp_lt` when the series
 * would start before 0001-01-01T00:00:00Z.
 */
export function seriesGrid(request: {
  duration: Duration;
  period: GroupByPeriod;
  timestampLt?: Instant | undefined;
  now: Date | number;
}): SeriesGrid {
  const shape = checkSeriesShape(request.duration, request.period);
  const timestampLt = request.timestampLt ?? startOfUtcDay(request.now);
  const { periodSeconds, points: count } = shape;
  // The whole second holding the instant just before timestampLt.
  const lastSecond = timestampLt.nanos > 0 ? timestampLt.seconds : timestampLt.seconds - 1;
  const lastStart = floorDiv(lastSecond, periodSeconds) * periodSeconds;
  const start = lastStart - (count - 1) * periodSeconds;
  if (start < MIN_SECONDS) {
    throw new InvalidArgumentError(FIELD.timestampLt, "too early: the series would start before year 0001");
  }
  const end = floorDiv(timestampLt.seconds, STORE_BUCKET_SECONDS) * STORE_BUCKET_SECONDS;
  const points: GridPoint[] = [];
  for (let i = 0; i < count; i++) {
    const pointStart = start + i * periodSeconds;
    points.push({ start: pointStart, dataEnd: Math.min(pointStart + periodSeconds, end) });
  }
  return { shape, timestampLt, start, end, points };
}

/** The index of the point that counts the store bucket starting at `bucketStart` (seconds), if any. */
export function pointOf(grid: SeriesGrid, bucketStart: number): number | undefined {
  if (bucketStart < grid.start || bucketStart >= grid.end) return undefined;
  return floorDiv(bucketStart - grid.start, grid.shape.periodSeconds);
}

/** The starts (seconds) of the store's fifteen-minute buckets a point counts, ascending. */
export function storeBucketStarts(point: GridPoint): number[] {
  const starts: number[] = [];
  for (let t = point.start; t < point.dataEnd; t += STORE_BUCKET_SECONDS) starts.push(t);
  return starts;
}
