/**
 * The version of a chain's served data, polled: what the response cache keys its answers on. Every
 * `pollMs` it is read again (two indexed single-row reads), so a commit reaches every answer within
 * one poll. Its two parts move apart: the metadata worker's fetches change only the answers that
 * show metadata, never the rest.
 */
import type { Logger } from "../core/logger.ts";
import type { Queryable } from "../store/pg/database.ts";
import { dataVersion, type VersionParts } from "../store/read/version.ts";

export interface DataVersion {
  /** The version last read; read now when none has been yet. */
  current(): Promise<VersionParts>;
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
  let version: VersionParts | undefined;
  let polling = false;

  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      version = await dataVersion(sql, chainId);
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
    close() {
      clearInterval(timer);
    },
  };
}
