/**
 * The top-collection rankings of one chain, kept in memory per duration and refreshed in the
 * background, so that a request never aggregates a year of rows and a newly committed block is
 * ranked within seconds.
 *
 * A ranking covers the duration ending at the end of the current fifteen-minute bucket (the
 * store's unit of time), so a sale counts from the moment its block is committed. Every
 * `pollMs` the chain's row is read (one indexed row: its next block and the time of its last
 * commit or rollback); a ranking is computed again when that changed or when its window moved on
 * to a new bucket. A duration nobody asked for in `idleMs` is dropped rather than kept fresh.
 */
import type { Logger } from "../core/logger.ts";
import type { Queryable } from "../store/database.ts";
import { type Ranked, type RankingMetric, rankCollections, windowSales } from "../store/read/top.ts";
import { DURATION_SECONDS, type Duration } from "./params.ts";

const BUCKET_MS = 900_000;

export interface Rankings {
  /** A page of the ranking of `duration` by `metric`, at most one refresh old. */
  page(duration: Duration, metric: RankingMetric, offset: number, limit: number): Promise<Ranked[]>;
  /** Stops the background refresh. */
  close(): void;
}

export interface RankingsOptions {
  sql: Queryable;
  chainId: number;
  logger: Logger;
  /** How often the chain's last commit is checked; default 1 s. */
  pollMs?: number;
  /** A ranking not asked for this long is dropped; default 10 minutes. */
  idleMs?: number;
  now?: () => number;
}

interface Entry {
  /** The chain's version and the window's end the rows were computed for. */
  version: string;
  windowEnd: number;
  rows: readonly Ranked[];
  /** The rows sorted per metric, worked out on first use. */
  sorted: Map<RankingMetric, Ranked[]>;
  lastUsed: number;
}

export function createRankings(options: RankingsOptions): Rankings {
  const { sql, chainId, logger } = options;
  const now = options.now ?? Date.now;
  const idleMs = options.idleMs ?? 600_000;
  const entries = new Map<Duration, Entry>();
  // One computation per duration at a time: requests arriving meanwhile wait for it.
  const pending = new Map<Duration, Promise<Entry>>();
  let version: string | undefined;

  async function readVersion(): Promise<string> {
    const [row] = await sql<{ v: string }[]>`
      SELECT next_block::text || '@' || extract(epoch FROM updated_at)::text AS v
      FROM chains WHERE chain_id = ${chainId}`;
    return row?.v ?? "none";
  }

  const windowEndAt = (ms: number) => Math.ceil((ms + 1) / BUCKET_MS) * BUCKET_MS;

  function compute(duration: Duration, atVersion: string): Promise<Entry> {
    const running = pending.get(duration);
    if (running) return running;
    const windowEnd = windowEndAt(now());
    const promise = windowSales(sql, chainId, {
      from: new Date(windowEnd - DURATION_SECONDS[duration] * 1000),
      to: new Date(windowEnd),
    })
      .then((rows) => {
        const entry: Entry = {
          version: atVersion,
          windowEnd,
          rows,
          sorted: new Map(),
          lastUsed: entries.get(duration)?.lastUsed ?? now(),
        };
        entries.set(duration, entry);
        return entry;
      })
      .finally(() => pending.delete(duration));
    pending.set(duration, promise);
    return promise;
  }

  let refreshing = false;
  async function refresh(): Promise<void> {
    if (refreshing) return;
    refreshing = true;
    try {
      version = await readVersion();
      const at = now();
      for (const [duration, entry] of entries) {
        if (at - entry.lastUsed > idleMs) {
          entries.delete(duration);
        } else if (entry.version !== version || entry.windowEnd !== windowEndAt(at)) {
          await compute(duration, version);
        }
      }
    } catch (error) {
      // The rankings stay as they were; the next poll tries again.
      logger.warn({ err: error, chainId }, "refreshing the collection rankings failed");
    } finally {
      refreshing = false;
    }
  }

  const timer = setInterval(() => void refresh(), options.pollMs ?? 1_000);
  timer.unref();

  return {
    async page(duration, metric, offset, limit) {
      let entry = entries.get(duration);
      if (entry === undefined) {
        version ??= await readVersion();
        entry = await compute(duration, version);
      }
      entry.lastUsed = now();
      let sorted = entry.sorted.get(metric);
      if (sorted === undefined) {
        sorted = rankCollections(entry.rows, metric);
        entry.sorted.set(metric, sorted);
      }
      return sorted.slice(offset, offset + limit);
    },
    close() {
      clearInterval(timer);
    },
  };
}
