/**
 * Retention of the live event stream's outbox: beside each chain's indexer (src/cli/run-indexers.ts),
 * a pass every `intervalMs` prunes the events of blocks older than the retention, in transactions of
 * at most `batchRows` rows, one right after another while old rows remain, so that no pass holds
 * many locks or writes much WAL at once.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { errorMessage } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { Sql } from "../store/pg/database.ts";
import { pruneStream } from "../store/tables/stream-events.ts";

/** Rows pruned per transaction. */
export const RETENTION_BATCH_ROWS = 10_000;
/** A minute between passes: events live for days, so pruning them a minute late costs nothing. */
export const RETENTION_INTERVAL_MS = 60_000;

/** One pass: every event older than the retention, batch after batch. Returns the rows pruned. */
export async function pruneStreamPass(
  sql: Sql,
  chainId: number,
  retentionDays: number,
  options: { batchRows?: number; now?: Date; signal?: AbortSignal } = {},
): Promise<number> {
  const now = options.now ?? new Date();
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  let pruned = 0;
  // Bounded: a pass never prunes more than a thousand batches, the rest waits for the next.
  for (let batch = 0; batch < 1000 && !options.signal?.aborted; batch++) {
    const pass = await pruneStream(sql, chainId, before, options.batchRows ?? RETENTION_BATCH_ROWS);
    pruned += pass.pruned;
    if (!pass.more) break;
  }
  return pruned;
}

/** Passes until `signal` aborts; a failed pass is logged and tried again at the next interval. */
export async function runStreamRetention(
  options: { sql: Sql; chainId: number; retentionDays: number; logger: Logger; intervalMs?: number },
  signal: AbortSignal,
): Promise<void> {
  const interval = options.intervalMs ?? RETENTION_INTERVAL_MS;
  // The first pass an interval after the start: a short run (a backfill to a block) prunes nothing.
  await sleep(interval, undefined, { signal }).catch(() => {});
  while (!signal.aborted) {
    try {
      const pruned = await pruneStreamPass(options.sql, options.chainId, options.retentionDays, { signal });
      if (pruned > 0) options.logger.debug({ pruned }, "stream events pruned");
    } catch (error) {
      if (signal.aborted) return;
      options.logger.warn(`pruning the stream's events failed: ${errorMessage(error)}; trying again`);
    }
    await sleep(interval, undefined, { signal }).catch(() => {});
  }
}
