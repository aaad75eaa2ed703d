/**
 * The open streams of a process, over every chain and both protocols: at most so many per key and
 * so many in all (a stream holds a connection and a share of the store's reads for as long as it
 * lasts), and the one place shutdown ends them all from.
 */
import { ResourceExhaustedError } from "./errors.ts";

export interface StreamSlots {
  /**
   * Takes a slot for a stream of `keyId`, or throws RESOURCE_EXHAUSTED. The slot's `shutdown`
   * aborts when the process shuts down; `release` gives the slot back (more than once is harmless).
   */
  open(keyId: string): { shutdown: AbortSignal; release(): void };
  /** Open streams, in all. */
  readonly count: number;
  /** Ends every open stream (each says so to its consumer) and refuses new ones. */
  shutdown(): void;
}

export interface StreamSlotsOptions {
  /** Open streams per key (default 4). */
  perKey?: number;
  /** Open streams per process (default 500). */
  total?: number;
}

export const DEFAULT_MAX_STREAMS_PER_KEY = 4;
export const DEFAULT_MAX_STREAMS = 500;

/** Seconds a client refused a stream is told to wait: a slot frees when another stream ends. */
const RETRY_AFTER_SECONDS = 5;

export function createStreamSlots(options: StreamSlotsOptions = {}): StreamSlots {
  const perKey = options.perKey ?? DEFAULT_MAX_STREAMS_PER_KEY;
  const total = options.total ?? DEFAULT_MAX_STREAMS;
  const byKey = new Map<string, number>();
  const closing = new AbortController();
  let count = 0;
  return {
    open(keyId) {
      if (closing.signal.aborted) {
        throw new ResourceExhaustedError(RETRY_AFTER_SECONDS, "the server is shutting down");
      }
      const mine = byKey.get(keyId) ?? 0;
      if (mine >= perKey) {
        throw new ResourceExhaustedError(
          RETRY_AFTER_SECONDS,
          `this key has ${mine} streams open, the most it may: close one first`,
        );
      }
      if (count >= total) {
        throw new ResourceExhaustedError(RETRY_AFTER_SECONDS, "this server has all the streams it may open");
      }
      byKey.set(keyId, mine + 1);
      count++;
      let released = false;
      return {
        shutdown: closing.signal,
        release() {
          if (released) return;
          released = true;
          count--;
          const left = (byKey.get(keyId) ?? 1) - 1;
          if (left === 0) byKey.delete(keyId);
          else byKey.set(keyId, left);
        },
      };
    },
    get count() {
      return count;
    },
    shutdown() {
      closing.abort();
    },
  };
}
