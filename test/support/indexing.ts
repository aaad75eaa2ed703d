import { createChainClient } from "../../src/chain/client.ts";
import type { ChainConfig, ContractDiscovery, IndexerTuning } from "../../src/config/config.ts";
import { type Logger, silentLogger } from "../../src/core/logger.ts";
import { type ChainIndexerOptions, type Progress, runChainIndexer } from "../../src/indexer/chain-indexer.ts";
import { inspectContract } from "../../src/indexer/classify/inspect.ts";
import type { InspectFn } from "../../src/indexer/registry.ts";
import type { Sql } from "../../src/store/pg/database.ts";

export const TEST_TUNING: IndexerTuning = {
  pollIntervalMs: 100,
  maxBlocksPerBatch: 50,
  prefetch: 3,
  rpcBatchSize: 50,
  rpcTimeoutMs: 5000,
  rpcRetries: 8,
  maxLogRange: 2000,
};

export interface IndexOptions {
  sql: Sql;
  rpcUrl: string;
  chainId: number;
  /** Without it the indexer follows the head until `signal` aborts. */
  untilBlock?: number;
  signal?: AbortSignal;
  confirmations?: number;
  discovery?: ContractDiscovery;
  tuning?: Partial<IndexerTuning>;
  targetEventsPerBatch?: number;
  /** Wraps the real inspection (to count or fail calls). */
  wrapInspect?: (inspect: InspectFn) => InspectFn;
  startBlock?: number;
  /** Ownership of collections older than the start block, and blocks of it read per transaction. */
  ownershipHistory?: ChainConfig["ownershipHistory"];
  historyChunkBlocks?: number;
  onProgress?: (progress: Progress) => void;
  retryBaseMs?: number;
  logger?: Logger;
  maxBatchRows?: number;
  /** Tokens worth one native coin each (the wrapped coin, a pegged pool). */
  nativePegged?: readonly `0x${string}`[];
  /** The pools and stablecoins exchange rates come from. */
  pricing?: ChainIndexerOptions["pricing"];
  /** Pools and dollar tokens as configured, described by the node when indexing starts. */
  ratePools?: ChainConfig["ratePools"];
  usdTokens?: ChainConfig["usdTokens"];
  /** The chain's name (default `test`) and its rate settings. */
  chain?: Partial<Pick<ChainConfig, "name" | "rateWindowSeconds" | "rateMinDepth" | "rateJump">>;
  onRateSourcesLeftOut?: ChainIndexerOptions["onRateSourcesLeftOut"];
}

export function testChain(rpcUrl: string, chainId: number, options: Partial<ChainConfig> = {}): ChainConfig {
  return {
    name: "test",
    chainId,
    nativeSymbol: "ETH",
    rpcUrl,
    startBlock: 0,
    confirmations: 0,
    contractDiscovery: "auto",
    ...options,
  };
}

/** Indexes a chain into `sql` up to `untilBlock` with the real indexer and a real RPC client. */
export async function indexUntil(options: IndexOptions): Promise<void> {
  const tuning = { ...TEST_TUNING, ...options.tuning };
  const wrap = options.wrapInspect ?? ((inspect: InspectFn) => inspect);
  const client = createChainClient({
    url: options.rpcUrl,
    batchSize: tuning.rpcBatchSize,
    timeoutMs: tuning.rpcTimeoutMs,
    retries: tuning.rpcRetries,
    retryBaseMs: 10,
    maxLogRange: tuning.maxLogRange,
  });
  try {
    await runChainIndexer(
      {
        sql: options.sql,
        client,
        chain: testChain(options.rpcUrl, options.chainId, {
          confirmations: options.confirmations ?? 0,
          contractDiscovery: options.discovery ?? "auto",
          startBlock: options.startBlock ?? 0,
          ...(options.ownershipHistory ? { ownershipHistory: options.ownershipHistory } : {}),
          ...(options.nativePegged ? { nativePegged: options.nativePegged } : {}),
          ...(options.ratePools ? { ratePools: options.ratePools } : {}),
          ...(options.usdTokens ? { usdTokens: options.usdTokens } : {}),
          ...options.chain,
        }),
        tuning,
        logger: options.logger ?? silentLogger(),
        inspect: wrap((address, emitted) => inspectContract(client, address, emitted)),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        retryBaseMs: options.retryBaseMs ?? 50,
        ...(options.maxBatchRows !== undefined ? { maxBatchRows: options.maxBatchRows } : {}),
        ...(options.untilBlock !== undefined ? { untilBlock: options.untilBlock } : {}),
        ...(options.targetEventsPerBatch ? { targetEventsPerBatch: options.targetEventsPerBatch } : {}),
        ...(options.pricing ? { pricing: options.pricing } : {}),
        ...(options.historyChunkBlocks ? { historyChunkBlocks: options.historyChunkBlocks } : {}),
        ...(options.onRateSourcesLeftOut ? { onRateSourcesLeftOut: options.onRateSourcesLeftOut } : {}),
      },
      options.signal ?? AbortSignal.timeout(300_000),
    );
  } finally {
    await client.close();
  }
}

/**
 * The next block the indexer will read: 0 before it has registered the chain, or before a process
 * under test has created the store's tables.
 */
export async function nextIndexedBlock(sql: Sql, chainId: number): Promise<number> {
  try {
    const [row] = await sql<{ next_block: string }[]>`
      SELECT next_block FROM chains WHERE chain_id = ${chainId}`;
    return Number(row?.next_block ?? 0);
  } catch (error) {
    if ((error as { code?: string }).code === "42P01") return 0;
    throw error;
  }
}
