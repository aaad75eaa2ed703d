/**
 * Ingestion benchmark: builds (once, cached in .bench/ with anvil's state file) a chain holding
 * at least 200,000 NFT transfer events, then measures in one run
 *   (a) fetching its blocks, logs and traces over JSON-RPC exactly as the indexer asks for them,
 *       and nothing else;
 *   (b) indexing them into a fresh PostgreSQL database (embedded, or BENCH_DATABASE_URL's server).
 * Usage: npm run bench:ingest [-- --events 200000 --fresh]
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { createChainClient } from "../src/chain/client.ts";
import type { ChainClient } from "../src/chain/rpc-types.ts";
import type { IndexerTuning } from "../src/config/config.ts";
import { errorMessage } from "../src/core/errors.ts";
import { createLogger } from "../src/core/logger.ts";
import { generateBulkTransfers } from "../src/demo/bulk-transfers.ts";
import { type Anvil, startAnvil } from "../src/devchain/anvil.ts";
import { BatchSizer } from "../src/indexer/batch-sizer.ts";
import { runChainIndexer } from "../src/indexer/chain-indexer.ts";
import { inspectContract } from "../src/indexer/classify/inspect.ts";
import { TRANSFER_TOPICS } from "../src/indexer/decode/topics.ts";
import { connectDatabase } from "../src/store/database.ts";
import { startEmbeddedPostgres } from "../src/store/embedded.ts";
import { migrate } from "../src/store/migrate.ts";
import { processTreeCpu } from "./bench/process-cpu.ts";

const { values: args } = parseArgs({
  options: {
    events: { type: "string", default: "200000" },
    fresh: { type: "boolean", default: false },
  },
});
const EVENTS = Number(args.events);
const CHAIN_ID = 31337;
const BENCH_DIR = resolve(".bench");
const STATE_FILE = join(BENCH_DIR, `anvil-state-${EVENTS}.json`);
const META_FILE = join(BENCH_DIR, `chain-${EVENTS}.json`);
const TUNING: IndexerTuning = {
  pollIntervalMs: 2000,
  maxBlocksPerBatch: 2000,
  prefetch: 3,
  rpcBatchSize: 100,
  rpcTimeoutMs: 30_000,
  rpcRetries: 8,
  maxLogRange: 2000,
};
const TARGET_EVENTS_PER_BATCH = 10_000;
/**
 * Anvil re-creates the genesis block when it loads a state file, so block 1's parent hash no
 * longer matches block 0; the genesis holds no transfers, and both measurements start after it.
 */
const FIRST_BLOCK = 1;

interface ChainMeta {
  events: number;
  tokenTransfers: number;
  blocks: number;
  head: number;
}

const say = (message: string) => process.stdout.write(`${message}\n`);

async function buildChain(): Promise<ChainMeta> {
  say(`building a chain with ${EVENTS} NFT transfer events (cached in ${STATE_FILE})`);
  rmSync(STATE_FILE, { force: true });
  // Dumped beside the cache and renamed once complete: an interrupted build leaves no cache behind.
  const partial = `${STATE_FILE}.partial`;
  rmSync(partial, { force: true });
  const anvil = await startAnvil({
    chainId: CHAIN_ID,
    dumpState: partial,
    args: ["--disable-block-gas-limit"],
  });
  let meta: ChainMeta;
  try {
    // Blocks of a few hundred transfers each, like busy mainnet blocks, rather than a few huge ones.
    const result = await generateBulkTransfers({
      rpcUrl: anvil.url,
      events: EVENTS,
      mintBatchSize: 100,
      txsPerBlock: 40,
      onProgress: ({ events, blocks }) => {
        if (blocks % 100 === 0) say(`  ${events} events in ${blocks} blocks`);
      },
    });
    meta = {
      events: result.events,
      tokenTransfers: result.tokenTransfers,
      blocks: result.blocks,
      head: result.lastBlock,
    };
    say(
      `built in ${(result.elapsedMs / 1000).toFixed(1)} s: ${result.events} events in ${result.blocks} blocks`,
    );
  } finally {
    await anvil.stop();
  }
  renameSync(partial, STATE_FILE);
  writeFileSync(META_FILE, JSON.stringify(meta));
  return meta;
}

/** Anvil on the cached chain, which it only reads; a cache it cannot load is built again. */
async function startCachedChain(): Promise<{ anvil: Anvil; meta: ChainMeta }> {
  let meta: ChainMeta;
  if (args.fresh || !existsSync(STATE_FILE) || !existsSync(META_FILE)) {
    meta = await buildChain();
  } else {
    meta = JSON.parse(readFileSync(META_FILE, "utf8")) as ChainMeta;
    say(`using the cached chain: ${meta.events} events in ${meta.blocks} blocks (${STATE_FILE})`);
  }
  try {
    return { anvil: await startAnvil({ chainId: CHAIN_ID, loadState: STATE_FILE }), meta };
  } catch (error) {
    say(`the cached chain cannot be loaded (${errorMessage(error).split("\n")[0]}): building it again`);
    meta = await buildChain();
    return { anvil: await startAnvil({ chainId: CHAIN_ID, loadState: STATE_FILE }), meta };
  }
}

/** What the indexer reads for a range, and nothing more: logs, every header, and the block traces. */
async function fetchOnly(client: ChainClient, head: number): Promise<number> {
  const sizer = new BatchSizer(TARGET_EVENTS_PER_BATCH, TUNING.maxBlocksPerBatch);
  const queue: Array<Promise<{ from: number; to: number; logs: number }>> = [];
  let cursor = FIRST_BLOCK;
  let logs = 0;
  const fill = () => {
    while (queue.length < TUNING.prefetch && cursor <= head) {
      const from = cursor;
      const to = Math.min(head, from + sizer.next() - 1);
      cursor = to + 1;
      const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
      queue.push(
        Promise.all([
          client.getLogs(from, to, TRANSFER_TOPICS),
          client.getHeaders(numbers),
          client.getTracedCreations(from, to),
        ]).then(([l]) => ({ from, to, logs: l.length })),
      );
    }
  };
  fill();
  while (queue.length > 0) {
    const batch = await (queue.shift() as Promise<{ from: number; to: number; logs: number }>);
    sizer.observe(batch.to - batch.from + 1, batch.logs);
    logs += batch.logs;
    fill();
  }
  return logs;
}

/** CPU seconds used by this process, anvil and PostgreSQL (which share the machine's cores). */
interface CpuSample {
  node: number;
  anvil: number;
  postgres: number;
}

function nodeCpu(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

function cpuSince(start: CpuSample, end: CpuSample): CpuSample {
  return {
    node: end.node - start.node,
    anvil: end.anvil - start.anvil,
    postgres: end.postgres - start.postgres,
  };
}

/** CPU seconds per process, and how many cores were busy on average over the wall time. */
function describeCpu(label: string, cpu: CpuSample, seconds: number): string {
  const external = process.env.BENCH_DATABASE_URL !== undefined;
  const pg = external ? "not measured (external server)" : cpu.postgres.toFixed(2);
  const busy = (cpu.node + cpu.anvil + cpu.postgres) / seconds;
  return `${`${label}:`.padEnd(12)} node ${cpu.node.toFixed(2)}, anvil ${cpu.anvil.toFixed(2)}, postgres ${pg}; ${busy.toFixed(2)} cores busy${external ? " (without PostgreSQL)" : ""}`;
}

async function main(): Promise<void> {
  mkdirSync(BENCH_DIR, { recursive: true });
  const { anvil, meta } = await startCachedChain();
  const pgDir = join(BENCH_DIR, "pg");
  const embedded = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: pgDir });
  const postmasterPid = embedded
    ? Number(readFileSync(join(pgDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0])
    : undefined;
  const serverUrl = process.env.BENCH_DATABASE_URL ?? (embedded?.url as string);
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe("DROP DATABASE IF EXISTS mintlens_bench WITH (FORCE)");
  await admin.unsafe("CREATE DATABASE mintlens_bench");
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = "/mintlens_bench";
  await migrate(url.toString());
  const sql = await connectDatabase(url.toString(), { max: 10 });
  const client = createChainClient({
    url: anvil.url,
    batchSize: TUNING.rpcBatchSize,
    maxLogRange: TUNING.maxLogRange,
  });
  try {
    // Warm anvil's caches the same way for both measurements.
    await fetchOnly(client, meta.head);

    const cpuOf = (): CpuSample => ({
      node: nodeCpu(),
      anvil: processTreeCpu(anvil.pid),
      postgres: postmasterPid === undefined ? 0 : processTreeCpu(postmasterPid),
    });
    const fetchCpuStart = cpuOf();
    const fetchStart = performance.now();
    const fetchedLogs = await fetchOnly(client, meta.head);
    const fetchSeconds = (performance.now() - fetchStart) / 1000;
    const fetchCpu = cpuSince(fetchCpuStart, cpuOf());

    const indexCpuStart = cpuOf();
    const indexStart = performance.now();
    await runChainIndexer(
      {
        sql,
        client,
        chain: {
          name: "bench",
          chainId: CHAIN_ID,
          nativeSymbol: "ETH",
          rpcUrl: anvil.url,
          startBlock: FIRST_BLOCK,
          confirmations: 0,
          contractDiscovery: "traces",
        },
        tuning: TUNING,
        logger: createLogger(process.env.MINTLENS_LOG_LEVEL ?? "warn"),
        inspect: (address, emitted) => inspectContract(client, address, emitted),
        untilBlock: meta.head,
        targetEventsPerBatch: TARGET_EVENTS_PER_BATCH,
      },
      AbortSignal.timeout(600_000),
    );
    const indexSeconds = (performance.now() - indexStart) / 1000;
    const indexCpu = cpuSince(indexCpuStart, cpuOf());
    const [stored] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM nft_transfers`;

    say("");
    say(
      `chain:          ${meta.head + 1} blocks, ${fetchedLogs} NFT transfer events (${meta.tokenTransfers} token movements)`,
    );
    say(`fetch only:     ${fetchSeconds.toFixed(2)} s  ${Math.round(fetchedLogs / fetchSeconds)} events/s`);
    say(
      `index:          ${indexSeconds.toFixed(2)} s  ${Math.round(fetchedLogs / indexSeconds)} events/s  (${stored?.n} transfer rows stored)`,
    );
    say(`index / fetch:  ${(indexSeconds / fetchSeconds).toFixed(2)}x`);
    say(`CPU seconds:    ${describeCpu("fetch only", fetchCpu, fetchSeconds)}`);
    say(`                ${describeCpu("index", indexCpu, indexSeconds)}`);
    say(`targets:        >= 20000 events/s end to end, <= 1.3x the fetch-only time`);
  } finally {
    await client.close();
    await sql.end({ timeout: 5 });
    await embedded?.stop();
    await anvil.stop();
  }
}

await main();
