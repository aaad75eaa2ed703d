/**
 * The top-collection rankings of one chain, kept in memory per duration and refreshed in the
 * background, so that a request never aggregates a year of rows and a newly committed block is
 * ranked within seconds.
 *
 * A ranking covers the duration ending at the end of the current fifteen-minute bucket (the
 * store's unit of time), so a sale counts from the moment its block is committed. On every poll
 * of the chain's data version, a ranking is computed again when the version changed or when its
 * window moved on to a new bucket. A duration nobody asked for in `idleMs` is dropped rather than
 * kept fresh.
 */
import type { Queryable } from "../store/pg/database.ts";
import { type Ranked, type RankingMetric, rankCollections, windowSales } from "../store/read/top.ts";
import type { DataVersion } from "./data-version.ts";
import { DURATION_SECONDS, type Duration } from "./params.ts";

const BUCKET_MS = 900_000;

/** The collections of one window as last computed. */
export interface Ranking {
  /** Identifies what the ranking was computed from: the data version and the window's end. */
  id: string;
  /** A page of the collections ranked by `metric`. */
  page(metric: RankingMetric, offset: number, limit: number): Ranked[];
}

export interface Rankings {
  /** The ranking of `duration`, at most one poll old; computed now when nobody asked for it lately. */
  ranking(duration: Duration): Promise<Ranking>;
  /** Stops the background refresh. */
  close(): void;
}

export interface RankingsOptions {
  sql: Queryable;
  chainId: number;
  /** The chain's data version: each of its polls checks the rankings. */
  version: DataVersion;
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
  const { sql, chainId } = options;
  const now = options.now ?? Date.now;
  const idleMs = options.idleMs ?? 600_000;
  const entries = new Map<Duration, Entry>();
  // One computation per duration at a time: requests arriving meanwhile wait for it.
  const pending = new Map<Duration, Promise<Entry>>();

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

  let closed = false;
  options.version.onPoll(async (version) => {
    if (closed) return;
    const at = now();
    for (const [duration, entry] of entries) {
      if (at - entry.lastUsed > idleMs) {
        entries.delete(duration);
      } else if (entry.version !== version || entry.windowEnd !== windowEndAt(at)) {
        // A failure leaves the ranking as it was; the next poll tries again.
        await compute(duration, version).catch(() => undefined);
      }
    }
  });

  return {
    async ranking(duration) {
      let entry = entries.get(duration);
      if (entry === undefined) entry = await compute(duration, await options.version.current());
      entry.lastUsed = now();
      const { sorted, rows } = entry;
      return {
        id: `${entry.version}|${entry.windowEnd}`,
        page(metric, offset, limit) {
          let ranked = sorted.get(metric);
          if (ranked === undefined) {
            ranked = rankCollections(rows, metric);
            sorted.set(metric, ranked);
          }
          return ranked.slice(offset, offset + limit);
        },
      };
    },
    close() {
      closed = true;
    },
  };
}
