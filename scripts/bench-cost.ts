/**
 * Cost benchmark: what one API key at its rate limit can make the server do to everyone else. It
 * loads a year of a synthetic market (20,000 sales by default) into a fresh database through the
 * indexer's own writers, and serves it twice with `mintlens serve`:
 *
 * 1. the old policy emulated: no limit (`--rate-limit 0`), the heavy key pacing itself at 30
 *    requests a second, which a flat limit of 30 requests a second let it send whatever their size;
 * 2. weighted: the default limit (30 points a second, burst 10; an answer costs a point per started
 *    64 KiB of JSON), the heavy key sending at the same 30 requests a second.
 *
 * In each, two keys send at once for `--duration` seconds after `--warmup`: the heavy one asks for
 * a year of hourly prices (8,760 points) with a different `timestampLt` every time, so the answer
 * cache never helps; the light one asks small questions (rankings, contract pages) that the cache
 * answers. Each key sends on a timer, evenly spread, with at most 10 (heavy) or 20 (light) requests
 * unanswered at once, as a client with that many connections. It prints, per server, the heavy key's answers a second by status, the cores the API
 * process, PostgreSQL and the load generator used, and the light key's p50 and p99 latency; then
 * the API process's CPU under the old policy over the weighted one.
 *
 * Usage: npm run bench:cost [-- --sales 20000 --duration 20 --warmup 5 --heavy-rate 30
 *          --light-rate 20 --database-url <url> --seed mintlens --batch-rows 20000]
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { answerCost, DEFAULT_BURST, DEFAULT_POINTS_PER_SECOND } from "../src/api/guard.ts";
import type { Address } from "../src/core/hex.ts";
import { connectDatabase, toHex } from "../src/store/pg/database.ts";
import { type ApiProcess, createApiKey, startApi } from "./bench-api/api-process.ts";
import { loadDataset } from "./bench-api/dataset.ts";
import { operationsFor } from "./bench-api/operations.ts";
import { type BenchServer, openBenchServer } from "./bench-api/server.ts";
import { measureWindow, type PacedClient, requestsAtMost } from "./bench-cost/clients.ts";
import { type ModeRun, modeTable } from "./bench-cost/report.ts";

const { values: args } = parseArgs({
  options: {
    sales: { type: "string", default: "20000" },
    duration: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
    "heavy-rate": { type: "string", default: "30" },
    "light-rate": { type: "string", default: "20" },
    "database-url": { type: "string" },
    seed: { type: "string", default: "mintlens" },
    "batch-rows": { type: "string", default: "20000" },
  },
});

const positive = (name: string, value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, not ${value}`);
  return n;
};
const SALES = positive("sales", args.sales);
const DURATION = positive("duration", args.duration);
const WARMUP = positive("warmup", args.warmup);
const HEAVY_RATE = positive("heavy-rate", args["heavy-rate"]);
const LIGHT_RATE = positive("light-rate", args["light-rate"]);
const BATCH_ROWS = positive("batch-rows", args["batch-rows"]);
/** Requests each key may have unanswered at once: its connections. */
const HEAVY_CONNECTIONS = 10;
const LIGHT_CONNECTIONS = 20;
/** Collections the heavy key's series rotate over: the most traded. */
const HEAVY_COLLECTIONS = 10;
const HOUR = 3600;
const DAY = 86_400;
const CHAIN_ID = 31337;
const CHAIN_NAME = "bench";
const DATABASE = "mintlens_bench_cost";

const MODES = [
  { label: `old policy emulated: no limit, heavy key at ${HEAVY_RATE} requests/s`, rateLimit: 0 },
  {
    label: `weighted: ${DEFAULT_POINTS_PER_SECOND} points/s, burst ${DEFAULT_BURST}`,
    rateLimit: DEFAULT_POINTS_PER_SECOND,
  },
];

const say = (message: string) => process.stdout.write(`${message}\n`);

let server: BenchServer | undefined;
let api: ApiProcess | undefined;
async function cleanUp(): Promise<void> {
  const running = api;
  api = undefined;
  await running?.stop();
  const opened = server;
  server = undefined;
  await opened?.dropDatabase(DATABASE).catch(() => {});
  await opened?.stop();
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping`);
    void cleanUp().finally(() =>
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1)),
    );
  });
}

/** `t` (unix seconds) as `timestampLt` writes it. */
const rfc3339 = (t: number) => new Date(t * 1000).toISOString().replace(".000Z", "Z");

/**
 * A year of hourly prices per path, each ending at a different hour before `end`, so that no two
 * are the same question; `count` of them, over `collections` in turn.
 */
function yearlyHourlyPrices(collections: readonly Address[], end: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const contract = collections[i % collections.length] as Address;
    return `/collections/v1beta2/${contract}/prices/DURATION_365_DAYS/GROUP_BY_PERIOD_1_HOUR?timestampLt=${rfc3339(end - i * HOUR)}`;
  });
}

/** Asks `path` once on the idle server: the answer's points and JSON size, and how long it took. */
async function probe(
  url: string,
  path: string,
  apiKey: string,
): Promise<{ points: number; bytes: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${url}${path}`, {
    headers: { "x-api-key": apiKey },
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 200)}`);
  const { dataPoints } = JSON.parse(text) as { dataPoints?: unknown[] };
  return { points: dataPoints?.length ?? 0, bytes: Buffer.byteLength(text), ms };
}

async function main(): Promise<void> {
  const opened = await openBenchServer(args["database-url"]);
  server = opened;
  const url = await opened.createDatabase(DATABASE);
  const now = Math.floor(Date.now() / 1000);
  const load = await loadDataset({
    url,
    sales: SALES,
    seed: args.seed,
    chainId: CHAIN_ID,
    chainName: CHAIN_NAME,
    batchRows: BATCH_ROWS,
    now,
    log: say,
  });
  say(
    `loaded in ${load.loadSeconds.toFixed(1)} s (${load.batches} batches), then VACUUM ANALYZE ${load.vacuumSeconds.toFixed(1)} s`,
  );

  const sql = await connectDatabase(url, { max: 2 });
  let collections: Address[];
  let lightPaths: string[];
  try {
    collections = (
      await sql<{ contract: Uint8Array }[]>`
        SELECT contract FROM collection_days WHERE chain_id = ${CHAIN_ID}
        GROUP BY contract ORDER BY sum(sales) DESC, contract LIMIT ${HEAVY_COLLECTIONS}`
    ).map((r) => toHex(r.contract) as Address);
    const operations = await operationsFor(sql, CHAIN_ID, args.seed);
    lightPaths = operations
      .filter((o) => o.name === "top collections" || o.name === "contracts")
      .flatMap((o) => o.paths);
  } finally {
    await sql.end({ timeout: 5 });
  }
  if (collections.length === 0 || lightPaths.length === 0) throw new Error("the dataset has no collections");

  // Whole hours back from the start of the current day: the default end of a series, and before it.
  const dayStart = Math.floor(now / DAY) * DAY;
  const heavyCount = requestsAtMost(HEAVY_RATE, WARMUP, DURATION);
  const heavyPaths = yearlyHourlyPrices(collections, dayStart, heavyCount + 1);
  // Asked once before the load, so it is none of the loaded ones.
  const probePath = heavyPaths.pop() as string;
  const heavyKey = await createApiKey(url, "heavy");
  const lightKey = await createApiKey(url, "light");

  const runs: ModeRun[] = [];
  for (const [index, mode] of MODES.entries()) {
    api = await startApi({
      databaseUrl: url,
      chainName: CHAIN_NAME,
      chainId: CHAIN_ID,
      logFile: join(opened.scratch, `serve-${index}.log`),
      rateLimit: mode.rateLimit,
    });
    say(`\n== ${mode.label} ==`);
    if (index === 0) {
      const answer = await probe(api.url, probePath, heavyKey);
      if (answer.points !== 8760)
        throw new Error(`a year of hourly prices has ${answer.points} points, not 8,760`);
      say(
        `a year of hourly prices: ${answer.points.toLocaleString("en")} points, ${answer.bytes.toLocaleString("en")} bytes of JSON ` +
          `(${answerCost(answer.bytes)} points under the weighted limit), ${answer.ms.toFixed(0)} ms on the idle server`,
      );
    }
    say(
      `heavy key: ${HEAVY_RATE} requests/s, at most ${HEAVY_CONNECTIONS} unanswered, ${heavyPaths.length} different series; ` +
        `light key: ${LIGHT_RATE} requests/s, at most ${LIGHT_CONNECTIONS} unanswered, ${lightPaths.length} cached questions; ` +
        `${WARMUP} s of warm-up, then ${DURATION} s measured`,
    );
    const clients: PacedClient[] = [
      { apiKey: heavyKey, paths: heavyPaths, rate: HEAVY_RATE, inFlight: HEAVY_CONNECTIONS },
      { apiKey: lightKey, paths: lightPaths, rate: LIGHT_RATE, inFlight: LIGHT_CONNECTIONS },
    ];
    const window = await measureWindow({
      url: api.url,
      clients,
      warmup: WARMUP,
      duration: DURATION,
      apiPid: api.pid,
      postgresPid: opened.pid,
    });
    await api.stop();
    api = undefined;
    const [heavy, light] = window.clients;
    if (heavy === undefined || light === undefined) throw new Error("a client reported nothing");
    if (heavy.sent > heavyPaths.length)
      say(
        `note: the heavy key sent ${heavy.sent} requests over ${heavyPaths.length} paths; some were repeated`,
      );
    const run = { label: mode.label, window, heavy, light };
    say(modeTable([run]));
    runs.push(run);
  }

  say("\nThe heavy key asks for a year of hourly prices, each with its own timestampLt (never cached);");
  say(
    "the light key asks rankings and contract pages (cached). Per second and cores over the measured window:\n",
  );
  say(modeTable(runs));
  const [old, weighted] = runs;
  if (old && weighted && weighted.window.apiCpu > 0) {
    const ratio = old.window.apiCpu / old.window.seconds / (weighted.window.apiCpu / weighted.window.seconds);
    say(`\nAPI process CPU, old policy over weighted: ${ratio.toFixed(1)}x`);
  }
}

try {
  await main();
} finally {
  await cleanUp();
}
