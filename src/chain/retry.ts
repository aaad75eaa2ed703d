/** Longest single wait, whatever the attempt number or the node's Retry-After says. */
export const MAX_DELAY_MS = 30_000;

/**
 * Exponential backoff with "equal jitter": half the delay is fixed so waits keep growing,
 * half is random so clients that failed together do not come back together.
 */
export function backoffDelay(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + (exponential / 2) * random());
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.min(MAX_DELAY_MS, Math.round(Number(text) * 1000));
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.min(MAX_DELAY_MS, Math.max(0, date - nowMs));
}
