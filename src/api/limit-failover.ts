/**
 * A shared key limiter that never refuses a request because its store is down or slow: a store
 * call that fails or takes longer than a short timeout is answered by the process's own limiter,
 * and the store is left alone (but for one request a probe interval) until it answers again. The
 * shared limit then holds per process only: N processes let a key make N times its limit.
 */
import type { KeyLimiter } from "./key-limiter.ts";

export interface FailoverOptions {
  shared: KeyLimiter;
  local: KeyLimiter;
  /** A store call taking longer fails over, in ms. */
  timeoutMs: number;
  /** While the store is down, one request this often tries it again, in ms. */
  probeMs: number;
  /** Told once when the store stops answering (with why) and once when it answers again. */
  onChange(up: boolean, error?: unknown): void;
  /** Told of every point taken or charged by the process's own limiter in the store's place. */
  onFallback(): void;
  /** The clock, in ms. */
  now?: () => number;
}

export const DEFAULT_STORE_TIMEOUT_MS = 100;
export const DEFAULT_PROBE_MS = 1_000;

class StoreTimeout extends Error {
  constructor(ms: number) {
    super(`the rate limit store did not answer within ${ms} ms`);
  }
}

/**
 * `promise`, or a StoreTimeout after `ms`. Timers run before the socket reads of the same turn of
 * the event loop: after a stall longer than `ms` (a long GC, a busy machine) the store's answer
 * may be waiting unread, so the timeout gives it one more turn to be read before it wins.
 */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let turn: NodeJS.Immediate | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      turn = setImmediate(() => reject(new StoreTimeout(ms)));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
    clearImmediate(turn);
  });
}

export function createFailoverLimiter(options: FailoverOptions): KeyLimiter {
  const { shared, local, timeoutMs, probeMs, onChange, onFallback, now = Date.now } = options;
  let up = true;
  let probeAt = 0;

  /** `ask` of the shared store when it is up or due a probe, else (or when it fails) of the local limiter. */
  async function decide<T>(ask: (limiter: KeyLimiter) => Promise<T>): Promise<T> {
    if (!up) {
      const t = now();
      if (t < probeAt) {
        onFallback();
        return ask(local);
      }
      // One request probes; the others keep to the local limiter meanwhile.
      probeAt = t + probeMs;
    }
    let answer: T;
    try {
      answer = await within(ask(shared), timeoutMs);
    } catch (error) {
      if (up) {
        up = false;
        probeAt = now() + probeMs;
        onChange(false, error);
      }
      onFallback();
      return ask(local);
    }
    if (!up) {
      up = true;
      onChange(true);
    }
    return answer;
  }

  return {
    take: (key) => decide((limiter) => limiter.take(key)),
    charge: (key, points) => decide((limiter) => limiter.charge(key, points)),
  };
}
