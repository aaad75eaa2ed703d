/**
 * The version of a chain's served data, polled: what the response cache keys its answers on, and
 * the block every answer is tagged with. Every `pollMs` it is read again (indexed single-row
 * reads, one statement), so a commit reaches every answer within one poll. Its parts move apart:
 * the metadata worker's fetches change only the answers that show metadata, never the rest.
 *
 * Requests waiting for a block (`minBlock`) share one faster poll, running only while any wait;
 * they hold no database connection meanwhile. Reads never overlap, so the version held only
 * moves forward in the order the database committed (back only when the indexer rolls back).
 */
import type { Logger } from "../core/logger.ts";
import type { Queryable } from "../store/pg/database.ts";
import { dataVersion, type VersionParts } from "../store/read/version.ts";
import { BehindError, UnavailableError } from "./errors.ts";

/** Whether a wait for a block ended with the data there (`reached`) or not; `version` as last read. */
export interface Reached {
  reached: boolean;
  version: VersionParts;
}

export interface DataVersion {
  /** The version last read; read now when none has been yet. */
  current(): Promise<VersionParts>;
  /**
   * The version once its head is at `block` or beyond, read every `waitingPollMs` meanwhile; after
   * `waitMs`, the version as it is (not reached). Throws UNAVAILABLE when too many requests wait
   * already, or when the version is closed (shutdown ends every wait at once).
   */
  reach(block: bigint, waitMs: number): Promise<Reached>;
  close(): void;
}

export const DEFAULT_VERSION_POLL_MS = 1_000;
/** How often the version is read while any request waits for a block. */
export const WAITING_POLL_MS = 50;
/** Requests of one chain that may wait for a block at once; more are refused at once. */
export const MAX_WAITING = 1_000;

interface Waiter {
  block: bigint;
  settle(outcome: Reached | UnavailableError): void;
}

const shuttingDown = () => new BehindError("the server is shutting down: retry on another", 1);

const reaches = (version: VersionParts, block: bigint) =>
  version.head !== undefined && version.head.number >= block;

export function createDataVersion(options: {
  sql: Queryable;
  chainId: number;
  logger: Logger;
  pollMs?: number;
  waitingPollMs?: number;
  maxWaiting?: number;
}): DataVersion {
  const { sql, chainId, logger } = options;
  const maxWaiting = options.maxWaiting ?? MAX_WAITING;
  let version: VersionParts | undefined;
  let reading: Promise<VersionParts> | undefined;
  let fast: NodeJS.Timeout | undefined;
  let closed = false;
  const waiters = new Set<Waiter>();

  const stopFastIfIdle = () => {
    if (waiters.size > 0 || fast === undefined) return;
    clearInterval(fast);
    fast = undefined;
  };

  const release = (next: VersionParts) => {
    for (const waiter of waiters) {
      if (reaches(next, waiter.block)) waiter.settle({ reached: true, version: next });
    }
  };

  // One read at a time, shared by whoever asks meanwhile: versions are taken in the order read.
  const read = (): Promise<VersionParts> => {
    reading ??= dataVersion(sql, chainId)
      .then((next) => {
        version = next;
        release(next);
        return next;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const poll = () => {
    read().catch((error: unknown) => {
      // What was read stays current; the next poll tries again.
      logger.warn({ err: error }, "reading the data version failed");
    });
  };
  const timer = setInterval(poll, options.pollMs ?? DEFAULT_VERSION_POLL_MS);
  timer.unref();

  return {
    async current() {
      return version ?? (await read());
    },
    async reach(block, waitMs) {
      const now = version ?? (await read());
      if (reaches(now, block)) return { reached: true, version: now };
      if (closed) throw shuttingDown();
      if (waiters.size >= maxWaiting) {
        throw new UnavailableError({
          message: "too many requests wait for newer data on this server: retry later",
          retryAfterSeconds: 1,
        });
      }
      return new Promise<Reached>((resolve, reject) => {
        const waiter: Waiter = {
          block,
          settle(outcome) {
            clearTimeout(expiry);
            waiters.delete(waiter);
            stopFastIfIdle();
            if (outcome instanceof UnavailableError) reject(outcome);
            else resolve(outcome);
          },
        };
        const expiry = setTimeout(() => waiter.settle({ reached: false, version: version ?? now }), waitMs);
        waiters.add(waiter);
        if (fast === undefined) {
          // The version held may be up to a poll old: the block may be there already.
          poll();
          fast = setInterval(poll, options.waitingPollMs ?? WAITING_POLL_MS);
        }
      });
    },
    close() {
      closed = true;
      clearInterval(timer);
      const shutdown = shuttingDown();
      for (const waiter of waiters) waiter.settle(shutdown);
      stopFastIfIdle();
    },
  };
}
