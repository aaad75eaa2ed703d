/**
 * The live event stream's benchmark. In one run it measures:
 *   (a) backfill: one consumer reading a long history from the oldest cursor, over gRPC and over
 *       Server-Sent Events in turn, from a real `mintlens serve` (its own process) on a store whose
 *       outbox holds --transfers transfers (about 2.9 events each): events per second at the
 *       consumer and the server's CPU per 1,000 events; target at least 20,000 events/s;
 *   (b) latency: a chain on anvil kept busy by the demo's live activity, indexed as it goes by the
 *       indexer's own loop in this process (which notes when each batch commits), a gRPC and an SSE
 *       consumer following it live through `mintlens serve`: the time from a batch's commit to each
 *       of its events' arrival; target p99 under 1 s;
 *   (c) with --outbox: what writing the outbox costs indexing, by running
 *       `bench:ingest --compare-outbox` (target 1.15× the CPU per NFT event without it).
 * Usage: npm run bench:stream [-- --transfers 300000 --rounds 3 --live-seconds 30 --outbox --outbox-runs 3]
 * Take /tmp/mintlens-cpu.lock around it on a shared machine.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { createChainClient } from "../src/chain/client.ts";
import { createLogger } from "../src/core/logger.ts";
import { runLiveActivity } from "../src/demo/live.ts";
import { startAnvil } from "../src/devchain/anvil.ts";
import { runChainIndexer } from "../src/indexer/chain-indexer.ts";
import { inspectContract } from "../src/indexer/classify/inspect.ts";
import { connectDatabase, type Sql } from "../src/store/pg/database.ts";
import { startEmbeddedPostgres } from "../src/store/pg/embedded.ts";
import { migrate } from "../src/store/pg/migrate.ts";
import { processTreeCpu } from "./bench/process-cpu.ts";
import { type ApiProcess, createApiKey, startApi } from "./bench-api/api-process.ts";
import { type Consumer, grpcConsumer, type OnEvent, sseConsumer } from "./bench-stream/consumers.ts";
import { writeOutboxHistory } from "./bench-stream/outbox-store.ts";

const { values: args } = parseArgs({
  options: {
    transfers: { type: "string", default: "300000" },
    rounds: { type: "string", default: "3" },
    "live-seconds": { type: "string", default: "30" },
    outbox: { type: "boolean", default: false },
    "outbox-runs": { type: "string", default: "3" },
    skip: { type: "string", default: "" },
  },
});
const TRANSFERS = Number(args.transfers);
const ROUNDS = Number(args.rounds);
const LIVE_SECONDS = Number(args["live-seconds"]);
for (const [name, value] of [
  ["--transfers", TRANSFERS],
  ["--rounds", ROUNDS],
  ["--live-seconds", LIVE_SECONDS],
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
}
const SKIP = new Set(args.skip.split(",").filter((s) => s !== ""));
const BACKFILL_TARGET = 20_000;
const LATENCY_TARGET_MS = 1_000;
const BACKFILL_CHAIN = 31_337;
const BENCH_DIR = resolve(".bench");
/** A backfill that takes longer than this is stopped: something is wrong. */
const BACKFILL_TIMEOUT_MS = 600_000;

interface Server {
  url: string;
  stop: () => Promise<void>;
}

async function startServer(): Promise<Server> {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} };
  mkdirSync(BENCH_DIR, { recursive: true });
  const embedded = await startEmbeddedPostgres({ dataDir: join(BENCH_DIR, "pg") });
  return { url: embedded.url, stop: () => embedded.stop() };
}

async function freshDatabase(server: Server, name: string): Promise<{ sql: Sql; url: string }> {
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return { sql: await connectDatabase(url.toString(), { max: 4 }), url: url.toString() };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const range = (values: readonly number[], digits = 0) =>
  `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

async function withApi<T>(
  url: string,
  chainId: number,
  log: string,
  run: (api: ApiProcess, key: string, grpc: (onEvent: OnEvent, after: string) => Consumer) => Promise<T>,
): Promise<T> {
  const key = await createApiKey(url, "bench-stream");
  const api = await startApi({ databaseUrl: url, chainName: "bench", chainId, logFile: log });
  // `mintlens serve` generates its gRPC certificate in its data directory, the default one here.
  const cert = readFileSync(resolve(".mintlens/tls/grpc-cert.pem"));
  try {
    return await run(api, key, (onEvent, after) =>
      grpcConsumer(api.grpcAddress, cert, key, { after }, onEvent),
    );
  } finally {
    await api.stop();
  }
}

/** One consumer reading everything from the oldest cursor until it has `expected` events. */
async function backfillOnce(
  open: (onEvent: OnEvent) => Consumer,
  expected: number,
  serverPid: number,
): Promise<{ eventsPerSecond: number; cpuMsPer1000: number }> {
  let received = 0;
  let reached: () => void = () => {};
  const all = new Promise<void>((r) => {
    reached = r;
  });
  const cpuBefore = processTreeCpu(serverPid);
  const started = performance.now();
  const consumer = open(() => {
    received++;
    if (received === expected) reached();
  });
  const timeout = setTimeout(() => consumer.cancel(), BACKFILL_TIMEOUT_MS);
  await Promise.race([all, consumer.done]);
  const seconds = (performance.now() - started) / 1000;
  const cpu = processTreeCpu(serverPid) - cpuBefore;
  clearTimeout(timeout);
  consumer.cancel();
  await consumer.done.catch(() => {});
  if (received < expected) throw new Error(`the consumer got ${received} of ${expected} events`);
  return { eventsPerSecond: received / seconds, cpuMsPer1000: (cpu * 1e6) / received };
}

async function backfill(server: Server): Promise<void> {
  const { sql, url } = await freshDatabase(server, "mintlens_bench_stream");
  const started = performance.now();
  const expected = await writeOutboxHistory(sql, BACKFILL_CHAIN, TRANSFERS);
  console.log(
    `backfill: an outbox of ${TRANSFERS.toLocaleString("en")} transfers, ${expected.toLocaleString("en")} events, written in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  await sql.end();
  await withApi(url, BACKFILL_CHAIN, join(BENCH_DIR, "bench-stream-serve.log"), async (api, key, grpc) => {
    const results: Record<string, { eventsPerSecond: number; cpuMsPer1000: number }[]> = {
      gRPC: [],
      SSE: [],
    };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternating which goes first, so neither always meets a colder cache.
      const order = round % 2 ? (["gRPC", "SSE"] as const) : (["SSE", "gRPC"] as const);
      for (const transport of order) {
        const open =
          transport === "gRPC"
            ? (onEvent: OnEvent) => grpc(onEvent, "0")
            : (onEvent: OnEvent) => sseConsumer(`${api.url}/v1beta2/stream/events?after=0`, key, onEvent);
        const result = await backfillOnce(open, expected, api.pid);
        results[transport]?.push(result);
        console.log(
          `  round ${round} ${transport.padEnd(4)} ${Math.round(result.eventsPerSecond).toLocaleString("en")} events/s, server CPU ${result.cpuMsPer1000.toFixed(1)} ms per 1,000 events`,
        );
      }
    }
    for (const [transport, list] of Object.entries(results)) {
      const rates = list.map((r) => r.eventsPerSecond);
      const rate = median(rates);
      console.log(
        `backfill ${transport}: median ${Math.round(rate).toLocaleString("en")} events/s (${range(rates)}), server CPU ${median(list.map((r) => r.cpuMsPer1000)).toFixed(1)} ms per 1,000 events; target ≥ ${BACKFILL_TARGET.toLocaleString("en")}: ${rate >= BACKFILL_TARGET ? "met" : "MISSED"}`,
      );
    }
  });
}

async function latency(server: Server): Promise<void> {
  const anvil = await startAnvil({ chainId: 31_338 });
  const { sql, url } = await freshDatabase(server, "mintlens_bench_stream_live");
  const controller = new AbortController();
  const commits: { nextBlock: number; at: number }[] = [];
  const client = createChainClient({ url: anvil.url, batchSize: 100, maxLogRange: 2000 });
  const activity = runLiveActivity({
    rpcUrl: anvil.url,
    seed: "bench-stream",
    intervalMs: 200,
    actionsPerTick: 6,
    signal: controller.signal,
  });
  const indexer = runChainIndexer(
    {
      sql,
      client,
      chain: {
        name: "bench",
        chainId: 31_338,
        nativeSymbol: "ETH",
        rpcUrl: anvil.url,
        startBlock: 0,
        confirmations: 0,
        contractDiscovery: "traces",
      },
      tuning: {
        pollIntervalMs: 100,
        maxBlocksPerBatch: 2000,
        prefetch: 3,
        rpcBatchSize: 100,
        rpcTimeoutMs: 30_000,
        rpcRetries: 8,
        maxLogRange: 2000,
      },
      logger: createLogger(process.env.MINTLENS_LOG_LEVEL ?? "warn"),
      inspect: (address, emitted) => inspectContract(client, address, emitted),
      onProgress: (p) => commits.push({ nextBlock: p.nextBlock, at: performance.now() }),
    },
    controller.signal,
  ).catch((error) => {
    if (!controller.signal.aborted) throw error;
  });
  // The chain's row exists once the indexer has started.
  while (commits.length === 0) await new Promise((r) => setTimeout(r, 100));
  try {
    await withApi(url, 31_338, join(BENCH_DIR, "bench-stream-live.log"), async (api, key, grpc) => {
      const latencies: Record<string, number[]> = { gRPC: [], SSE: [] };
      let connectedAt = Number.POSITIVE_INFINITY;
      const committedAt = (block: number) => commits.find((c) => c.nextBlock > block)?.at;
      const record =
        (transport: string): OnEvent =>
        (_cursor, block, at) => {
          const commit = committedAt(block);
          if (commit !== undefined && commit >= connectedAt) latencies[transport]?.push(at - commit);
        };
      const consumers = [
        grpc(record("gRPC"), "now"),
        sseConsumer(`${api.url}/v1beta2/stream/events?after=now`, key, record("SSE")),
      ];
      // Events of batches committed before both streams were open are not timed.
      await new Promise((r) => setTimeout(r, 1000));
      connectedAt = performance.now();
      const cpuBefore = processTreeCpu(api.pid);
      await new Promise((r) => setTimeout(r, LIVE_SECONDS * 1000));
      const cpu = processTreeCpu(api.pid) - cpuBefore;
      // Let the last batch arrive.
      await new Promise((r) => setTimeout(r, 1500));
      for (const c of consumers) c.cancel();
      await Promise.all(consumers.map((c) => c.done.catch(() => {})));
      const batches = commits.filter((c) => c.at >= connectedAt).length;
      console.log(
        `latency: ${LIVE_SECONDS} s of live activity, ${batches} batches committed; server CPU ${(cpu / LIVE_SECONDS).toFixed(3)} cores`,
      );
      for (const [transport, list] of Object.entries(latencies)) {
        const sorted = [...list].sort((a, b) => a - b);
        const p99 = percentile(sorted, 99);
        console.log(
          `latency ${transport}: ${list.length} events, commit → consumer p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${percentile(sorted, 100).toFixed(0)} ms; target p99 < ${LATENCY_TARGET_MS} ms: ${list.length > 0 && p99 < LATENCY_TARGET_MS ? "met" : "MISSED"}`,
        );
      }
    });
  } finally {
    controller.abort();
    await Promise.allSettled([activity, indexer]);
    await sql.end();
    await anvil.stop();
  }
}

const server = await startServer();
try {
  if (!SKIP.has("backfill")) await backfill(server);
  if (!SKIP.has("latency")) await latency(server);
} finally {
  await server.stop();
}
if (args.outbox) {
  console.log("outbox cost: npm run bench:ingest -- --compare-outbox");
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", "scripts/bench-ingest.ts", "--compare-outbox", "--runs", args["outbox-runs"]],
    { stdio: "inherit" },
  );
  if (run.status !== 0) throw new Error(`bench:ingest --compare-outbox failed (${run.status})`);
}
