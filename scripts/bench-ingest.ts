/**
 * Ingestion benchmark: builds (once each, cached in .bench/ with anvil's state file) two chains,
 *   plain: at least 200,000 NFT transfer events (mints, transfers, ERC-1155 batches);
 *   sales: at least 50,000 NFT sales of mixed kinds (market listings and bundles paid in ETH,
 *          direct deals paid in ETH, WETH and a stablecoin), with the mints they need;
 * then measures for each, in one run,
 *   (a) fetching its blocks, logs and traces over JSON-RPC exactly as the indexer asks for them,
 *       and nothing else;
 *   (b) indexing them into a fresh PostgreSQL database (embedded, or BENCH_DATABASE_URL's server),
 * and compares what indexing a sale costs with what indexing a plain transfer does.
 * Usage: npm run bench:ingest [-- --chain plain|sales|both --events 200000 --sales 50000 --fresh]
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
import { generateBulkSales } from "../src/demo/bulk-sales.ts";
import { generateBulkTransfers } from "../src/demo/bulk-transfers.ts";
import { type Anvil, startAnvil } from "../src/devchain/anvil.ts";
import { BatchSizer } from "../src/indexer/batch-sizer.ts";
import { runChainIndexer } from "../src/indexer/chain-indexer.ts";
import { inspectContract } from "../src/indexer/classify/inspect.ts";
import { LOG_TOPICS } from "../src/indexer/fetch-batch.ts";
import { connectDatabase, type Sql } from "../src/store/pg/database.ts";
import { startEmbeddedPostgres } from "../src/store/pg/embedded.ts";
import { migrate } from "../src/store/pg/migrate.ts";
import { processTreeCpu } from "./bench/process-cpu.ts";

const { values: args } = parseArgs({
  options: {
    chain: { type: "string", default: "both" },
    events: { type: "string", default: "200000" },
    sales: { type: "string", default: "50000" },
    fresh: { type: "boolean", default: false },
  },
});
if (!["plain", "sales", "both"].includes(args.chain)) {
  throw new Error(`--chain is plain, sales or both, not ${args.chain}`);
}
const EVENTS = Number(args.events);
const SALES = Number(args.sales);
const CHAIN_ID = 31337;
const BENCH_DIR = resolve(".bench");
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
  /** NFT transfer events (logs). */
  events: number;
  tokenTransfers: number;
  /** Sales the generator made: what the indexer must store as `kind = 'sale'`. */
  sales: number;
  blocks: number;
  head: number;
}

/** A benchmark chain: how it is built, and where it is cached. */
interface ChainSpec {
  name: "plain" | "sales";
  stateFile: string;
  metaFile: string;
  describe: string;
  generate: (rpcUrl: string) => Promise<ChainMeta & { elapsedMs: number }>;
}

const say = (message: string) => process.stdout.write(`${message}\n`);

const PLAIN: ChainSpec = {
  name: "plain",
  // The names caches had before the sales chain existed, so those stay valid.
  stateFile: join(BENCH_DIR, `anvil-state-${EVENTS}.json`),
  metaFile: join(BENCH_DIR, `chain-${EVENTS}.json`),
  describe: `${EVENTS} NFT transfer events`,
  generate: async (rpcUrl) => {
    // Blocks of a few hundred transfers each, like busy mainnet blocks, rather than a few huge ones.
    const result = await generateBulkTransfers({
      rpcUrl,
      events: EVENTS,
      mintBatchSize: 100,
      txsPerBlock: 40,
      onProgress: ({ events, blocks }) => {
        if (blocks % 100 === 0) say(`  ${events} events in ${blocks} blocks`);
      },
    });
    return { ...result, sales: 0, head: result.lastBlock };
  },
};

const SALES_CHAIN: ChainSpec = {
  name: "sales",
  stateFile: join(BENCH_DIR, `anvil-state-sales-${SALES}.json`),
  metaFile: join(BENCH_DIR, `chain-sales-${SALES}.json`),
  describe: `${SALES} NFT sales`,
  generate: async (rpcUrl) => {
    const result = await generateBulkSales({
      rpcUrl,
      sales: SALES,
      onProgress: ({ sales, blocks }) => {
        if (blocks % 100 === 0) say(`  ${sales} sales in ${blocks} blocks`);
      },
    });
    const kinds = Object.entries(result.byKind)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(", ");
    say(`  sales by kind: ${kinds}; ${result.mints} mints`);
    return {
      events: result.nftEvents,
      tokenTransfers: result.nftEvents,
      sales: result.sales,
      blocks: result.blocks,
      head: result.lastBlock,
      elapsedMs: result.elapsedMs,
    };
  },
};

async function buildChain(spec: ChainSpec): Promise<ChainMeta> {
  say(`building the ${spec.name} chain with ${spec.describe} (cached in ${spec.stateFile})`);
  rmSync(spec.stateFile, { force: true });
  // Dumped beside the cache and renamed once complete: an interrupted build leaves no cache behind.
  const partial = `${spec.stateFile}.partial`;
  rmSync(partial, { force: true });
  const anvil = await startAnvil({
    chainId: CHAIN_ID,
    dumpState: partial,
    args: ["--disable-block-gas-limit"],
  });
  let meta: ChainMeta;
  try {
    const { elapsedMs, ...built } = await spec.generate(anvil.url);
    meta = built;
    say(
      `built in ${(elapsedMs / 1000).toFixed(1)} s: ${meta.events} events, ${meta.sales} sales in ${meta.blocks} blocks`,
    );
  } finally {
    await anvil.stop();
  }
  renameSync(partial, spec.stateFile);
  writeFileSync(spec.metaFile, JSON.stringify(meta));
  return meta;
}

/** Anvil on the cached chain, which it only reads; a cache it cannot load is built again. */
async function startCachedChain(spec: ChainSpec): Promise<{ anvil: Anvil; meta: ChainMeta }> {
  let meta: ChainMeta;
  if (args.fresh || !existsSync(spec.stateFile) || !existsSync(spec.metaFile)) {
    meta = await buildChain(spec);
  } else {
    // Caches from before sales were counted hold none.
    meta = { sales: 0, ...(JSON.parse(readFileSync(spec.metaFile, "utf8")) as Omit<ChainMeta, "sales">) };
    say(
      `using the cached ${spec.name} chain: ${meta.events} events in ${meta.blocks} blocks (${spec.stateFile})`,
    );
  }
  try {
    return { anvil: await startAnvil({ chainId: CHAIN_ID, loadState: spec.stateFile }), meta };
  } catch (error) {
    say(`the cached chain cannot be loaded (${errorMessage(error).split("\n")[0]}): building it again`);
    meta = await buildChain(spec);
    return { anvil: await startAnvil({ chainId: CHAIN_ID, loadState: spec.stateFile }), meta };
  }
}

/**
 * What the indexer reads for a range, and nothing more: the logs of transfers, marketplace events
 * and punk bids, every header, and the block traces (creations, calls and native-coin movements).
 */
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
          client.getLogs(from, to, LOG_TOPICS),
          client.getHeaders(numbers),
          client.getTraces(from, to),
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

/**
 * Bytes of the node's answers to what the indexer reads (block traces and the logs of its topics),
 * over plain HTTP: the size of the input the indexer parses, which sets much of what an event costs.
 */
async function answerBytes(url: string, head: number): Promise<{ traces: number; logs: number }> {
  const post = async (body: unknown) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return (await response.arrayBuffer()).byteLength;
  };
  let traces = 0;
  let logs = 0;
  for (let from = FIRST_BLOCK; from <= head; from += 50) {
    const to = Math.min(head, from + 49);
    traces += await post(
      Array.from({ length: to - from + 1 }, (_, i) => ({
        jsonrpc: "2.0",
        id: i,
        method: "trace_block",
        params: [`0x${(from + i).toString(16)}`],
      })),
    );
    logs += await post({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_getLogs",
      params: [
        { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, topics: [LOG_TOPICS] },
      ],
    });
  }
  return { traces, logs };
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

/** A database server for the run; each chain is indexed into a fresh database on it. */
interface Server {
  url: string;
  postmasterPid?: number;
  stop: () => Promise<void>;
}

async function startServer(): Promise<Server> {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} };
  const pgDir = join(BENCH_DIR, "pg");
  const embedded = await startEmbeddedPostgres({ dataDir: pgDir });
  const postmasterPid = Number(
    readFileSync(join(pgDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0],
  );
  return { url: embedded.url, postmasterPid, stop: () => embedded.stop() };
}

async function freshDatabase(server: Server): Promise<Sql> {
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  await admin.unsafe("DROP DATABASE IF EXISTS mintlens_bench WITH (FORCE)");
  await admin.unsafe("CREATE DATABASE mintlens_bench");
  await admin.end();
  const url = new URL(server.url);
  url.pathname = "/mintlens_bench";
  await migrate(url.toString());
  return connectDatabase(url.toString(), { max: 10 });
}

interface Measured {
  events: number;
  /** Bytes of the node's answers (traces and logs). */
  answerBytes: number;
  indexSeconds: number;
  indexCpu: CpuSample;
}

/** Fetch-only and indexing of one chain, printed as they are measured. */
async function measure(spec: ChainSpec, server: Server): Promise<Measured> {
  const { anvil, meta } = await startCachedChain(spec);
  const sql = await freshDatabase(server);
  const client = createChainClient({
    url: anvil.url,
    batchSize: TUNING.rpcBatchSize,
    maxLogRange: TUNING.maxLogRange,
  });
  const label = `[${spec.name}]`.padEnd(8);
  const line = (name: string, text: string) => say(`${label}${(name ? `${name}:` : "").padEnd(16)}${text}`);
  try {
    // Warm anvil's caches the same way for both measurements.
    await fetchOnly(client, meta.head);
    const bytes = await answerBytes(anvil.url, meta.head);

    const cpuOf = (): CpuSample => ({
      node: nodeCpu(),
      anvil: processTreeCpu(anvil.pid),
      postgres: server.postmasterPid === undefined ? 0 : processTreeCpu(server.postmasterPid),
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
      AbortSignal.timeout(1_800_000),
    );
    const indexSeconds = (performance.now() - indexStart) / 1000;
    const indexCpu = cpuSince(indexCpuStart, cpuOf());
    const [stored] = await sql<{ transfers: string; sales: string }[]>`
      SELECT (SELECT count(*) FROM nft_transfers) AS transfers,
             (SELECT count(*) FROM sales WHERE kind = 'sale') AS sales`;
    const storedSales = Number(stored?.sales);
    const events = meta.events;
    const perThousand = (seconds: number) => ((seconds * 1000) / events).toFixed(3);

    say("");
    line(
      "chain",
      `${meta.head + 1} blocks, ${events} NFT transfer events (${meta.tokenTransfers} token movements), ${meta.sales} sales; ${fetchedLogs} logs fetched`,
    );
    line(
      "node's answers",
      `${(bytes.traces / 1e6).toFixed(1)} MB of traces, ${(bytes.logs / 1e6).toFixed(1)} MB of logs: ${Math.round((bytes.traces + bytes.logs) / events)} bytes per NFT event`,
    );
    line("fetch only", `${fetchSeconds.toFixed(2)} s  ${Math.round(events / fetchSeconds)} events/s`);
    line(
      "index",
      `${indexSeconds.toFixed(2)} s  ${Math.round(events / indexSeconds)} events/s  ${Math.round(storedSales / indexSeconds)} sales/s  (${stored?.transfers} transfer rows, ${storedSales} sales stored)`,
    );
    line("index / fetch", `${(indexSeconds / fetchSeconds).toFixed(2)}x`);
    line("CPU seconds", describeCpu("fetch only", fetchCpu, fetchSeconds));
    line("", describeCpu("index", indexCpu, indexSeconds));
    line(
      "index CPU/1000",
      `node ${perThousand(indexCpu.node)} s, postgres ${server.postmasterPid === undefined ? "not measured" : `${perThousand(indexCpu.postgres)} s`} per 1,000 NFT events`,
    );
    if (storedSales !== meta.sales) {
      throw new Error(`the ${spec.name} chain holds ${meta.sales} sales but ${storedSales} were stored`);
    }
    return { events, answerBytes: bytes.traces + bytes.logs, indexSeconds, indexCpu };
  } finally {
    await client.close();
    await sql.end({ timeout: 5 });
    await anvil.stop();
  }
}

async function main(): Promise<void> {
  mkdirSync(BENCH_DIR, { recursive: true });
  const specs =
    args.chain === "plain" ? [PLAIN] : args.chain === "sales" ? [SALES_CHAIN] : [PLAIN, SALES_CHAIN];
  const server = await startServer();
  const results = new Map<string, Measured>();
  try {
    // One chain at a time: anvil holds a whole chain in memory.
    for (const spec of specs) results.set(spec.name, await measure(spec, server));
  } finally {
    await server.stop();
  }
  say("");
  say(
    "targets:        plain: >= 20000 events/s, <= 1.3x the fetch-only time; sales: >= 20000 events/s, <= 1.5x the plain chain's CPU per event",
  );
  const plain = results.get("plain");
  const sales = results.get("sales");
  if (plain && sales) {
    const perEvent = (m: Measured) => (m.indexCpu.node + m.indexCpu.postgres) / m.events;
    const what = server.postmasterPid === undefined ? "node alone" : "node + PostgreSQL";
    const bytesPerEvent = (m: Measured) => m.answerBytes / m.events;
    say(
      `sales / plain:  ${(perEvent(sales) / perEvent(plain)).toFixed(2)}x the indexer CPU per NFT event (${what}), for ${(bytesPerEvent(sales) / bytesPerEvent(plain)).toFixed(2)}x the bytes of the node's answers per NFT event`,
    );
  }
}

await main();
