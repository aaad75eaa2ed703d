/**
 * The trailing windows rankings are kept for, and how a window is read from the rollups. A window
 * ends at the end of the fifteen-minute bucket that holds the newest indexed block: while the
 * indexer follows the head that is the current bucket, and every answer reflects one state of the
 * data, whichever process or replica serves it.
 */
import { BUCKET_SECONDS, bucketStart, DAY_SECONDS } from "../core/periods.ts";

/** Seconds of each ranked window: an hour, a day, a week, 30 days and a year. */
export const RANKING_WINDOWS: readonly number[] = [3_600, 86_400, 7 * 86_400, 30 * 86_400, 365 * 86_400];

/** The end of the windows once the block at `time` (Unix seconds) is indexed. */
export function windowEndAt(time: number): number {
  return bucketStart(time) + BUCKET_SECONDS;
}

/**
 * A window [from, to) on bucket boundaries, split into the whole days inside it (read from the day
 * rows) and the buckets at its two edges, so that a year costs at most 365 + 2 × 95 rows per
 * collection. Either edge, or the days, may be empty.
 */
export interface WindowParts {
  dayFrom: number;
  dayTo: number;
  /** The buckets before the first whole day, and after the last. */
  head: { from: number; to: number };
  tail: { from: number; to: number };
}

export function windowParts(from: number, to: number): WindowParts {
  if (from % BUCKET_SECONDS !== 0 || to % BUCKET_SECONDS !== 0 || to < from) {
    throw new RangeError(`a window runs between fifteen-minute boundaries, not ${from}..${to}`);
  }
  const dayFrom = Math.ceil(from / DAY_SECONDS) * DAY_SECONDS;
  const dayTo = Math.max(dayFrom, Math.floor(to / DAY_SECONDS) * DAY_SECONDS);
  return {
    dayFrom,
    dayTo,
    head: { from, to: Math.min(dayFrom, to) },
    tail: { from: Math.max(dayTo, from), to },
  };
}

/**
 * How the windows move from ending at `from` to ending at `to`: per window, either the buckets that
 * leave it at its start (the buckets entering at its end hold only the new batch's sales), or a
 * recount from the rollups when it moved by its whole length or more, or backwards, or had no end yet.
 */
export type WindowMove =
  | { seconds: number; kind: "slide"; leaving: { from: number; to: number } }
  | { seconds: number; kind: "recount" };

export function windowMoves(from: number | undefined, to: number): WindowMove[] {
  return RANKING_WINDOWS.map((seconds): WindowMove => {
    if (from === undefined || to < from || to - from >= seconds) return { seconds, kind: "recount" };
    return { seconds, kind: "slide", leaving: { from: from - seconds, to: to - seconds } };
  });
}
