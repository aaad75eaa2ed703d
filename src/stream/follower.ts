/**
 * Following a chain's outbox for every open stream at once: one poll of the newest cursor and the
 * indexed head per chain (a key lookup, no LISTEN, so a read-only standby serves streams too),
 * every `pollMs` while at least one stream waits, waking the streams it concerns. Each stream
 * then reads its own pages with `readStreamEvents`, when its transport has room for them: the
 * follower holds no events, so the memory of a stream is one page however far behind it is.
 */
import type { Logger } from "../core/logger.ts";
import type { Queryable } from "../store/pg/database.ts";
import { readStreamEvents, type StreamPage, type StreamQuery } from "../store/read/stream-events.ts";

/** Where the chain's stream stands: its newest cursor and the highest block indexed. */
export interface StreamTip {
  latest: bigint;
  head: number;
}

export interface StreamFollower {
  /** A page of the stream, read for one consumer (its filters, its cursor, its mode). */
  read(query: StreamQuery): Promise<StreamPage>;
  /**
   * Resolves once the poll finds a tip `ready` accepts, or after `timeoutMs`, or when `signal`
   * aborts (never rejects). Polls only while something waits.
   */
  wait(ready: (tip: StreamTip) => boolean, timeoutMs: number, signal: AbortSignal): Promise<void>;
  /** The tip as last polled; undefined before the first poll. */
  readonly tip: StreamTip | undefined;
  /** Stops polling and releases every wait. */
  close(): void;
}

export interface StreamFollowerOptions {
  sql: Queryable;
  chainId: number;
  /** How often the tip is polled while a stream waits, in ms (default 100). */
  pollMs?: number;
  logger: Logger;
}

export const DEFAULT_STREAM_POLL_MS = 100;

interface Waiter {
  ready: (tip: StreamTip) => boolean;
  wake: () => void;
}

export function createStreamFollower(options: StreamFollowerOptions): StreamFollower {
  const { sql, chainId, logger } = options;
  const pollMs = options.pollMs ?? DEFAULT_STREAM_POLL_MS;
  const waiters = new Set<Waiter>();
  let tip: StreamTip | undefined;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  let failing = false;
  let closed = false;

  async function poll(): Promise<void> {
    timer = undefined;
    if (closed || waiters.size === 0) return;
    polling = true;
    try {
      const page = await readStreamEvents(sql, chainId, { after: "now", limit: 1 });
      tip = { latest: page.next, head: page.head };
      if (failing) logger.info({ chainId }, "the stream's poll reads the store again");
      failing = false;
      for (const waiter of [...waiters]) {
        if (waiter.ready(tip)) waiter.wake();
      }
    } catch (error) {
      // Once per outage: the waiting streams read the store themselves at their heartbeat and
      // end with the store's error if it is still down.
      if (!failing) logger.warn({ err: error, chainId }, "the stream's poll cannot read the store");
      failing = true;
    } finally {
      polling = false;
      schedule();
    }
  }

  function schedule(): void {
    if (closed || timer !== undefined || polling || waiters.size === 0) return;
    timer = setTimeout(() => void poll(), pollMs);
  }

  return {
    read: (query) => readStreamEvents(sql, chainId, query),
    wait(ready, timeoutMs, signal) {
      return new Promise<void>((resolve) => {
        if (closed || signal.aborted) return resolve();
        let timeout: NodeJS.Timeout | undefined;
        const waiter: Waiter = {
          ready,
          wake: () => {
            waiters.delete(waiter);
            clearTimeout(timeout);
            signal.removeEventListener("abort", waiter.wake);
            resolve();
          },
        };
        timeout = setTimeout(waiter.wake, timeoutMs);
        signal.addEventListener("abort", waiter.wake, { once: true });
        waiters.add(waiter);
        schedule();
      });
    },
    get tip() {
      return tip;
    },
    close() {
      closed = true;
      clearTimeout(timer);
      for (const waiter of [...waiters]) waiter.wake();
    },
  };
}
