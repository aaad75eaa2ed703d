/**
 * Creations benchmark: what contracts that are created but never emit a transfer cost the
 * indexer. Builds (once, cached in .bench/ with anvil's state file) one chain: an ERC-721 with a
 * few hundred mints and transfers, then a CreationFlood factory filling blocks with tiny contracts
 * (798 per transaction, a full 30M-gas block each) until 10,000 and then 100,000 exist. For each
 * of those two checkpoints the real indexer, discovering contracts by traces, indexes the chain
 * from its first block up to the checkpoint into a fresh database, through a proxy that counts the
 * JSON-RPC calls, against a freshly started anvil. Reported per checkpoint: the indexing time, the
 * calls by method, the heap in use at the end of the run (after a full collection, while the
 * indexer still holds its state), and the rows of `contracts`.
 * Usage: npm run bench:creations [-- --creations 10000,100000 --fresh]
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { createChainClient } from "../src/chain/client.ts";
import type { IndexerTuning } from "../src/config/config.ts";
import { errorMessage } from "../src/core/errors.ts";
import type { Address } from "../src/core/hex.ts";
import { createLogger } from "../src/core/logger.ts";
import { type Anvil, startAnvil } from "../src/devchain/anvil.ts";
import { loadArtifact } from "../src/devchain/artifacts.ts";
import {
  connectDevChain,
  createdAddresses,
  deployArtifact,
  devAddress,
  sendContractTx,
} from "../src/devchain/deploy.ts";
import { NEAR_HEAD_BLOCKS, runChainIndexer } from "../src/indexer/chain-indexer.ts";
import { inspectContract } from "../src/indexer/classify/inspect.ts";
import { connectDatabase } from "../src/store/pg/database.ts";
import { startEmbeddedPostgres } from "../src/store/pg/embedded.ts";
import { migrate } from "../src/store/pg/migrate.ts";
import { processTreeCpu } from "./bench/process-cpu.ts";
import { type RpcCounts, startRpcCounter } from "./bench/rpc-counter.ts";

const { values: args } = parseArgs({
  options: {
    creations: { type: "string", default: "10000,100000" },
    fresh: { type: "boolean", default: false },
    "timeout-minutes": { type: "string", default: "30" },
  },
});
const CHECKPOINTS = [...new Set(args.creations.split(",").map((s) => Number(s.trim())))].sort(
  (a, b) => a - b,
);
if (CHECKPOINTS.length === 0 || CHECKPOINTS.some((n) => !Number.isInteger(n) || n <= 0 || n > 1_000_000)) {
  throw new Error(`--creations takes counts from 1 to 1,000,000 separated by commas, not ${args.creations}`);
}
const TOTAL_CREATIONS = CHECKPOINTS.at(-1) as number;
const RUN_TIMEOUT_MS = Number(args["timeout-minutes"]) * 60_000;
if (!(RUN_TIMEOUT_MS > 0))
  throw new Error(`--timeout-minutes takes a positive number, not ${args["timeout-minutes"]}`);
const CHAIN_ID = 31337;
const BENCH_DIR = resolve(".bench");
/**
 * Empty blocks after the last creation: the checkpoints lie this far behind the head, where the
 * indexer backfills (near the head it inspects every deployment at once, by design).
 */
const TRAILING_BLOCKS = 2 * NEAR_HEAD_BLOCKS;
const CACHE_KEY = `${CHECKPOINTS.join("-")}-t${TRAILING_BLOCKS}`;
const STATE_FILE = join(BENCH_DIR, `anvil-state-creations-${CACHE_KEY}.json`);
const META_FILE = join(BENCH_DIR, `chain-creations-${CACHE_KEY}.json`);
/** As many children as fit in one transaction under anvil's default 30M block gas limit. */
const CHILDREN_PER_TX = 798;
const SPAWN_GAS = 30_000_000n;
/** The NFT side: an ERC-721 minted in batches to a few holders, then some of it moved. */
const NFT_HOLDERS = 4;
const NFT_TOKENS_PER_HOLDER = 100;
const NFT_TRANSFERS = 100;
const BUILD_TIMEOUT_MS = 15 * 60_000;
/** The indexer's defaults, as `mintlens index` runs it. */
const TUNING: IndexerTuning = {
  pollIntervalMs: 2000,
  maxBlocksPerBatch: 2000,
  prefetch: 3,
  rpcBatchSize: 100,
  rpcTimeoutMs: 30_000,
  rpcRetries: 8,
  maxLogRange: 2000,
};
/**
 * Anvil re-creates the genesis block when it loads a state file, so block 1's parent hash no
 * longer matches block 0; the genesis holds nothing, and indexing starts after it.
 */
const FIRST_BLOCK = 1;

interface ChainMeta {
  /** The block where each checkpoint's count of children is reached, by count. */
  checkpoints: { creations: number; block: number }[];
  head: number;
  factory: Address;
  erc721: Address;
  nftMints: number;
  nftTransfers: number;
}

const say = (message: string) => process.stdout.write(`${message}\n`);

async function buildChain(): Promise<ChainMeta> {
  say(`building a chain with ${TOTAL_CREATIONS} created contracts (cached in ${STATE_FILE})`);
  const started = Date.now();
  const checkTime = () => {
    if (Date.now() - started > BUILD_TIMEOUT_MS) {
      throw new Error(`building the chain took over ${BUILD_TIMEOUT_MS / 60_000} minutes`);
    }
  };
  rmSync(STATE_FILE, { force: true });
  // Dumped beside the cache and renamed once complete: an interrupted build leaves no cache behind.
  const partial = `${STATE_FILE}.partial`;
  rmSync(partial, { force: true });
  const anvil = await startAnvil({ chainId: CHAIN_ID, dumpState: partial });
  let meta: ChainMeta;
  try {
    const chain = connectDevChain(anvil.url);
    const erc721 = (await deployArtifact(chain, "TestERC721", ["Bench", "BNCH"])).address;
    const factory = (await deployArtifact(chain, "CreationFlood")).address;
    const erc721Abi = loadArtifact("TestERC721").abi;
    const holders = Array.from({ length: NFT_HOLDERS }, (_, i) => devAddress(i + 1));
    for (const [i, holder] of holders.entries()) {
      await sendContractTx(chain, {
        address: erc721,
        abi: erc721Abi,
        functionName: "mintBatch",
        args: [holder, BigInt(i * NFT_TOKENS_PER_HOLDER), BigInt(NFT_TOKENS_PER_HOLDER)],
        from: holder,
      });
    }
    for (let t = 0; t < NFT_TRANSFERS; t++) {
      const owner = t % NFT_HOLDERS;
      const tokenId = BigInt(owner * NFT_TOKENS_PER_HOLDER + Math.floor(t / NFT_HOLDERS));
      await sendContractTx(chain, {
        address: erc721,
        abi: erc721Abi,
        functionName: "transferFrom",
        args: [holders[owner], holders[(owner + 1) % NFT_HOLDERS], tokenId],
        from: holders[owner],
      });
    }

    const floodAbi = loadArtifact("CreationFlood").abi;
    const checkpoints: ChainMeta["checkpoints"] = [];
    let created = 0;
    let head = 0;
    for (const target of CHECKPOINTS) {
      // Bounded: each transaction adds at least one child.
      while (created < target) {
        checkTime();
        const n = Math.min(CHILDREN_PER_TX, target - created);
        const receipt = await sendContractTx(chain, {
          address: factory,
          abi: floodAbi,
          functionName: "spawn",
          args: [BigInt(n)],
          from: devAddress(0),
          gas: SPAWN_GAS,
        });
        created += n;
        head = Number(receipt.blockNumber);
        if (created % (CHILDREN_PER_TX * 25) < n) say(`  ${created} contracts created, block ${head}`);
      }
      checkpoints.push({ creations: target, block: head });
    }

    // In steps: anvil mining hundreds of blocks in one request outlasts the client's timeout.
    for (let mined = 0; mined < TRAILING_BLOCKS; mined += 8) {
      checkTime();
      await chain.testClient.mine({ blocks: 8 });
    }
    head = Number(await chain.publicClient.getBlockNumber());

    // The factory's nonce counts its children (from 1); the last one must hold code.
    const nonce = await chain.publicClient.getTransactionCount({ address: factory });
    const [last] = createdAddresses(factory, nonce - 1, 1);
    const code = last && (await chain.publicClient.getCode({ address: last }));
    if (nonce !== 1 + TOTAL_CREATIONS || !code || code.length <= 2) {
      throw new Error(`the factory made ${nonce - 1} contracts, not ${TOTAL_CREATIONS}`);
    }
    meta = {
      checkpoints,
      head,
      factory,
      erc721,
      nftMints: NFT_HOLDERS * NFT_TOKENS_PER_HOLDER,
      nftTransfers: NFT_TRANSFERS,
    };
    say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s: ${head + 1} blocks`);
  } finally {
    await anvil.stop();
  }
  renameSync(partial, STATE_FILE);
  writeFileSync(META_FILE, JSON.stringify(meta));
  return meta;
}

async function cachedChain(): Promise<ChainMeta> {
  if (args.fresh || !existsSync(STATE_FILE) || !existsSync(META_FILE)) return buildChain();
  const meta = JSON.parse(readFileSync(META_FILE, "utf8")) as ChainMeta;
  say(`using the cached chain: ${meta.head + 1} blocks (${STATE_FILE})`);
  return meta;
}

/** Anvil on the cached chain, which it only reads; a cache it cannot load is built again. */
async function startCachedChain(meta: ChainMeta): Promise<{ anvil: Anvil; meta: ChainMeta }> {
  try {
    return { anvil: await startAnvil({ chainId: CHAIN_ID, loadState: STATE_FILE }), meta };
  } catch (error) {
    say(`the cached chain cannot be loaded (${errorMessage(error).split("\n")[0]}): building it again`);
    const rebuilt = await buildChain();
    return { anvil: await startAnvil({ chainId: CHAIN_ID, loadState: STATE_FILE }), meta: rebuilt };
  }
}

interface RunResult {
  creations: number;
  blocks: number;
  seconds: number;
  rpc: RpcCounts;
  heapBefore: number;
  heapAtEnd: number;
  contractRows: number;
  transferRows: number;
  cpu: { node: number; anvil: number; postgres: number };
}

function collectGarbage(): void {
  const gc = globalThis.gc;
  if (!gc) throw new Error("run node with --expose-gc (npm run bench:creations does)");
  // Twice: objects freed by the first collection's finalizers go in the second.
  gc();
  gc();
}

async function indexCheckpoint(
  serverUrl: string,
  postmasterPid: number | undefined,
  checkpoint: { creations: number; block: number },
  chainMeta: ChainMeta,
): Promise<{ result: RunResult; meta: ChainMeta }> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe("DROP DATABASE IF EXISTS mintlens_bench_creations WITH (FORCE)");
  await admin.unsafe("CREATE DATABASE mintlens_bench_creations");
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = "/mintlens_bench_creations";
  await migrate(url.toString());
  const sql = await connectDatabase(url.toString(), { max: 10 });
  const { anvil, meta } = await startCachedChain(chainMeta);
  const counter = await startRpcCounter(anvil.url);
  const client = createChainClient({
    url: counter.url,
    batchSize: TUNING.rpcBatchSize,
    timeoutMs: TUNING.rpcTimeoutMs,
    retries: TUNING.rpcRetries,
    maxLogRange: TUNING.maxLogRange,
  });
  const target = meta.checkpoints.find((c) => c.creations === checkpoint.creations) ?? checkpoint;
  try {
    const nodeCpu = () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1e6;
    };
    const cpuOf = () => ({
      node: nodeCpu(),
      anvil: processTreeCpu(anvil.pid),
      postgres: postmasterPid === undefined ? 0 : processTreeCpu(postmasterPid),
    });
    await counter.reset();
    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    let heapAtEnd: number | undefined;
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
          rpcUrl: counter.url,
          startBlock: FIRST_BLOCK,
          confirmations: 0,
          contractDiscovery: "traces",
        },
        tuning: TUNING,
        logger: createLogger(process.env.MINTLENS_LOG_LEVEL ?? "warn"),
        inspect: (address, emitted) => inspectContract(client, address, emitted),
        untilBlock: target.block,
        onProgress: (progress) => {
          // The last batch is written and the indexer still holds whatever it keeps between batches.
          if (progress.nextBlock > target.block && heapAtEnd === undefined) {
            collectGarbage();
            heapAtEnd = process.memoryUsage().heapUsed;
          }
        },
      },
      AbortSignal.timeout(RUN_TIMEOUT_MS),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuEnd = cpuOf();
    const rpc = await counter.counts();
    if (heapAtEnd === undefined) {
      collectGarbage();
      heapAtEnd = process.memoryUsage().heapUsed;
    }
    const [rows] = await sql<{ contracts: string; transfers: string }[]>`
      SELECT (SELECT count(*) FROM contracts) AS contracts, (SELECT count(*) FROM nft_transfers) AS transfers`;
    return {
      meta,
      result: {
        creations: target.creations,
        blocks: target.block - FIRST_BLOCK + 1,
        seconds,
        rpc,
        heapBefore,
        heapAtEnd,
        contractRows: Number(rows?.contracts),
        transferRows: Number(rows?.transfers),
        cpu: {
          node: cpuEnd.node - cpuStart.node,
          anvil: cpuEnd.anvil - cpuStart.anvil,
          postgres: cpuEnd.postgres - cpuStart.postgres,
        },
      },
    };
  } finally {
    await client.close();
    await sql.end({ timeout: 5 });
    await counter.stop();
    await anvil.stop();
  }
}

const thousands = (n: number) => n.toLocaleString("en-US");
const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

function printTable(results: readonly RunResult[]): void {
  const methods = [...new Set(results.flatMap((r) => Object.keys(r.rpc.calls)))].sort(
    (a, b) => (results.at(-1)?.rpc.calls[b] ?? 0) - (results.at(-1)?.rpc.calls[a] ?? 0) || (a < b ? -1 : 1),
  );
  const external = process.env.BENCH_DATABASE_URL !== undefined;
  const rows: [string, (r: RunResult) => string][] = [
    ["blocks indexed", (r) => thousands(r.blocks)],
    ["indexing time", (r) => `${r.seconds.toFixed(2)} s`],
    ["JSON-RPC calls", (r) => thousands(Object.values(r.rpc.calls).reduce((a, b) => a + b, 0))],
    ...methods.map((m): [string, (r: RunResult) => string] => [
      `  ${m}`,
      (r) => thousands(r.rpc.calls[m] ?? 0),
    ]),
    ["HTTP requests", (r) => thousands(r.rpc.requests)],
    ["heap used at the end (after gc)", (r) => megabytes(r.heapAtEnd)],
    ["  growth over the run", (r) => megabytes(r.heapAtEnd - r.heapBefore)],
    ["rows in contracts", (r) => thousands(r.contractRows)],
    ["rows in nft_transfers", (r) => thousands(r.transferRows)],
    [
      "CPU s: node / anvil / postgres",
      (r) =>
        `${r.cpu.node.toFixed(1)} / ${r.cpu.anvil.toFixed(1)} / ${external ? "-" : r.cpu.postgres.toFixed(1)}`,
    ],
  ];
  const header = ["", ...results.map((r) => `${thousands(r.creations)} created`)];
  const table = [header, ...rows.map(([label, cell]) => [label, ...results.map(cell)])];
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? "").length)));
  for (const row of table) {
    say(
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join("   "),
    );
  }
}

async function main(): Promise<void> {
  collectGarbage();
  mkdirSync(BENCH_DIR, { recursive: true });
  let meta = await cachedChain();
  const pgDir = join(BENCH_DIR, "pg");
  const embedded = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: pgDir });
  const postmasterPid = embedded
    ? Number(readFileSync(join(pgDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0])
    : undefined;
  const serverUrl = process.env.BENCH_DATABASE_URL ?? (embedded?.url as string);
  const results: RunResult[] = [];
  try {
    for (const checkpoint of meta.checkpoints) {
      say(
        `indexing blocks ${FIRST_BLOCK}..${checkpoint.block}: ${thousands(checkpoint.creations)} contracts created`,
      );
      const run = await indexCheckpoint(serverUrl, postmasterPid, checkpoint, meta);
      meta = run.meta;
      results.push(run.result);
    }
  } finally {
    await embedded?.stop();
  }
  say("");
  say(
    `chain: an ERC-721 with ${meta.nftMints} mints and ${meta.nftTransfers} transfers, then a factory creating ${CHILDREN_PER_TX} contracts per block that never emit a transfer; each column indexes it from block ${FIRST_BLOCK} into a fresh database, discovering contracts by traces`,
  );
  printTable(results);
}

await main();
