/**
 * A measuring run over the two built stores, small first: on each, the API uncached under load and
 * the rankings' share of batches written on top of it; on the large one, ingest on top of it
 * against an empty database on the same server. Each store is taken back to its built head before
 * and after what is indexed on top of it. Every measuring phase holds the CPU lock; restoring,
 * starting servers and reading facts do not.
 */
import { join } from "node:path";
import postgres from "postgres";
import { errorMessage } from "../../src/core/errors.ts";
import type { FetchedBatch } from "../../src/indexer/batch.ts";
import { connectDatabase, type Sql } from "../../src/store/pg/database.ts";
import { migrate } from "../../src/store/pg/migrate.ts";
import { ensureChain } from "../../src/store/tables/chain-state.ts";
import { createApiKey, startApi } from "../bench-api/api-process.ts";
import { deepPageOperations } from "../bench-api/deep-pages.ts";
import { type LoadSettings, type Measurement, measure } from "../bench-api/measure.ts";
import { type ContinuationSpec, mergeBatches } from "./continuation.ts";
import { type CpuLock, cpuLock } from "./cpu-lock.ts";
import { type BatchTiming, type IngestResult, ingestPass, rankingsPass, restoreStore } from "./on-top.ts";
import { type ScaleOperations, scaleOperationsFor } from "./operations.ts";
import { machineState, printReport, type StoreFacts, type StoreRun } from "./report.ts";
import { started } from "./running.ts";
import { scaleMarket } from "./shape.ts";
import { CHAIN_ID, CHAIN_NAME, type ScaleStore, SERVER_SETTINGS, type StoreMeta } from "./store.ts";

export interface MeasureOptions {
  large: ScaleStore;
  small: ScaleStore;
  continuation: ContinuationSpec;
  phases: string[];
  /** Only the API operations whose names match (`--operations`); every one when unset. */
  operations?: RegExp | undefined;
  lock: string | undefined;
  load: { duration: number; warmup: number; connections: number; maxRequests: number };
  batchRows: number;
  seed: string;
  log: (message: string) => void;
}

const EMPTY_DATABASE = "mintlens_scale_empty";

export async function measureStores(options: MeasureOptions): Promise<void> {
  const { log } = options;
  const lock = cpuLock(options.lock, log);
  const ready = (["small", "large"] as const).map((label) => {
    const store = options[label];
    const meta = store.meta();
    const continuation = meta?.complete ? store.continuation() : undefined;
    if (!meta?.complete || !continuation) {
      throw new Error(
        `${store.dir} is not built: npm run bench:scale -- --build ${label} ` +
          `--${label === "large" ? "transfers" : "small-transfers"} ${store.dir.split("-").at(-1)}`,
      );
    }
    return { label, store, meta, continuation };
  });
  const runs: StoreRun[] = [];
  let ingest: { large: IngestResult; empty: IngestResult } | undefined;
  let machine: Awaited<ReturnType<typeof machineState>> | undefined;
  for (const { label, store, meta, continuation } of ready) {
    log(`\n== ${label} store: ${store.dir} ==`);
    const market = scaleMarket(meta.shape, meta.seed, meta.end);
    const server = await started(store.open(log));
    const sql = await connectDatabase(server.url, { max: 4 });
    try {
      // Migrations added since the store was built (indexes, say) are part of what is measured.
      await migrate(server.url).catch((error: unknown) => {
        throw new Error(
          `${store.dir} cannot be brought to the current schema (${errorMessage(error)}): remove it and build it again`,
        );
      });
      await restoreStore(sql, store, meta, market, log);
      const facts = await storeFacts(sql, meta);
      log(
        `  ${facts.transfers.toLocaleString("en")} NFT transfers, ${facts.sales.toLocaleString("en")} sales, ` +
          `${facts.tokens.toLocaleString("en")} tokens, ${facts.collections.toLocaleString("en")} collections ` +
          `(${facts.activeLastDay.toLocaleString("en")} with transfers in the last day, ${facts.soldLastDay.toLocaleString("en")} with sales), ` +
          `${(facts.bytes / 2 ** 30).toFixed(1)} GiB`,
      );
      if (meta.shape.collectorNfts === undefined) {
        log(
          `  NOTE: ${store.dir} was built before the collector's vault and the punk offers existed: its largest ` +
            "wallet holds only what its busiest trader kept, and every floor is read on the path without offers. " +
            `Remove the directory and build it again (--build ${label}) to measure a wallet of ${(meta.shape.transfers / 1000).toLocaleString("en")} NFTs and the offers' floor.`,
        );
      }
      const run: StoreRun = { label, meta, facts };
      if (options.phases.includes("api")) {
        run.api = await apiPhase(server.url, sql, store, market, lock, options, server.pid);
      }
      if (options.phases.includes("rankings")) {
        const batches = continuation.slice(0, options.continuation.batches);
        log(`  rankings: ${batches.length} fifteen-minute batches on top of the store`);
        run.rankings = await lock.holding("rankings", () => rankingsPass(sql, market, meta, batches));
        log(`  ${summarizeRankings(run.rankings)}`);
        await restoreStore(sql, store, meta, market, log);
      }
      if (label === "large" && options.phases.includes("ingest")) {
        ingest = await ingestPhase(
          sql,
          server.url,
          store,
          meta,
          market,
          continuation,
          options,
          lock,
          server.pid,
        );
      }
      machine ??= await machineState(sql, store.dir, Object.keys(SERVER_SETTINGS));
      runs.push(run);
    } finally {
      await sql.end({ timeout: 5 });
      await server.stop();
    }
  }
  printReport({ runs, ingest, machine, load: options.load, log });
}

async function storeFacts(sql: Sql, meta: StoreMeta): Promise<StoreFacts> {
  const [row] = await sql<Record<string, string>[]>`
    SELECT (SELECT reltuples::bigint FROM pg_class WHERE relname = 'nft_transfers') AS transfers,
           (SELECT reltuples::bigint FROM pg_class WHERE relname = 'sales') AS sales,
           (SELECT reltuples::bigint FROM pg_class WHERE relname = 'tokens') AS tokens,
           (SELECT count(*) FROM contracts WHERE chain_id = ${CHAIN_ID}) AS collections,
           (SELECT count(DISTINCT contract) FROM collection_buckets
            WHERE chain_id = ${CHAIN_ID} AND bucket_start >= (SELECT window_end - interval '1 day' FROM chains WHERE chain_id = ${CHAIN_ID})) AS active,
           (SELECT count(*) FROM collection_windows WHERE chain_id = ${CHAIN_ID} AND window_seconds = 86400) AS sold,
           pg_database_size(current_database()) AS bytes`;
  const n = (key: string) => Number(row?.[key] ?? 0);
  return {
    transfers: n("transfers"),
    sales: n("sales"),
    tokens: n("tokens"),
    collections: n("collections") - 3,
    activeLastDay: n("active"),
    soldLastDay: n("sold"),
    bytes: n("bytes"),
    shape: meta.shape,
  };
}

async function apiPhase(
  url: string,
  sql: Sql,
  store: ScaleStore,
  market: ReturnType<typeof scaleMarket>,
  lock: CpuLock,
  options: MeasureOptions,
  postgresPid: number | undefined,
): Promise<{ operations: ScaleOperations; measurements: Measurement[] }> {
  const { log } = options;
  // The market's first wallets trade the most, and the first holds the collector's vault.
  const operations = await scaleOperationsFor(sql, CHAIN_ID, options.seed, market.wallets.slice(0, 100));
  for (const note of operations.facts.notes) log(`  ${note}`);
  const apiKey = await createApiKey(url, `scale-${Date.now()}`);
  const api = await started(
    startApi({
      databaseUrl: url,
      chainName: CHAIN_NAME,
      chainId: CHAIN_ID,
      logFile: join(store.dir, "serve.log"),
      responseCacheMb: 0,
    }),
  );
  try {
    const deep = await deepPageOperations(api.url, apiKey, operations.deepLists);
    for (const note of deep.notes) log(`  ${note}`);
    operations.operations.push(...deep.operations);
    operations.pairs.push(...deep.pairs);
    const settings: LoadSettings = { ...options.load, apiKey, apiPid: api.pid, postgresPid };
    log(
      `  API uncached at ${api.url}: each operation ${settings.warmup} s of warm-up, then ${settings.duration} s ` +
        `or ${options.load.maxRequests.toLocaleString("en")} requests with ${settings.connections} connections`,
    );
    const measurements = await lock.holding("API", async () => {
      const done: Measurement[] = [];
      const chosen = operations.operations.filter((o) => options.operations?.test(o.name) ?? true);
      for (const operation of chosen) {
        const m = await measure(api.url, operation, settings);
        log(
          `    ${operation.name.padEnd(40)} ${Math.round(m.perSecond).toString().padStart(6)} req/s, ` +
            `p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, non-2xx ${m.non2xx + m.failed}, ` +
            `CPU ms a request: API ${cpu(m.apiCpu)}, PostgreSQL ${cpu(m.postgresCpu)}`,
        );
        done.push(m);
      }
      return done;
    });
    return { operations, measurements };
  } finally {
    await api.stop();
  }
}

/** CPU seconds per 1,000 requests is CPU ms per request. */
const cpu = (perThousand: number | undefined) => (perThousand === undefined ? "-" : perThousand.toFixed(2));

function summarizeRankings(timings: readonly BatchTiming[]): string {
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const rankings = sorted(timings.map((t) => t.projections.rankings ?? 0));
  const writes = sorted(timings.map((t) => t.write));
  const mid = (xs: number[]) => xs[Math.floor(xs.length / 2)] ?? Number.NaN;
  return `rankings ${mid(rankings).toFixed(2)} ms a batch (median), write ${mid(writes).toFixed(1)} ms`;
}

async function ingestPhase(
  sql: Sql,
  url: string,
  store: ScaleStore,
  meta: StoreMeta,
  market: ReturnType<typeof scaleMarket>,
  continuation: FetchedBatch[],
  options: MeasureOptions,
  lock: CpuLock,
  postgresPid: number | undefined,
): Promise<{ large: IngestResult; empty: IngestResult }> {
  const { log } = options;
  const taken: FetchedBatch[] = [];
  let transfers = 0;
  for (const batch of continuation) {
    if (transfers >= options.continuation.transfers) break;
    taken.push(batch);
    transfers += batch.nft.length;
  }
  if (transfers < options.continuation.transfers) {
    throw new Error(
      `the continuation saved with ${store.dir} has ${transfers} transfers, fewer than --ingest-transfers: ` +
        `remove ${join(store.dir, "continuation.v8")} and run --build again to draw a longer one`,
    );
  }
  const batches = mergeBatches(taken, options.batchRows);
  const start = meta.builtHead + 1;
  const [held] = await sql<
    { n: string }[]
  >`SELECT reltuples::bigint AS n FROM pg_class WHERE relname = 'nft_transfers'`;
  log(
    `  ingest: ${transfers.toLocaleString("en")} NFT transfers in ${batches.length} batches, on top of the store`,
  );
  const large = await lock.holding("ingest", () =>
    ingestPass(sql, market, start, batches, postgresPid, Number(held?.n ?? 0)),
  );
  log(`    ${Math.round(large.transfers / large.seconds).toLocaleString("en")} events/s`);
  await restoreStore(sql, store, meta, market, log);

  log("  ingest: the same batches into an empty database on the same server");
  const admin = postgres(url.replace(/\/[^/]*$/, "/postgres"), { max: 1, onnotice: () => {} });
  const emptyUrl = url.replace(/\/[^/]*$/, `/${EMPTY_DATABASE}`);
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${EMPTY_DATABASE} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${EMPTY_DATABASE}`);
    await migrate(emptyUrl);
    const empty = await connectDatabase(emptyUrl, { max: 4 });
    try {
      await ensureChain(empty, {
        chainId: CHAIN_ID,
        name: CHAIN_NAME,
        nativeSymbol: "ETH",
        startBlock: start,
      });
      const result = await lock.holding("ingest", () =>
        ingestPass(empty, market, start, batches, postgresPid, 0),
      );
      log(`    ${Math.round(result.transfers / result.seconds).toLocaleString("en")} events/s`);
      return { large, empty: result };
    } finally {
      await empty.end({ timeout: 5 });
    }
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${EMPTY_DATABASE} WITH (FORCE)`).catch(() => {});
    await admin.end({ timeout: 5 });
  }
}
