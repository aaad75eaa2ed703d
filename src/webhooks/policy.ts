/**
 * When a failing subscription is tried again, and when it is paused. Pure: the caller gives the
 * time and the randomness.
 */

export interface RetryPolicy {
  /** Wait after the first failure; each failure after it doubles the wait, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Paused after at least this many failures in a row ... */
  pauseFailures: number;
  /** ... that went on for at least this long. */
  pauseAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 1000,
  maxDelayMs: 10 * 60_000,
  pauseFailures: 20,
  pauseAfterMs: 60 * 60_000,
};

/**
 * The wait before attempt `failures + 1`, after `failures` (at least 1) failures in a row: the
 * doubling wait, of which a random part of up to a half is taken off, so that targets which failed
 * together do not all come back together. `random` is in [0, 1).
 */
export function retryDelay(policy: RetryPolicy, failures: number, random: number): number {
  const doublings = Math.min(Math.max(failures - 1, 0), 40);
  const full = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** doublings);
  return Math.round(full * (1 - random / 2));
}

export interface FailureOutcome {
  /** The first failure of this run of failures. */
  failingSince: Date;
  retryAt: Date;
  /** Why the subscription is paused, when it is. */
  pause: string | undefined;
}

/**
 * What follows a failed attempt, given the failures in a row before it and when they began: paused
 * once there are at least `pauseFailures` and the first is at least `pauseAfterMs` old, else tried
 * again after `retryDelay`.
 */
export function afterFailure(
  policy: RetryPolicy,
  previous: { failures: number; failingSince: Date | undefined },
  now: Date,
  random: number,
): FailureOutcome {
  const failures = previous.failures + 1;
  const failingSince = previous.failingSince ?? now;
  const failingMs = now.getTime() - failingSince.getTime();
  const retryAt = new Date(now.getTime() + retryDelay(policy, failures, random));
  if (failures >= policy.pauseFailures && failingMs >= policy.pauseAfterMs) {
    return {
      failingSince,
      retryAt,
      pause: `${failures} failures in a row over ${formatDuration(failingMs)}`,
    };
  }
  return { failingSince, retryAt, pause: undefined };
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
