/**
 * The test suite: type-check and lint, then every tier with node's test runner, two files at a
 * time (each file has its own databases, anvils and ports), then the files that must run alone.
 * One report for the whole run, closing with node's own summary (`# pass N`, `# fail N`).
 *
 * Usage: node --import tsx scripts/test.ts [tier ...] [--database-only]
 *   tier             unit, integration, process, browser or generated; default every tier, after the check
 *   --database-only  only the files that use the test database server (MINTLENS_TEST_DATABASE_URL,
 *                    else an embedded PostgreSQL): a second server needs no other file run again
 *   --durations      every file's time, slowest first, instead of the slowest few
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { run } from "node:test";
import { type TestEvent as ReportedEvent, spec, tap } from "node:test/reporters";
import { parseArgs } from "node:util";
import { startEmbeddedPostgres } from "../src/store/pg/embedded.ts";
import { filesOutsideTiers, ROOT, TIERS, type Tier, tierFiles, usesTestDatabase } from "./test-files.ts";

/** Files that run after the others, one at a time, each with the machine to itself. */
const ALONE: Record<string, string> = {
  "test/process/indexer-resilience.test.ts": "kills the indexer at chosen moments and storms its connections",
  "test/process/cli-signals.test.ts": "signals processes and waits for them and their children to end",
  "test/integration/api-freshness.test.ts": "prints how long a new sale takes to show",
};

/**
 * The files that take longest when run two at a time (from the runs' "slowest files" lines), started
 * first: the run then ends with short files on both sides rather than one long file on one core and
 * the other idle. A file missing from this list only starts later.
 */
const LONGEST_FIRST = [
  "test/integration/store-read-plans.test.ts",
  "test/integration/demo-metadata.test.ts",
  "test/integration/indexer-hostile.test.ts",
  "test/integration/indexer-follow.test.ts",
  "test/process/cli-api.test.ts",
  "test/process/replica-cluster.test.ts",
  "test/integration/partial-history.test.ts",
  "test/integration/demo-activity.test.ts",
  "test/integration/api-paging.test.ts",
  "test/integration/api-traits.test.ts",
  "test/integration/spam-scenario.test.ts",
  "test/integration/api-transfers.test.ts",
  "test/integration/indexer-node-edges.test.ts",
  "test/integration/metadata-fairness.test.ts",
  "test/integration/api-floor.test.ts",
  "test/integration/api-readiness.test.ts",
  "test/integration/api-abuse.test.ts",
  "test/process/pgbouncer.test.ts",
  "test/integration/rate-limit-shared.test.ts",
];

/**
 * Files run at once (MINTLENS_TEST_CONCURRENCY, default 2). Many files spend much of their time
 * waiting on anvil, timers and child processes rather than on a core.
 */
const CONCURRENCY = Number(process.env.MINTLENS_TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) {
  throw new Error(
    `MINTLENS_TEST_CONCURRENCY must be a positive integer, not ${process.env.MINTLENS_TEST_CONCURRENCY}`,
  );
}
/** Per file: a hang fails its file instead of stalling the run. */
const FILE_TIMEOUT_MS = 300_000;
const SLOWEST_SHOWN = 8;

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "database-only": { type: "boolean", default: false },
    durations: { type: "boolean", default: false },
  },
});

const unknown = positionals.filter((p) => !(TIERS as readonly string[]).includes(p));
if (unknown.length > 0) fail(`unknown tier ${unknown.join(", ")}: the tiers are ${TIERS.join(", ")}`);
const outside = filesOutsideTiers();
if (outside.length > 0) {
  fail(
    `test files outside every tier would never run: ${outside.join(", ")}; move each into test/${TIERS.join(", test/")} (node --import tsx scripts/move-tests.ts <file> <tier> fixes its imports)`,
  );
}
for (const file of LONGEST_FIRST) {
  if (!TIERS.some((tier) => tierFiles(tier).includes(file)))
    fail(`${file}, listed to start first, is not a test file`);
}
for (const file of Object.keys(ALONE)) {
  if (!TIERS.some((tier) => tierFiles(tier).includes(file)))
    fail(`${file}, to be run alone, is not a test file`);
}

const tiers: readonly Tier[] = positionals.length > 0 ? (positionals as Tier[]) : TIERS;
const whole = positionals.length === 0 && !flags["database-only"];
let files = tiers.flatMap((tier) => tierFiles(tier));
if (flags["database-only"]) files = files.filter(usesTestDatabase);
if (files.length === 0) fail("no test file to run");

if (whole) {
  const check = spawnSync("npm", ["run", "check"], { cwd: ROOT, stdio: "inherit" });
  if (check.status !== 0) process.exit(check.status ?? 1);
}

// One embedded PostgreSQL for the whole run, unless a server is named: every file makes its own
// databases on it, as on CI's server, instead of creating and starting a cluster of its own.
const server =
  process.env.MINTLENS_TEST_DATABASE_URL || !files.some(usesTestDatabase)
    ? undefined
    : await startTestServer();

const rank = (file: string) => {
  const at = LONGEST_FIRST.indexOf(file);
  return at === -1 ? LONGEST_FIRST.length : at;
};
const together = files.filter((file) => !(file in ALONE)).sort((a, b) => rank(a) - rank(b));
const alone = files.filter((file) => file in ALONE);
const groups = [
  { files: together, concurrency: CONCURRENCY, what: `${CONCURRENCY} at a time` },
  { files: alone, concurrency: 1, what: "alone, one after another" },
].filter((group) => group.files.length > 0);

const SUMMARY = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/;

interface TestEvent {
  type: string;
  data: {
    nesting?: number;
    message?: string;
    name?: string;
    file?: string;
    testNumber?: number;
    count?: number;
    details?: { duration_ms?: number };
  };
}

/**
 * The events of each group's run, as one run: top-level tests numbered on, one plan, and one
 * summary that adds the groups' up, preceded by the slowest files and each group's time.
 */
async function* events(): AsyncGenerator<TestEvent> {
  const totals = new Map<string, number>();
  const durations: { file: string; seconds: number }[] = [];
  const times: string[] = [];
  let numbered = 0;
  let planned = 0;
  for (const group of groups) {
    const started = performance.now();
    let last = 0;
    const stream = run({ files: group.files, concurrency: group.concurrency, timeout: FILE_TIMEOUT_MS });
    for await (const event of stream as AsyncIterable<TestEvent>) {
      const { data } = event;
      if (data.nesting === 0) {
        const summary = event.type === "test:diagnostic" ? SUMMARY.exec(data.message ?? "") : null;
        if (summary) {
          totals.set(summary[1] as string, (totals.get(summary[1] as string) ?? 0) + Number(summary[2]));
          continue;
        }
        if (event.type === "test:plan") {
          planned += data.count ?? 0;
          continue;
        }
        if (data.testNumber !== undefined) {
          if (event.type === "test:pass" || event.type === "test:fail")
            last = Math.max(last, data.testNumber);
          event.data = { ...data, testNumber: data.testNumber + numbered };
        }
        // Each file ends with an event named after it.
        if (
          event.type === "test:complete" &&
          data.file !== undefined &&
          resolve(ROOT, data.name ?? "") === data.file
        ) {
          durations.push({
            file: relative(ROOT, data.file),
            seconds: (data.details?.duration_ms ?? 0) / 1000,
          });
        }
      }
      yield event;
    }
    numbered += last;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    times.push(
      `${group.files.length} file${group.files.length === 1 ? "" : "s"} ${group.what}: ${seconds} s`,
    );
  }
  const note = (message: string): TestEvent => ({ type: "test:diagnostic", data: { nesting: 0, message } });
  yield { type: "test:plan", data: { nesting: 0, count: planned } };
  durations.sort((a, b) => b.seconds - a.seconds);
  const shown = flags.durations ? durations : durations.slice(0, SLOWEST_SHOWN);
  const listed = shown.map((d) => `${d.file} ${d.seconds.toFixed(1)} s`);
  if (flags.durations) for (const line of listed) yield note(line);
  else yield note(`slowest files: ${listed.join(", ")}`);
  for (const time of times) yield note(time);
  for (const [name, value] of totals) {
    yield note(`${name} ${name === "duration_ms" ? value.toFixed(3) : value}`);
  }
  if ((totals.get("fail") ?? 0) > 0 || (totals.get("cancelled") ?? 0) > 0) process.exitCode = 1;
}

// What node's own runner picks: spec for a terminal, TAP for a log.
const report = events() as unknown as AsyncGenerator<ReportedEvent, void>;
try {
  if (process.stdout.isTTY) await pipeline(report, new spec(), process.stdout);
  else await pipeline(report, tap, process.stdout);
} finally {
  await server?.stop();
}

/** The embedded PostgreSQL in a directory of its own, handed to the test files through the environment. */
async function startTestServer(): Promise<{ stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "mintlens-test-pg-"));
  const embedded = await startEmbeddedPostgres({ dataDir: dir });
  process.env.MINTLENS_TEST_DATABASE_URL = embedded.url;
  const stop = async () => {
    await embedded.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  // A Ctrl+C ends the test files at once (they share the terminal's signals); the server is ours to stop.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      void stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    });
  }
  return { stop };
}

function fail(message: string): never {
  process.stderr.write(`scripts/test.ts: ${message}\n`);
  process.exit(2);
}
