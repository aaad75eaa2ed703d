/**
 * What every API request passes before its operation runs, over either protocol: a valid key,
 * then the key's share of the rate limit. One guard serves every chain and both protocols of a
 * process, so a key's limit is shared by all of them.
 */
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { ResourceExhaustedError, UnauthenticatedError, unavailable } from "./errors.ts";
import type { KeyVerifier } from "./key-verifier.ts";

export interface Caller {
  userName: string;
  keyId: string;
}

export interface Guard {
  /** The caller of a request presenting `key`; throws UNAUTHENTICATED, RESOURCE_EXHAUSTED or UNAVAILABLE. */
  admit(key: string | undefined): Promise<Caller>;
}

export interface GuardOptions {
  keys: KeyVerifier;
  /** Requests per second per key; 0 turns the limit off. */
  requestsPerSecond: number;
}

export const DEFAULT_REQUESTS_PER_SECOND = 30;

export function createGuard(options: GuardOptions): Guard {
  const limiter =
    options.requestsPerSecond > 0
      ? new RateLimiterMemory({ points: options.requestsPerSecond, duration: 1 })
      : undefined;
  return {
    async admit(key) {
      let check: Awaited<ReturnType<KeyVerifier["verify"]>>;
      try {
        check = await options.keys.verify(key);
      } catch (error) {
        throw unavailable(error);
      }
      if (!check.ok) {
        throw check.reason === "missing"
          ? new UnauthenticatedError()
          : new UnauthenticatedError("the API key is not valid");
      }
      if (limiter !== undefined) {
        try {
          await limiter.consume(check.keyId);
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) {
            throw new ResourceExhaustedError(rejection.msBeforeNext / 1000);
          }
          throw rejection;
        }
      }
      return { userName: check.userName, keyId: check.keyId };
    },
  };
}
