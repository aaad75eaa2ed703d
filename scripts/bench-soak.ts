/**
 * Soak benchmark: whether anything in a running Mintlens grows with uptime. It runs `mintlens
 * demo` (the indexer following a live anvil chain that gets new activity every 3 s, each
 * transaction its own block; the metadata worker; the API) in a process of its own, keeps the API
 * under steady load with autocannon (every REST operation in turn, and the cached images), keeps
 * the metadata worker busy by queueing a collection for refresh every few seconds, and reads the
 * process's /metrics every 5 s, to make one sample per interval (bench-soak/series.ts says how):
 * RSS and heap used (each at its lowest in the interval), event-loop delay (the median of the
 * interval's p99s), active handles and resources, open file descriptors and abort listeners.
 *
 * At the end it fits a least-squares line to each series over the last 15 minutes and judges it
 * flat or growing (the rule is in bench-soak/trend.ts, and printed), prints a table, writes the
 * samples and verdicts to .bench/soak-<time>.json, and exits 1 if a series grows, 2 if the work it
 * was meant to run did not go on in the window (then the verdicts do not count).
 *
 * Usage: npm run bench:soak [-- --minutes 20 --interval-s 60 --window 15 --rate 50
 *          --connections 8 --refresh-s 15 --response-cache 4 --days 30 --seed mintlens]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Address } from "../src/core/hex.ts";
import { connectDatabase, type Sql } from "../src/store/pg/database.ts";
import { startEmbeddedPostgres } from "../src/store/pg/embedded.ts";
import { operationsFor } from "./bench-api/operations.ts";
import { collectionsWithMetadata, type MetadataChurn, startMetadataChurn } from "./bench-soak/churn.ts";
import { type DemoProcess, logTail, startDemo } from "./bench-soak/demo-process.ts";
import { type LoadOperation, type SteadyLoad, startSteadyLoad } from "./bench-soak/load.ts";
import { ruleText, verdictsOf, verdictTable, workloadProblems } from "./bench-soak/report.ts";
import { JUDGED, readScrape, type Sample, sampleOf } from "./bench-soak/series.ts";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "20" },
    "interval-s": { type: "string", default: "60" },
    window: { type: "string", default: "15" },
    rate: { type: "string", default: "50" },
    connections: { type: "string", default: "8" },
    "refresh-s": { type: "string", default: "15" },
    "response-cache": { type: "string", default: "4" },
    days: { type: "string", default: "30" },
    seed: { type: "string", default: "mintlens" },
  },
});

const positive = (name: string, value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${value}`);
  return n;
};
const MINUTES = positive("minutes", args.minutes);
const INTERVAL_S = positive("interval-s", args["interval-s"]);
const RATE = positive("rate", args.rate);
const CONNECTIONS = Math.round(positive("connections", args.connections));
const REFRESH_S = positive("refresh-s", args["refresh-s"]);
const DAYS = Math.round(positive("days", args.days));
// Small, so that the cache is full, and evicting, before the window begins: its entries of older
// data versions only age out of it, so the default 64 MiB fills for minutes at this rate (the heap
// still climbing after 3), and its filling would read as growth.
const RESPONSE_CACHE_MB = Math.round(positive("response-cache", args["response-cache"]));
const INTERVAL_MIN = INTERVAL_S / 60;
// A run shorter than the window is judged whole: warm-up included, so say so.
const WINDOW = Math.min(positive("window", args.window), MINUTES);
const SAMPLES = Math.floor((MINUTES * 60) / INTERVAL_S);
if (Math.floor(WINDOW / INTERVAL_MIN) + 1 < 3)
  throw new Error(`a ${WINDOW}-minute window holds fewer than 3 samples at --interval-s ${INTERVAL_S}`);
const CHAIN_ID = 31337;
/** Scrapes per sample: every 5 s (or every interval, if shorter). */
const SCRAPE_S = Math.min(5, INTERVAL_S);
const READY_TIMEOUT_MS = 15 * 60_000;
const METADATA_TIMEOUT_MS = 5 * 60_000;
const REPO = fileURLToPath(new URL("..", import.meta.url));

const say = (message: string) => process.stdout.write(`${message}\n`);

const scratch = mkdtempSync(join(tmpdir(), "mintlens-soak-"));
const logFile = join(scratch, "demo.log");
let demo: DemoProcess | undefined;
let sql: Sql | undefined;
let load: SteadyLoad | undefined;
let churn: MetadataChurn | undefined;
let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    await churn?.stop().catch(() => {});
    await load?.stop().catch(() => {});
    await sql?.end({ timeout: 5 }).catch(() => {});
    await demo?.stop();
    rmSync(scratch, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping`);
    void cleanUp().finally(() =>
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1)),
    );
  });
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return response.text();
}

/** The demo's connection details are only in its data directory: its PostgreSQL is found running there. */
async function openDemoDatabase(running: DemoProcess): Promise<Sql> {
  const found = await startEmbeddedPostgres({ dataDir: running.databaseDir });
  if (found.pid !== undefined) {
    await found.stop();
    throw new Error(`the demo's PostgreSQL was not running in ${running.databaseDir}`);
  }
  return connectDatabase(found.url, { max: 2, applicationName: "mintlens-soak" });
}

/** What the load asks: every operation of the API benchmark on the demo's data, and its cached images. */
async function loadOperations(db: Sql): Promise<LoadOperation[]> {
  const images = await db<{ uri: string }[]>`
    SELECT DISTINCT image_uri AS uri FROM token_metadata
    WHERE chain_id = ${CHAIN_ID} AND image_uri LIKE '/images/%' ORDER BY image_uri LIMIT 200`;
  const operations = await operationsFor(db, CHAIN_ID, args.seed);
  return [
    ...operations.map((o) => ({ name: o.name, paths: o.paths })),
    { name: "images", paths: images.map((r) => r.uri) },
  ];
}

async function waitForMetadata(db: Sql): Promise<Address[]> {
  const deadline = Date.now() + METADATA_TIMEOUT_MS;
  for (;;) {
    const collections = await collectionsWithMetadata(db, CHAIN_ID);
    const [images] = await db<{ n: number }[]>`
      SELECT count(*)::int AS n FROM token_metadata WHERE chain_id = ${CHAIN_ID} AND image_uri LIKE '/images/%'`;
    if (collections.length > 0 && (images?.n ?? 0) > 0) return collections;
    if (Date.now() > deadline)
      throw new Error("the metadata worker stored no token with an image within 5 minutes");
    await sleep(2000);
  }
}

function sampleLine(sample: Sample, before: Sample): string {
  const parts = JUDGED.map((spec) => `${spec.label} ${spec.format(sample.judged[spec.key] ?? Number.NaN)}`);
  const r = sample.recorded;
  const b = before.recorded;
  return (
    `  ${sample.t.toFixed(1).padStart(5)} min  ${parts.join(", ")}; ` +
    `+${r.requests - b.requests} requests, +${r.indexedBlock - b.indexedBlock} blocks, +${r.metadataTokens - b.metadataTokens} metadata tokens`
  );
}

async function main(): Promise<number> {
  say(
    `soak: ${MINUTES} min of load, a sample every ${INTERVAL_S} s, judged over the last ${WINDOW} min` +
      `${WINDOW < positive("window", args.window) ? " (the whole run: shorter than the window, so warm-up is judged too)" : ""}`,
  );
  say(
    `starting mintlens demo (${DAYS} days of history, seed ${args.seed}, answer cache ${RESPONSE_CACHE_MB} MiB) in ${scratch}`,
  );
  const started = Date.now();
  demo = await startDemo({
    dataDir: join(scratch, "data"),
    days: DAYS,
    seed: args.seed,
    responseCacheMb: RESPONSE_CACHE_MB,
    logFile,
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  const running = demo;
  say(
    `demo (pid ${running.pid}) indexed its history in ${((Date.now() - started) / 1000).toFixed(0)} s: REST ${running.restUrl}, metrics ${running.metricsUrl}`,
  );
  const died = running.exited.then((how) => {
    throw new Error(`mintlens demo exited (${how}) during the soak; its output ends:\n${logTail(logFile)}`);
  });
  // Only raised when awaited in a race below; never unhandled meanwhile.
  died.catch(() => {});

  sql = await openDemoDatabase(running);
  const collections = await waitForMetadata(sql);
  const operations = await loadOperations(sql);
  say(
    `load: ${RATE} requests/s over ${CONNECTIONS} connections, in turn over ${operations.map((o) => `${o.name} (${o.paths.length})`).join(", ")}`,
  );
  say(`metadata: one of ${collections.length} collections queued for refresh every ${REFRESH_S} s`);

  // Also resets the delay histogram, so the first period starts with the load.
  const baseline = sampleOf([readScrape(await scrape(running.metricsUrl))], 0, new Date());
  const loadStart = Date.now();
  load = startSteadyLoad({
    url: running.restUrl,
    apiKey: running.apiKey,
    operations,
    rate: RATE,
    connections: CONNECTIONS,
    seconds: Math.ceil(MINUTES * 60) + 60,
  });
  churn = startMetadataChurn({ sql, chainId: CHAIN_ID, collections, everyMs: REFRESH_S * 1000 });

  const samples: Sample[] = [];
  let scrapes: Map<string, number>[] = [];
  for (let k = 1; samples.length < SAMPLES; k++) {
    const due = k * SCRAPE_S;
    await Promise.race([sleep(Math.max(0, loadStart + due * 1000 - Date.now())), died]);
    scrapes.push(readScrape(await Promise.race([scrape(running.metricsUrl), died])));
    // A period ends at the first scrape at or past its end.
    if (due + 1e-9 < (samples.length + 1) * INTERVAL_S) continue;
    const sample = sampleOf(scrapes, (Date.now() - loadStart) / 60_000, new Date());
    scrapes = [];
    say(sampleLine(sample, samples.at(-1) ?? baseline));
    samples.push(sample);
  }
  const loadCounts = load.counts();
  const failures = await load.stop();
  load = undefined;
  const churned = churn.counts();
  await churn.stop();
  churn = undefined;

  const verdicts = verdictsOf(samples, WINDOW, INTERVAL_MIN);
  const problems = workloadProblems(baseline, samples, {
    minutes: WINDOW,
    intervalMinutes: INTERVAL_MIN,
    rate: RATE,
  });
  const statuses = Object.entries(loadCounts.statuses)
    .map(([status, n]) => `${n} × ${status}`)
    .join(", ");
  say("");
  say(
    `load: ${loadCounts.answered} answers (${statuses}), ${failures.errors} errors, ${failures.timeouts} timeouts; ` +
      `metadata: ${churned.refreshes} refreshes queued ${churned.queued} tokens (${churned.failed} failed)`,
  );
  say("");
  say(`Over the last ${WINDOW} min (${verdicts[0]?.trend.samples ?? 0} samples):`);
  say("");
  say(verdictTable(verdicts));
  say("");
  say(ruleText());
  const growing = verdicts.filter((v) => v.trend.grows);
  say("");
  if (problems.length > 0) {
    say(
      `The work the soak is meant to run did not go on, so the verdicts do not count: ${problems.join("; ")}.`,
    );
  } else if (growing.length > 0) {
    say(`Grows with uptime: ${growing.map((v) => v.label).join(", ")}.`);
  } else {
    say("Nothing grows: every series is flat.");
  }

  const out = join(REPO, ".bench", `soak-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  mkdirSync(join(REPO, ".bench"), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        settings: {
          minutes: MINUTES,
          intervalSeconds: INTERVAL_S,
          windowMinutes: WINDOW,
          rate: RATE,
          connections: CONNECTIONS,
          refreshSeconds: REFRESH_S,
          days: DAYS,
          seed: args.seed,
          responseCacheMb: RESPONSE_CACHE_MB,
        },
        rule: ruleText(),
        load: {
          ...loadCounts,
          ...failures,
          operations: operations.map((o) => ({ name: o.name, paths: o.paths.length })),
        },
        metadata: churned,
        baseline,
        samples,
        verdicts: verdicts.map((v) => ({ ...v, verdict: v.trend.grows ? "grows" : "flat" })),
        workloadProblems: problems,
      },
      null,
      2,
    )}\n`,
  );
  say(`samples and verdicts: ${out}`);
  return problems.length > 0 ? 2 : growing.length > 0 ? 1 : 0;
}

try {
  process.exitCode = await main();
} finally {
  await cleanUp();
}
