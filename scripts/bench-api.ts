/**
 * API benchmark. For a small and a large synthetic market (10,000 and 1,000,000 sales by
 * default: 2,000 collections, 200,000 tokens and a year of history at full size), it loads the
 * market into a fresh database through the indexer's own prepare and commit, starts
 * `mintlens serve` on it, and measures each REST operation and the bare /healthz route under
 * load with autocannon: requests/s, p50 and p99 latency, answers other than 2xx, and the CPU of
 * the API process and of PostgreSQL per 1,000 requests. It ends with the p99 growth from the
 * small market to the large one and a verdict against the targets. Before serving a market, it
 * prints what the API's readers answer on it, and how long each takes on the idle server.
 *
 * Each market is served twice: with the server's answer cache (its default) and without it
 * (`--response-cache 0`), so both repeated questions and questions the store must answer are
 * measured; `--cache on` or `--cache off` measures one of the two. The most owned token's owners
 * and the largest wallet's NFTs are also asked at their 1000th page, reached by page token, beside
 * their first page at the same size.
 *
 * Usage: npm run bench:api [-- --sales 1000000 --small 10000 --duration 10 --warmup 2
 *          --connections 32 --database-url <url> --seed mintlens --batch-rows 20000 --check
 *          --cache both|on|off --pooler --standby --limiter --rounds 3]
 * --check loads the markets and reports what the readers answer, without serving.
 * --pooler measures a few operations on the large market directly against PostgreSQL and through
 * PgBouncer in transaction mode (started here), alternately, without the answer cache: p99 and
 * API+PostgreSQL CPU per request of each (PgBouncer's own CPU is not counted).
 * --standby measures the same few operations on a PostgreSQL 15 primary and on its streaming
 * standby (both started here, from Debian's binaries), alternately, without the answer cache.
 * --limiter measures the rate limit's cost instead, by store (memory, Redis, PostgreSQL), in
 *   `--rounds` rounds (see bench-api/limiter.ts).
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connectDatabase } from "../src/store/pg/database.ts";
import {
  type ReplicaCluster,
  replicaClusterUnavailable,
  startReplicaCluster,
} from "../test/support/replica.ts";
import { type ApiProcess, createApiKey, startApi } from "./bench-api/api-process.ts";
import { checkDataset, tableRows } from "./bench-api/check.ts";
import { loadDataset } from "./bench-api/dataset.ts";
import { type DeepPair, deepPageOperations } from "./bench-api/deep-pages.ts";
import { benchLimiter } from "./bench-api/limiter.ts";
import { measure } from "./bench-api/measure.ts";
import { benchOperations, type Operation } from "./bench-api/operations.ts";
import { benchPooler, poolerTable } from "./bench-api/pooler.ts";
import { deepTable, growthTable, type SizeRun, sizeTable, TARGETS, verdicts } from "./bench-api/report.ts";
import { type BenchServer, openBenchServer } from "./bench-api/server.ts";
import { benchStandby, standbyTable } from "./bench-api/standby.ts";

const { values: args } = parseArgs({
  options: {
    sales: { type: "string", default: "1000000" },
    small: { type: "string", default: "10000" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "32" },
    "database-url": { type: "string" },
    seed: { type: "string", default: "mintlens" },
    "batch-rows": { type: "string", default: "20000" },
    check: { type: "boolean", default: false },
    cache: { type: "string", default: "both" },
    pooler: { type: "boolean", default: false },
    standby: { type: "boolean", default: false },
    limiter: { type: "boolean", default: false },
    rounds: { type: "string", default: "3" },
  },
});

const positive = (name: string, value: string, allowZero = false): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || (n === 0 && !allowZero)) {
    throw new Error(`--${name} must be a ${allowZero ? "non-negative" : "positive"} integer, not ${value}`);
  }
  return n;
};
const LARGE = positive("sales", args.sales);
const SMALL = positive("small", args.small, true);
const SIZES = args.pooler || args.standby ? [LARGE] : SMALL > 0 && SMALL < LARGE ? [SMALL, LARGE] : [LARGE];
const SETTINGS = {
  duration: positive("duration", args.duration),
  warmup: positive("warmup", args.warmup, true),
  connections: positive("connections", args.connections),
};
const BATCH_ROWS = positive("batch-rows", args["batch-rows"]);
if (!["both", "on", "off"].includes(args.cache))
  throw new Error(`--cache is both, on or off, not ${args.cache}`);
// The server's answer cache on (its default) and off: the cache answers repeated questions, the
// store every other one, and both matter.
const MODES: SizeRun["mode"][] =
  args.cache === "both" ? ["cached", "uncached"] : args.cache === "on" ? ["cached"] : ["uncached"];
const CHAIN_ID = 31337;
const CHAIN_NAME = "bench";

const say = (message: string) => process.stdout.write(`${message}\n`);

let server: BenchServer | undefined;
let cluster: ReplicaCluster | undefined;
let api: ApiProcess | undefined;
async function cleanUp(): Promise<void> {
  const running = api;
  api = undefined;
  await running?.stop();
  const opened = server;
  server = undefined;
  await opened?.stop();
  const replicas = cluster;
  cluster = undefined;
  await replicas?.stop();
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping`);
    void cleanUp().finally(() =>
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1)),
    );
  });
}

async function benchSize(opened: BenchServer, sales: number): Promise<SizeRun[]> {
  const name = `mintlens_bench_api_${sales}`;
  const url = await opened.createDatabase(name);
  try {
    const load = await loadDataset({
      url,
      sales,
      seed: args.seed,
      chainId: CHAIN_ID,
      chainName: CHAIN_NAME,
      batchRows: BATCH_ROWS,
      now: Math.floor(Date.now() / 1000),
      log: say,
    });
    const { totals } = load;
    say(
      `loaded in ${load.loadSeconds.toFixed(1)} s (${load.batches} batches, ${totals.blocks.toLocaleString("en")} blocks; ` +
        `${Math.round(totals.sales / load.loadSeconds).toLocaleString("en")} sales/s), then VACUUM ANALYZE ${load.vacuumSeconds.toFixed(1)} s; ` +
        `${totals.sweeps.toLocaleString("en")} sweeps, ${totals.mintTransactions.toLocaleString("en")} mint transactions, ` +
        `${totals.transfers.toLocaleString("en")} transfers, ${totals.burns.toLocaleString("en")} burns`,
    );
    const sql = await connectDatabase(url, { max: 2 });
    let drawn: Awaited<ReturnType<typeof benchOperations>>;
    try {
      const rows = await tableRows(sql, CHAIN_ID);
      say(
        `rows: ${Object.entries(rows)
          .map(([table, n]) => `${table} ${n.toLocaleString("en")}`)
          .join(", ")}`,
      );
      // Measured only on a dataset where every operation has something to answer.
      const problems = await checkDataset(sql, CHAIN_ID, Math.floor(Date.now() / 1000), say);
      if (problems.length > 0)
        throw new Error(`the dataset is unfit to measure:\n  ${problems.join("\n  ")}`);
      if (args.check) return [];
      drawn = await benchOperations(sql, CHAIN_ID, args.seed);
      for (const note of drawn.notes) say(note);
    } finally {
      await sql.end({ timeout: 5 });
    }

    const apiKey = await createApiKey(url, "bench");
    // The bare route and one operation of each kind that reads the store.
    const kinds = new Set<string>();
    const chosen = drawn.operations.filter((o) => !kinds.has(o.kind) && kinds.add(o.kind));
    if (cluster !== undefined) {
      say(
        `each operation ${SETTINGS.warmup} s of warm-up, then ${SETTINGS.duration} s with ${SETTINGS.connections} connections; on the primary | on the standby`,
      );
      const measured = await benchStandby({
        cluster,
        database: name,
        chainName: CHAIN_NAME,
        chainId: CHAIN_ID,
        scratch: opened.scratch,
        operations: chosen,
        settings: { ...SETTINGS, apiKey, postgresPid: undefined },
        say,
      });
      say(`\n${standbyTable(measured)}`);
      return [];
    }
    if (args.pooler) {
      say(
        `each operation ${SETTINGS.warmup} s of warm-up, then ${SETTINGS.duration} s with ${SETTINGS.connections} connections; direct | through PgBouncer`,
      );
      const pooled = await benchPooler({
        url,
        chainName: CHAIN_NAME,
        chainId: CHAIN_ID,
        scratch: opened.scratch,
        operations: chosen,
        settings: { ...SETTINGS, apiKey, postgresPid: opened.pid },
        say,
      });
      say(`\n${poolerTable(pooled)}`);
      return [];
    }
    const runs: SizeRun[] = [];
    const operations: Operation[] = [...drawn.operations];
    let pairs: DeepPair[] | undefined;
    for (const mode of MODES) {
      api = await startApi({
        databaseUrl: url,
        chainName: CHAIN_NAME,
        chainId: CHAIN_ID,
        logFile: join(opened.scratch, `serve-${sales}-${mode}.log`),
        ...(mode === "uncached" ? { responseCacheMb: 0 } : {}),
      });
      say(
        `serving at ${api.url} (${mode}); each operation ${SETTINGS.warmup} s of warm-up, then ${SETTINGS.duration} s ` +
          `with ${SETTINGS.connections} connections`,
      );
      if (pairs === undefined) {
        // Page tokens hold a position, not an answer: found once, they serve both servers.
        const deep = await deepPageOperations(api.url, apiKey, drawn.deepLists);
        for (const note of deep.notes) say(`  ${note}`);
        operations.push(...deep.operations);
        pairs = deep.pairs;
      }
      const measurements = [];
      for (const operation of operations) {
        const m = await measure(api.url, operation, {
          ...SETTINGS,
          apiKey,
          apiPid: api.pid,
          postgresPid: opened.pid,
        });
        say(
          `  ${operation.name.padEnd(44)} ${Math.round(m.perSecond).toString().padStart(6)} req/s, ` +
            `p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, non-2xx ${m.non2xx + m.failed}`,
        );
        measurements.push(m);
      }
      await api.stop();
      api = undefined;
      runs.push({ sales, mode, measurements, pairs });
    }
    return runs;
  } finally {
    await opened.dropDatabase(name);
  }
}

async function main(): Promise<void> {
  if (args.standby) {
    const unavailable = replicaClusterUnavailable();
    if (unavailable !== undefined) throw new Error(`--standby: ${unavailable}`);
    cluster = await startReplicaCluster();
  }
  server = await openBenchServer(cluster?.primaryUrl("postgres") ?? args["database-url"]);
  if (args.limiter) {
    await benchLimiter(server, { ...SETTINGS, rounds: positive("rounds", args.rounds) }, say);
    return;
  }
  const runs: SizeRun[] = [];
  for (const sales of SIZES) {
    say(`\n== ${sales.toLocaleString("en")} sales ==`);
    runs.push(...(await benchSize(server, sales)));
  }
  if (runs.length === 0) return;
  say("");
  for (const run of runs) say(`${sizeTable(run)}\n`);
  say(
    `Targets: p99 < ${TARGETS.p99.cached} ms with the answer cache, < ${TARGETS.p99.uncached} ms without it; ` +
      `series and rankings p99 within ${TARGETS.growth}x from the small market to the large one; every operation ` +
      `≥ ${TARGETS.throughput * 100}% of the bare route's requests/s; a 1000th page's p99 within ${TARGETS.deepPage}x its first page's.`,
  );
  for (const mode of MODES) {
    const ofMode = runs.filter((r) => r.mode === mode);
    const [small, large] = [ofMode[0], ofMode.at(-1)];
    say(`\n${mode === "cached" ? "With the answer cache (the default)" : "Without the answer cache"}:\n`);
    if (small && large && small !== large) say(`${growthTable(small, large)}\n`);
    for (const run of ofMode) if (run.pairs.length > 0) say(`${deepTable(run)}\n`);
    const { lines, passed } = verdicts(ofMode);
    for (const line of lines) say(line);
    say(passed ? "All targets met." : "Some targets are not met.");
  }
}

try {
  await main();
} finally {
  await cleanUp();
}
