/**
 * How long the live event stream keeps its events (`--stream-retention <days>` on `mintlens index`
 * and `mintlens start`, env MINTLENS_STREAM_RETENTION): a consumer away for longer than this can no
 * longer resume where it stopped.
 */
import type { Variables } from "./environment.ts";

export interface StreamConfigInput {
  streamRetention?: string;
}

export const DEFAULT_STREAM_RETENTION_DAYS = 7;
/** Ten years: past it a figure is a mistake rather than a wish. */
const MAX_STREAM_RETENTION_DAYS = 3650;

/**
 * Days of events kept; a fraction of a day is allowed (`0.5` keeps twelve hours). A value that is
 * not one adds a problem naming the flag, and the default stands in for it.
 */
export function parseStreamRetention(input: StreamConfigInput, env: Variables, problems: string[]): number {
  const raw = input.streamRetention ?? env.MINTLENS_STREAM_RETENTION;
  if (raw === undefined) return DEFAULT_STREAM_RETENTION_DAYS;
  const text = raw.trim();
  const days = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(days > 0 && days <= MAX_STREAM_RETENTION_DAYS)) {
    problems.push(
      `stream retention (--stream-retention / MINTLENS_STREAM_RETENTION): ${raw} is not a number of days above 0 and at most ${MAX_STREAM_RETENTION_DAYS}`,
    );
    return DEFAULT_STREAM_RETENTION_DAYS;
  }
  return days;
}
