/**
 * Opens the key limiter `--rate-limit-store` names: token buckets in this process's memory, or
 * rate-limiter-flexible's counters in Redis (ioredis) or PostgreSQL (pg, in the `rate_limits`
 * table a migration makes) behind the failover to this process's own buckets. The store's
 * connections are made here and closed with the limiter.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import pg from "pg";
import { type RateLimiterAbstract, RateLimiterPostgres, RateLimiterRedis } from "rate-limiter-flexible";
import { UserFacingError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { redactUrl } from "../core/url.ts";
import { burstWindowSeconds, flexibleKeyLimiter, type KeyLimiter, localKeyLimiter } from "./key-limiter.ts";
import { createFailoverLimiter, DEFAULT_PROBE_MS, DEFAULT_STORE_TIMEOUT_MS } from "./limit-failover.ts";
import { createTokenBuckets } from "./token-bucket.ts";

/** Where keys' points are counted: this process's memory, or a Redis or PostgreSQL at `url`. */
export type RateLimitStore =
  | { kind: "memory" }
  | { kind: "redis"; url: string }
  | { kind: "postgres"; url: string };

/** What the metrics learn of a shared store: whether it answers, and each point counted without it. */
export interface RateLimitObserver {
  storeUp(store: "redis" | "postgres", up: boolean): void;
  fallback(store: "redis" | "postgres"): void;
}

export interface OpenKeyLimiterOptions {
  store: RateLimitStore;
  pointsPerSecond: number;
  burst: number;
  logger: Logger;
  observer: RateLimitObserver;
  /** A store call taking longer is answered by this process's buckets, in ms (default 100). */
  timeoutMs?: number;
  /** While the store is down, one request this often tries it again, in ms (default 1000). */
  probeMs?: number;
}

export interface OpenedKeyLimiter {
  limiter: KeyLimiter;
  close(): Promise<void>;
}

/** The table migration 0027 makes. */
export const RATE_LIMITS_TABLE = "rate_limits";
/** How long opening waits for the store before starting without it, in ms. */
const OPEN_WAIT_MS = 2_000;

/** One prefix per counter: the rate's one-second windows and the burst's longer ones share a store. */
const RATE_PREFIX = "mintlens:rate";
const BURST_PREFIX = "mintlens:burst";

export async function openKeyLimiter(options: OpenKeyLimiterOptions): Promise<OpenedKeyLimiter> {
  const { store, pointsPerSecond, burst, logger, observer } = options;
  const local = localKeyLimiter(createTokenBuckets({ ratePerSecond: pointsPerSecond, burst }));
  if (store.kind === "memory") return { limiter: local, close: async () => {} };

  const windows = { rate: { points: pointsPerSecond, duration: 1 } };
  const burstWindow = { points: burst, duration: burstWindowSeconds(pointsPerSecond, burst) };
  let opened: { make(prefix: string, window: { points: number; duration: number }): RateLimiterAbstract };
  let close: () => Promise<void>;
  if (store.kind === "redis") {
    const client = await openRedis(store.url);
    opened = {
      make: (keyPrefix, window) =>
        new RateLimiterRedis({ storeClient: client, rejectIfRedisNotReady: true, keyPrefix, ...window }),
    };
    close = async () => {
      client.disconnect();
    };
  } else {
    const pool = await openPostgres(store.url);
    // Unnamed statements: the library names its own, which a pooler in transaction mode cannot keep.
    const client = {
      query: (q: { text: string; values?: unknown[] }) => pool.query({ text: q.text, values: q.values }),
    };
    opened = {
      make: (keyPrefix, window) =>
        new RateLimiterPostgres({
          storeClient: client,
          storeType: "pool",
          tableName: RATE_LIMITS_TABLE,
          tableCreated: true,
          keyPrefix,
          ...window,
        }),
    };
    close = () => pool.end();
  }

  const shown = redactUrl(store.url);
  const shared = flexibleKeyLimiter({
    rate: opened.make(RATE_PREFIX, windows.rate),
    burst: opened.make(BURST_PREFIX, burstWindow),
    ratePerSecond: pointsPerSecond,
  });
  observer.storeUp(store.kind, true);
  const limiter = createFailoverLimiter({
    shared,
    local,
    timeoutMs: options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
    probeMs: options.probeMs ?? DEFAULT_PROBE_MS,
    onFallback: () => observer.fallback(store.kind),
    onChange(up, error) {
      observer.storeUp(store.kind, up);
      if (up) logger.warn({ store: shown }, "rate limit store answers again: keys share one limit again");
      else
        logger.warn(
          { store: shown, err: error },
          "rate limit store is not answering: each API process limits keys on its own until it does",
        );
    },
  });
  return { limiter, close };
}

/**
 * A Redis client that fails a command at once while it is not connected (rather than queueing it)
 * and keeps reconnecting in the background. Waits a little for the first connection, so a process
 * starting beside its Redis does not begin in fallback.
 */
async function openRedis(url: string): Promise<Redis> {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: (times) => Math.min(100 * times, 1_000),
    // The commands of concurrent requests go out in one write and come back in one read.
    enableAutoPipelining: true,
  });
  // Connection errors are told by the failover, once; ioredis would print each attempt's.
  client.on("error", () => {});
  const ready = new Promise<void>((resolve) => client.once("ready", () => resolve()));
  await Promise.race([ready, sleep(OPEN_WAIT_MS, undefined, { ref: false })]);
  return client;
}

/**
 * A small pool to the PostgreSQL holding the `rate_limits` table. A server that does not answer
 * yet is not an error (the failover covers it); a database without the table is: it was not
 * migrated, and every request would fall back.
 */
async function openPostgres(url: string): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: 1_000,
    idleTimeoutMillis: 30_000,
    application_name: "mintlens rate limit",
  });
  pool.on("error", () => {});
  const probe = pool.query(`SELECT 1 FROM ${RATE_LIMITS_TABLE} LIMIT 0`).then(
    () => undefined,
    (error: unknown) => error,
  );
  const failure = await Promise.race([probe, sleep(OPEN_WAIT_MS, undefined, { ref: false })]);
  if ((failure as { code?: unknown } | undefined)?.code === "42P01") {
    await pool.end();
    throw new UserFacingError(
      `rate limit store: the database at ${redactUrl(url)} has no ${RATE_LIMITS_TABLE} table: run mintlens migrate on it`,
    );
  }
  return pool;
}
