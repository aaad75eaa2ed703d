/**
 * The version of a chain's served data, polled: what the rankings and the response cache key
 * their contents on. Every `pollMs` it is read again (three indexed single-row reads) and each
 * listener is told, so a commit reaches them within one poll.
 */
import type { Logger } from "../core/logger.ts";
import type { Queryable } from "../store/pg/database.ts";
import { dataVersion } from "../store/read/version.ts";

export interface DataVersion {
  /** The version last read; read now when none has been yet. */
  current(): Promise<string>;
  /** Called after every poll with the version read (changed or not). */
  onPoll(listener: (version: string) => Promise<void> | void): void;
  close(): void;
}

export const DEFAULT_VERSION_POLL_MS = 1_000;

export function createDataVersion(options: {
  sql: Queryable;
  chainId: number;
  logger: Logger;
  pollMs?: number;
}): DataVersion {
  const { sql, chainId, logger } = options;
  const listeners: ((version: string) => Promise<void> | void)[] = [];
  let version: string | undefined;
  let polling = false;

  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      version = await dataVersion(sql, chainId);
      for (const listener of listeners) await listener(version);
    } catch (error) {
      // What was read stays current; the next poll tries again.
      logger.warn({ err: error }, "reading the data version failed");
    } finally {
      polling = false;
    }
  };
  const timer = setInterval(() => void poll(), options.pollMs ?? DEFAULT_VERSION_POLL_MS);
  timer.unref();

  return {
    async current() {
      version ??= await dataVersion(sql, chainId);
      return version;
    },
    onPoll(listener) {
      listeners.push(listener);
    },
    close() {
      clearInterval(timer);
    },
  };
}
