import { setTimeout as sleep } from "node:timers/promises";
import type { ChainClient } from "../chain/rpc-types.ts";
import type { ChainConfig, IndexerTuning } from "../config/config.ts";
import { errorMessage, TransientError, UserFacingError } from "../core/errors.ts";
import type { Hex } from "../core/hex.ts";
import type { Logger } from "../core/logger.ts";
import { redactUrl } from "../core/url.ts";
import { ensureChain, oldestRecentBlock, storedBlockHash, storedBlockHashes } from "../store/chain-state.ts";
import type { Sql } from "../store/database.ts";
import { tryLockChain } from "../store/lock.ts";
import type { FetchedBatch } from "./batch.ts";
import { BatchSizer } from "./batch-sizer.ts";
import { type PreparedBatch, prepareBatch, RECENT_BLOCKS_KEPT, writeBatch } from "./commit.ts";
import { type CreationSource, type FetchContext, fetchBatch } from "./fetch-batch.ts";
import { ContractRegistry, type InspectFn } from "./registry.ts";
import { rollbackAfter } from "./rollback.ts";

export interface Progress {
  chain: string;
  phase: "backfill" | "follow";
  /** First block not yet indexed. */
  nextBlock: number;
  /** Highest block that may be indexed now (head minus confirmations). */
  target: number;
  head: number;
  /** Totals since start. */
  blocks: number;
  transfers: number;
  logs: number;
}

export interface ChainIndexerOptions {
  sql: Sql;
  client: ChainClient;
  chain: ChainConfig;
  tuning: IndexerTuning;
  logger: Logger;
  inspect: InspectFn;
  /** Logs per batch the sizer aims at. */
  targetEventsPerBatch?: number;
  onProgress?: (progress: Progress) => void;
  /** Stop once this block is indexed (benchmarks and tests); otherwise follow the head forever. */
  untilBlock?: number;
}

const MAX_OUTAGE_BACKOFF_MS = 60_000;

/**
 * Indexes one chain: backfills from the checkpoint to the head minus the confirmation depth,
 * then follows the head. Batches are fetched ahead while the previous one is written.
 */
export async function runChainIndexer(options: ChainIndexerOptions, signal: AbortSignal): Promise<void> {
  const { sql, client, chain, logger } = options;
  const nodeChainId = await client.chainId().catch((error: unknown) => {
    throw new UserFacingError(`${chain.name}: cannot use the node: ${errorMessage(error)}`);
  });
  if (nodeChainId !== chain.chainId) {
    throw new UserFacingError(
      `${chain.name}: the node at ${redactUrl(client.url)} serves chain id ${nodeChainId}, not ${chain.chainId}`,
    );
  }
  const unlock = await tryLockChain(sql, chain.chainId);
  if (!unlock)
    throw new UserFacingError(`${chain.name}: another indexer is already indexing chain ${chain.chainId}`);
  try {
    // Traces are probed where indexing resumes: a full node traces recent blocks only.
    const probeBlock = Math.min(await ensureChain(sql, chain), await client.blockNumber());
    const indexer = new ChainIndexer(options, await creationSource(client, chain, logger, probeBlock));
    await indexer.run(signal);
  } finally {
    await unlock().catch(() => {});
  }
}

async function creationSource(
  client: ChainClient,
  chain: ChainConfig,
  logger: Logger,
  probeBlock: number,
): Promise<CreationSource> {
  if (chain.contractDiscovery === "receipts" || chain.contractDiscovery === "events")
    return chain.contractDiscovery;
  const api = await client.traceApi(probeBlock);
  if (api !== "none") return "traces";
  if (chain.contractDiscovery === "traces") {
    throw new UserFacingError(
      `${chain.name}: the node cannot trace block ${probeBlock} with trace_block or debug_traceBlockByNumber (no trace API, or not that block's state)`,
    );
  }
  logger.warn(
    { chain: chain.name, probeBlock },
    `the node cannot trace block ${probeBlock} (no trace API, or not that block's state): contracts deployed by factories are found when they first emit a transfer, and their mint event is that transaction`,
  );
  return "receipts";
}

class ChainIndexer {
  private readonly registry: ContractRegistry;
  private readonly fetchContext: FetchContext;
  private readonly sizer: BatchSizer;
  private next = 0;
  private lastHash: Hex | undefined;
  private head = 0;
  private readonly totals = { blocks: 0, transfers: 0, logs: 0 };
  private outages = 0;

  constructor(
    private readonly options: ChainIndexerOptions,
    creations: CreationSource,
  ) {
    const { sql, client, chain, tuning } = options;
    this.registry = new ContractRegistry(sql, chain.chainId, options.inspect);
    this.fetchContext = { client, registry: this.registry, creations };
    this.sizer = new BatchSizer(options.targetEventsPerBatch ?? 10_000, tuning.maxBlocksPerBatch);
  }

  async run(signal: AbortSignal): Promise<void> {
    const { sql, chain, client, tuning, logger } = this.options;
    this.next = await ensureChain(sql, chain);
    this.lastHash = await storedBlockHash(sql, chain.chainId, this.next - 1);
    logger.info({ chain: chain.name, nextBlock: this.next }, "indexing");
    while (!signal.aborted) {
      if (this.options.untilBlock !== undefined && this.next > this.options.untilBlock) return;
      try {
        this.head = await client.blockNumber();
        let target = this.head - chain.confirmations;
        if (this.options.untilBlock !== undefined) target = Math.min(target, this.options.untilBlock);
        if (target < this.next) {
          this.report("follow", target);
          await sleep(tuning.pollIntervalMs, undefined, { signal }).catch(() => {});
          continue;
        }
        await this.indexRange(target, signal);
        this.outages = 0;
      } catch (error) {
        if (!(error instanceof TransientError)) throw error;
        this.outages++;
        const delay = Math.min(MAX_OUTAGE_BACKOFF_MS, 1000 * 2 ** Math.min(this.outages, 6));
        logger.error({ chain: chain.name, retryInMs: delay }, errorMessage(error));
        await sleep(delay, undefined, { signal }).catch(() => {});
      }
    }
  }

  /**
   * Indexes [next, target] as a pipeline: `prefetch` batches are read ahead, and the next batch
   * is prepared while the previous one is being written. One write is in flight at a time.
   */
  private async indexRange(target: number, signal: AbortSignal): Promise<void> {
    const { sql, chain, tuning } = this.options;
    const queue: Array<Promise<FetchedBatch>> = [];
    let cursor = this.next;
    const fill = () => {
      while (queue.length < tuning.prefetch && cursor <= target) {
        const to = Math.min(target, cursor + this.sizer.next() - 1);
        const pending = fetchBatch(this.fetchContext, cursor, to);
        // Batches dropped after a reorg or an error are never awaited.
        pending.catch(() => {});
        queue.push(pending);
        cursor = to + 1;
      }
    };
    let writing: Promise<void> | undefined;
    let previous: PreparedBatch | undefined;
    // The hash the next batch must build on: that of the last batch prepared, written or not.
    let tipHash = this.lastHash;
    fill();
    try {
      while (queue.length > 0 && !signal.aborted) {
        const batch = await (queue.shift() as Promise<FetchedBatch>);
        const first = batch.headers[0];
        if (tipHash !== undefined && first && first.parentHash !== tipHash) {
          await writing;
          writing = undefined;
          await this.handleReorg();
          return;
        }
        fill();
        const prepared = await prepareBatch(sql, chain.chainId, batch, previous?.unitsAfter);
        await writing;
        writing = this.write(prepared, target);
        // Awaited before the next write or at the end; a failure must not go unhandled meanwhile.
        writing.catch(() => {});
        previous = prepared;
        tipHash = batch.headers.at(-1)?.hash ?? tipHash;
      }
    } finally {
      // Whatever ends the loop, the write under way finishes (or fails) before the range does.
      await writing?.catch(() => {});
    }
    await writing;
  }

  private async write(prepared: PreparedBatch, target: number): Promise<void> {
    const { sql, chain } = this.options;
    const { batch } = prepared;
    await writeBatch(sql, chain.chainId, prepared, this.registry);
    this.lastHash = batch.headers.at(-1)?.hash;
    this.next = batch.to + 1;
    this.sizer.observe(batch.to - batch.from + 1, batch.logCount);
    this.totals.blocks += batch.to - batch.from + 1;
    this.totals.transfers += batch.nft.length;
    this.totals.logs += batch.logCount;
    this.report(this.next > target ? "follow" : "backfill", target);
  }

  /** Finds the newest stored block the node still agrees with and rolls back everything after it. */
  private async handleReorg(): Promise<void> {
    const { sql, client, chain, logger } = this.options;
    const oldest = (await oldestRecentBlock(sql, chain.chainId)) ?? this.next - 1;
    const floor = Math.max(oldest, this.next - RECENT_BLOCKS_KEPT);
    const stored = await storedBlockHashes(sql, chain.chainId, floor, this.next - 1);
    let ancestor: number | undefined;
    for (let top = this.next - 1; top >= floor && ancestor === undefined; top -= 32) {
      const numbers = Array.from({ length: Math.min(32, top - floor + 1) }, (_, i) => top - i);
      const headers = await client.getHeaders(numbers);
      ancestor = headers.find((header) => stored.get(header.number) === header.hash)?.number;
    }
    if (ancestor === undefined) {
      throw new UserFacingError(
        `${chain.name}: the chain reorganised below block ${floor}, deeper than the ${RECENT_BLOCKS_KEPT} blocks kept; re-index from an earlier block`,
      );
    }
    const orphaned = this.next - 1 - ancestor;
    const undone = await rollbackAfter(sql, chain.chainId, ancestor);
    this.registry.reset();
    this.next = ancestor + 1;
    this.lastHash = await storedBlockHash(sql, chain.chainId, ancestor);
    if (orphaned > 0) {
      logger.warn(
        { chain: chain.name, ancestor, orphanedBlocks: orphaned, transfersUndone: undone },
        `chain reorganisation: rolled back blocks ${ancestor + 1}..${ancestor + orphaned}`,
      );
    }
  }

  private report(phase: Progress["phase"], target: number): void {
    this.options.onProgress?.({
      chain: this.options.chain.name,
      phase,
      nextBlock: this.next,
      target,
      head: this.head,
      ...this.totals,
    });
  }
}
