/**
 * What every API request passes before its operation runs, over either protocol: its address's
 * share of failed authentications, a valid key, then the key's share of the rate limit; and what
 * the answer costs the key once it is known. One guard serves every chain and both protocols of a
 * process, so a key's limit (and an address's failures) is shared by all of them.
 */
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { ResourceExhaustedError, UnauthenticatedError, unavailable } from "./errors.ts";
import { type KeyLimiter, localKeyLimiter } from "./key-limiter.ts";
import type { KeyVerifier } from "./key-verifier.ts";
import { addressGroup } from "./remote-address.ts";
import { createTokenBuckets } from "./token-bucket.ts";

export interface Caller {
  userName: string;
  keyId: string;
  /** Charges the key for an answer of `bytes` (its JSON), beyond the point its admission took. */
  charge(bytes: number): void;
  /**
   * Waits until the key has a point and takes it, as a request's admission does: a stream pays a
   * point for each batch it sends, then `charge`s its size. Resolves early when `signal` aborts.
   */
  acquire(signal: AbortSignal): Promise<void>;
}

export interface Guard {
  /**
   * The caller of a request presenting `key` from the address `remote` (undefined when the
   * transport tells none); throws UNAUTHENTICATED, RESOURCE_EXHAUSTED or UNAVAILABLE.
   */
  admit(key: string | undefined, remote: string | undefined): Promise<Caller>;
}

export interface GuardOptions {
  keys: KeyVerifier;
  /** Points per second per key; 0 turns the limit off. */
  pointsPerSecond: number;
  /** Points a key may spend at once after a pause. Default 10. */
  burst?: number;
  /** Failed authentications per minute per address (IPv4) or /64 (IPv6); 0 turns the limit off. Default 20. */
  failedAuthenticationsPerMinute?: number;
  /**
   * Where keys' points are counted (see `rate-limit-store.ts`); default token buckets in this
   * process's memory, made of `pointsPerSecond`, `burst` and `now`.
   */
  limiter?: KeyLimiter;
  /** The clock of the in-memory rate limit, in ms. */
  now?: () => number;
}

export const DEFAULT_POINTS_PER_SECOND = 30;
export const DEFAULT_BURST = 10;
export const DEFAULT_FAILED_AUTHENTICATIONS_PER_MINUTE = 20;

/** The answer size one point buys, in bytes. */
export const BYTES_PER_POINT = 64 * 1024;

/**
 * What an answer of `bytes` costs, in points: one per started 64 KiB, at least one. The size of
 * the JSON stands for the work: reading the rows, writing them out and sending them grow with it,
 * and it is known without any further measure (the response cache keeps it).
 */
export function answerCost(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / BYTES_PER_POINT));
}

/** Waits `ms`, or less when `signal` aborts. */
function waitFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

const TOO_MANY_FAILURES = "too many failed authentications from this address; retry later";

export function createGuard(options: GuardOptions): Guard {
  const limiter =
    options.pointsPerSecond > 0
      ? (options.limiter ??
        localKeyLimiter(
          createTokenBuckets({
            ratePerSecond: options.pointsPerSecond,
            burst: options.burst ?? DEFAULT_BURST,
            ...(options.now ? { now: options.now } : {}),
          }),
        ))
      : undefined;
  const failuresAllowed = options.failedAuthenticationsPerMinute ?? DEFAULT_FAILED_AUTHENTICATIONS_PER_MINUTE;
  // A minute's window, and a block for a whole minute from the failure that went over it. Counted
  // in each process's memory whatever the key limit's store: an address refused costs no store
  // round trip, and an attacker spreading over N processes gets N times 20 guesses a minute at
  // keys of 2^128 possibilities, which changes nothing.
  const failures =
    failuresAllowed > 0
      ? new RateLimiterMemory({ points: failuresAllowed, duration: 60, blockDuration: 60 })
      : undefined;

  async function countFailure(group: string): Promise<void> {
    if (failures === undefined) return;
    try {
      await failures.consume(group);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        throw new ResourceExhaustedError(rejection.msBeforeNext / 1000, TOO_MANY_FAILURES);
      }
      throw rejection;
    }
  }

  return {
    async admit(key, remote) {
      const group = addressGroup(remote ?? "unknown");
      if (failures !== undefined) {
        // Before the key is looked at: a blocked address costs a map lookup, nothing more.
        const counted = await failures.get(group);
        if (counted !== null && counted.consumedPoints > failuresAllowed && counted.msBeforeNext > 0) {
          throw new ResourceExhaustedError(counted.msBeforeNext / 1000, TOO_MANY_FAILURES);
        }
      }
      let check: Awaited<ReturnType<KeyVerifier["verify"]>>;
      try {
        check = await options.keys.verify(key);
      } catch (error) {
        throw unavailable(error);
      }
      if (!check.ok) {
        await countFailure(group);
        throw check.reason === "missing"
          ? new UnauthenticatedError()
          : new UnauthenticatedError("the API key is not valid");
      }
      const { keyId, userName } = check;
      if (limiter !== undefined) {
        const taken = await limiter.take(keyId);
        if (!taken.ok) throw new ResourceExhaustedError(taken.retryAfterMs / 1000);
      }
      return {
        userName,
        keyId,
        charge(bytes) {
          const more = answerCost(bytes) - 1;
          // The answer is sent meanwhile: the next request of the key finds the charge in place
          // in memory at once, in a shared store a round trip later.
          if (limiter !== undefined && more > 0) limiter.charge(keyId, more).catch(() => {});
        },
        async acquire(signal) {
          if (limiter === undefined) return;
          while (!signal.aborted) {
            let taken: Awaited<ReturnType<KeyLimiter["take"]>>;
            try {
              taken = await limiter.take(keyId);
            } catch {
              // A store that fails lets the batch through: a stream never drops events for it.
              return;
            }
            if (taken.ok) return;
            await waitFor(taken.retryAfterMs, signal);
          }
        },
      };
    },
  };
}
