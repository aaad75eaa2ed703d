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
 *
 * With --compare-indexes it measures instead what the API's list indexes cost the indexer: each
 * chain is indexed into a fresh database with every index, and into another from which the indexes
 * named by --indexes were dropped after migrating, --runs times each (alternating which goes
 * first), and the CPU per NFT event of both is compared.
 * With --compare-outbox it measures what the live event stream's outbox costs the indexer the same
 * way: each chain indexed with the outbox written and without it (the indexer's `stream: false`),
 * --runs times each, alternating, against a target of 1.15× the CPU per NFT event.
 * With --compare-webhooks it measures what webhook targets that fail everything do to indexing: each
 * chain indexed with the webhook deliverer running beside it in this process, four subscriptions'
 * target answering 500 and tried again every 50 ms at most, and without; against a target of 1.15×
 * the time indexing takes (the deliverer's own CPU is reported, not judged: it is the price of
 * sending webhooks, not a slowdown of the indexer).
 * Usage: npm run bench:ingest [-- --chain plain|sales|both --events 200000 --sales 50000 --fresh]
 *        npm run bench:ingest -- --compare-indexes [--indexes a,b --runs 3 --chain ...]
 *        npm run bench:ingest -- --compare-outbox [--runs 3 --chain ...]
 *        npm run bench:ingest -- --compare-webhooks [--runs 3 --chain ...]
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
import { startFailingWebhooks } from "./bench/failing-webhooks.ts";
import { processTreeCpu } from "./bench/process-cpu.ts";

/**
 * The API's list indexes the indexer writes: a wallet's NFTs (migration 0020) and the transfers
 * list's four (0022), on every transfer; a collection's sales (0022), on every trade; the punk
 * offers' BRIN (0021) and open offers (0025), on punk offers only (the offers' key is the table's
 * own and stays).
 */
const DEFAULT_INDEXES = [
  "token_balances_by_holder",
  "nft_transfers_by_contract",
  "nft_transfers_by_token",
  "nft_transfers_by_sender",
  "nft_transfers_by_recipient",
  "sales_by_contract",
  "punk_offers_by_block",
  "punk_offers_open",
];

const { values: args } = parseArgs({
  options: {
    chain: { type: "string", default: "both" },
    events: { type: "string", default: "200000" },
    sales: { type: "string", default: "50000" },
    fresh: { type: "boolean", default: false },
    "compare-indexes": { type: "boolean", default: false },
    "compare-outbox": { type: "boolean", default: false },
    "compare-webhooks": { type: "boolean", default: false },
    indexes: { type: "string", default: DEFAULT_INDEXES.join(",") },
    runs: { type: "string", default: "3" },
  },
});
if (!["plain", "sales", "both"].includes(args.chain)) {
  throw new Error(`--chain is plain, sales or both, not ${args.chain}`);
}
const EVENTS = Number(args.events);
const RUNS = Number(args.runs);
if (!Number.isInteger(RUNS) || RUNS < 1)
  throw new Error(`--runs must be a positive integer, not ${args.runs}`);
const DROPPED = args.indexes
  .split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "");
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

/** Indexes the chain up to its head into `sql`'s database with the indexer's own loop, timed. */
async function indexChain(
  sql: Sql,
  client: ChainClient,
  rpcUrl: string,
  head: number,
  cpuOf: () => CpuSample,
  options: { stream?: boolean } = {},
): Promise<{ seconds: number; cpu: CpuSample }> {
  const cpuStart = cpuOf();
  const started = performance.now();
  await runChainIndexer(
    {
      sql,
      client,
      chain: {
        name: "bench",
        chainId: CHAIN_ID,
        nativeSymbol: "ETH",
        rpcUrl,
        startBlock: FIRST_BLOCK,
        confirmations: 0,
        contractDiscovery: "traces",
      },
      tuning: TUNING,
      logger: createLogger(process.env.MINTLENS_LOG_LEVEL ?? "warn"),
      inspect: (address, emitted) => inspectContract(client, address, emitted),
      untilBlock: head,
      targetEventsPerBatch: TARGET_EVENTS_PER_BATCH,
      ...(options.stream === false ? { stream: false } : {}),
    },
    AbortSignal.timeout(1_800_000),
  );
  return { seconds: (performance.now() - started) / 1000, cpu: cpuSince(cpuStart, cpuOf()) };
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

    const { seconds: indexSeconds, cpu: indexCpu } = await indexChain(
      sql,
      client,
      anvil.url,
      meta.head,
      cpuOf,
    );
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

/**
 * Drops the named indexes of the fresh database, each as it was made: an index that backs a
 * constraint (a key) by dropping the constraint. A name the schema does not hold is an error, so
 * that a renamed index is not measured as if dropped.
 */
async function dropIndexes(sql: Sql, names: readonly string[]): Promise<void> {
  const found = await sql<{ name: string; table: string; constraint: string | null }[]>`
    SELECT i.relname AS name, t.relname AS table, c.conname AS constraint
    FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_class t ON t.oid = x.indrelid
    LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid
    WHERE i.relnamespace = current_schema()::regnamespace AND i.relname = ANY (${names as string[]})`;
  const missing = names.filter((name) => !found.some((f) => f.name === name));
  if (missing.length > 0) throw new Error(`no index named ${missing.join(", ")} in the migrated schema`);
  for (const { name, table, constraint } of found) {
    await sql.unsafe(
      constraint === null ? `DROP INDEX "${name}"` : `ALTER TABLE "${table}" DROP CONSTRAINT "${constraint}"`,
    );
  }
}

/** CPU seconds per NFT event of indexing one chain into a fresh database, with or without the part measured. */
interface IndexRun {
  dropped: boolean;
  seconds: number;
  cpu: CpuSample;
  events: number;
}

/**
 * Indexes one chain `RUNS` times with every index and as many times without the dropped ones, in
 * alternating order so that a machine that gets busier or quieter weighs on both alike.
 */
async function compareIndexes(spec: ChainSpec, server: Server): Promise<IndexRun[]> {
  return compareRuns(spec, server, INDEX_COMPARISON);
}

/** What a comparison takes away from the indexing it measures, and how it tells its runs apart. */
interface Comparison {
  /** Readies a fresh database for a run without the part (dropped indexes), if it needs to. */
  prepare: (sql: Sql) => Promise<void>;
  /** Indexer options of a run without the part. */
  without: { stream?: boolean };
  /** Started before each run with the part and stopped after it; says what it did. */
  alongside?: (sql: Sql) => Promise<() => Promise<string>>;
  withLabel: string;
  withoutLabel: string;
  /** What the target bounds: the CPU per NFT event, or the time indexing takes. */
  judged: "cpu" | "time";
  target: number;
}

const INDEX_COMPARISON: Comparison = {
  prepare: (sql) => dropIndexes(sql, DROPPED),
  without: {},
  withLabel: "with every index",
  withoutLabel: "without the indexes",
  judged: "cpu",
  target: 1.2,
};

const OUTBOX_COMPARISON: Comparison = {
  prepare: async () => {},
  without: { stream: false },
  withLabel: "with the outbox",
  withoutLabel: "without the outbox",
  judged: "cpu",
  target: 1.15,
};

const WEBHOOKS_COMPARISON: Comparison = {
  prepare: async () => {},
  without: {},
  alongside: async (sql) => {
    const webhooks = await startFailingWebhooks(sql, { chainId: CHAIN_ID, subscriptions: 4 });
    return async () => `${await webhooks.stop()} failed attempts`;
  },
  withLabel: "failing webhooks",
  withoutLabel: "no webhooks",
  judged: "time",
  target: 1.15,
};

/**
 * Indexes one chain `RUNS` times with the part measured and as many times without it, in alternating
 * order so that a machine that gets busier or quieter weighs on both alike.
 */
async function compareRuns(spec: ChainSpec, server: Server, comparison: Comparison): Promise<IndexRun[]> {
  const { anvil, meta } = await startCachedChain(spec);
  const client = createChainClient({
    url: anvil.url,
    batchSize: TUNING.rpcBatchSize,
    maxLogRange: TUNING.maxLogRange,
  });
  const runs: IndexRun[] = [];
  try {
    await fetchOnly(client, meta.head);
    const cpuOf = (): CpuSample => ({
      node: nodeCpu(),
      anvil: processTreeCpu(anvil.pid),
      postgres: server.postmasterPid === undefined ? 0 : processTreeCpu(server.postmasterPid),
    });
    for (let run = 0; run < RUNS; run++) {
      for (const dropped of run % 2 === 0 ? [false, true] : [true, false]) {
        const sql = await freshDatabase(server);
        try {
          if (dropped) await comparison.prepare(sql);
          const stopAlongside = dropped ? undefined : await comparison.alongside?.(sql);
          let seconds: number;
          let cpu: CpuSample;
          let alongside = "";
          try {
            ({ seconds, cpu } = await indexChain(
              sql,
              client,
              anvil.url,
              meta.head,
              cpuOf,
              dropped ? comparison.without : {},
            ));
          } finally {
            if (stopAlongside) alongside = `, ${await stopAlongside()}`;
          }
          runs.push({ dropped, seconds, cpu, events: meta.events });
          const perThousand = ((cpu.node + cpu.postgres) * 1000) / meta.events;
          say(
            `[${spec.name}] run ${run + 1} ${(dropped ? comparison.withoutLabel : comparison.withLabel).padEnd(20)}: ` +
              `${seconds.toFixed(2)} s, ${Math.round(meta.events / seconds)} events/s, ` +
              `node ${((cpu.node * 1000) / meta.events).toFixed(3)} + postgres ${((cpu.postgres * 1000) / meta.events).toFixed(3)} ` +
              `= ${perThousand.toFixed(3)} CPU s per 1,000 NFT events${alongside}`,
          );
        } finally {
          await sql.end({ timeout: 5 });
        }
      }
    }
  } finally {
    await client.close();
    await anvil.stop();
  }
  return runs;
}

/** Median and range, as the other benchmarks report repeated runs. */
function spread(xs: readonly number[], digits: number): string {
  const mid = median(xs);
  const [low, high] = [Math.min(...xs), Math.max(...xs)];
  return xs.length === 1
    ? mid.toFixed(digits)
    : `${mid.toFixed(digits)} (${low.toFixed(digits)}–${high.toFixed(digits)})`;
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  return n % 2 === 1
    ? (sorted[(n - 1) / 2] as number)
    : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2;
}

/** The runs of a comparison, side by side, and whether the part costs at most its target. */
function reportCost(
  name: string,
  runs: readonly IndexRun[],
  external: boolean,
  comparison: Comparison,
): void {
  const of = (dropped: boolean) => runs.filter((r) => r.dropped === dropped);
  const perThousand = (pick: (r: IndexRun) => number) => (r: IndexRun) => (pick(r) * 1000) / r.events;
  const total = perThousand((r) => r.cpu.node + r.cpu.postgres);
  const with_ = of(false);
  const without = of(true);
  say("");
  say(
    `[${name}] ${with_.length} runs each; CPU s per 1,000 NFT events, median (range)${external ? ", PostgreSQL not measured (external server)" : ""}:`,
  );
  say(`| | ${comparison.withLabel} | ${comparison.withoutLabel} |`);
  say("|---|---:|---:|");
  for (const [label, pick] of [
    ["this process", perThousand((r) => r.cpu.node)],
    ["PostgreSQL", perThousand((r) => r.cpu.postgres)],
    ["both", total],
    ["events/s", (r: IndexRun) => r.events / r.seconds],
  ] as const) {
    const digits = label === "events/s" ? 0 : 3;
    say(`| ${label} | ${spread(with_.map(pick), digits)} | ${spread(without.map(pick), digits)} |`);
  }
  // Runs are paired in the order they were made: each pair shared the machine's state.
  const judged = comparison.judged === "cpu" ? total : (r: IndexRun) => r.seconds;
  const ratios = with_.map((r, i) => judged(r) / judged(without[i] as IndexRun));
  const ratio = median(with_.map(judged)) / median(without.map(judged));
  const what = comparison.judged === "cpu" ? "the CPU per event" : "the time indexing took";
  say(
    `[${name}] with / without: ${ratio.toFixed(3)}× ${what} (medians; each pair's ratio ${spread(ratios, 3)}); ` +
      `target ≤ ${comparison.target}×: ${ratio <= comparison.target ? "PASS" : "FAIL"}`,
  );
}

async function main(): Promise<void> {
  mkdirSync(BENCH_DIR, { recursive: true });
  const specs =
    args.chain === "plain" ? [PLAIN] : args.chain === "sales" ? [SALES_CHAIN] : [PLAIN, SALES_CHAIN];
  const server = await startServer();
  if (args["compare-indexes"]) {
    say(
      `comparing indexing with every index against indexing without ${DROPPED.join(", ")}; ${RUNS} runs each`,
    );
    const compared = new Map<string, IndexRun[]>();
    try {
      for (const spec of specs) compared.set(spec.name, await compareIndexes(spec, server));
    } finally {
      await server.stop();
    }
    for (const [name, runs] of compared) {
      reportCost(name, runs, server.postmasterPid === undefined, INDEX_COMPARISON);
    }
    return;
  }
  const comparison = args["compare-outbox"]
    ? OUTBOX_COMPARISON
    : args["compare-webhooks"]
      ? WEBHOOKS_COMPARISON
      : undefined;
  if (comparison) {
    say(
      `comparing indexing ${comparison.withLabel} against indexing ${comparison.withoutLabel}; ${RUNS} runs each`,
    );
    const compared = new Map<string, IndexRun[]>();
    try {
      for (const spec of specs) compared.set(spec.name, await compareRuns(spec, server, comparison));
    } finally {
      await server.stop();
    }
    for (const [name, runs] of compared) {
      reportCost(name, runs, server.postmasterPid === undefined, comparison);
    }
    return;
  }
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
