import { setTimeout as sleep } from "node:timers/promises";
import { RepeatedNodeError } from "../chain/errors.ts";
import type { ChainClient } from "../chain/rpc-types.ts";
import type { ChainConfig, IndexerTuning } from "../config/config.ts";
import { errorMessage, TransientError, UserFacingError } from "../core/errors.ts";
import type { Hex } from "../core/hex.ts";
import type { Logger } from "../core/logger.ts";
import type { BlockHeader } from "../core/types.ts";
import { redactUrl } from "../core/url.ts";
import { DEFAULT_RATE_JUMP, DEFAULT_RATE_WINDOW_SECONDS, type RateBookConfig } from "../rates/convert.ts";
import { defaultMinDepth } from "../rates/pools.ts";
import type { Sql } from "../store/pg/database.ts";
import { classifyDatabaseError } from "../store/pg/errors.ts";
import { openWriteSession, type WriteSession } from "../store/pg/session.ts";
import {
  ensureChain,
  nextBlock,
  oldestRecentBlock,
  recordHead,
  storedBlockHash,
  storedBlockHashes,
} from "../store/tables/chain-state.ts";
import { storedContracts } from "../store/tables/contracts.ts";
import type { FetchedBatch } from "./batch.ts";
import { BatchSizer } from "./batch-sizer.ts";
import { type BatchPipeline, type Carries, createBatchPipeline, type PreparedBatch } from "./commit.ts";
import { TRANSFER_TOPICS } from "./decode/topics.ts";
import { type CreationSource, type FetchContext, fetchBatch, readBlocks } from "./fetch-batch.ts";
import { createOwnershipHistory, type OwnershipHistory } from "./ownership-history.ts";
import { type LeftOut, type Pricing, resolvePricing } from "./pricing.ts";
import { RECENT_BLOCKS_KEPT } from "./projections/checkpoint.ts";
import { createProjections } from "./projections.ts";
import { ContractRegistry, type InspectFn, RegistryResetError } from "./registry.ts";
import { rollbackAfter } from "./rollback.ts";
import { valueFlows } from "./value-flows.ts";

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
  /** Transfer-topic logs read but not indexed since start (each is recorded in skipped_logs). */
  malformed: number;
  unclassified: number;
  spam: number;
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
  /** Rows past which a multi-block batch is cut (default MAX_BATCH_ROWS). */
  maxBatchRows?: number;
  /** First wait after a failed round, doubled with each further failure up to a minute (default 1 s). */
  retryBaseMs?: number;
  /**
   * The pools and stablecoins exchange rates come from (default: the chain's configured ones,
   * described by the node at start, else its presets, none for other chains).
   */
  pricing?: Pricing;
  /** Blocks of the ownership history read per transaction (default 16 log ranges). */
  historyChunkBlocks?: number;
  /** Preset rate sources the node does not have, by kind (pool, usd_token, pegged_token), once at start. */
  onRateSourcesLeftOut?: (chain: string, counts: Record<LeftOut["kind"], number>) => void;
  /** Whether the outbox of the live event stream is written (default true; off only to measure its cost). */
  stream?: boolean;
}

const MAX_OUTAGE_BACKOFF_MS = 60_000;

/** The node's head is recorded for the API's readiness at most this often (one small UPDATE). */
export const HEAD_RECORD_MS = 5_000;

/** How long a round may read ownership history before it indexes new blocks again. */
const HISTORY_SLICE_MS = 10_000;

/**
 * Batches that end this close to the indexable head inspect their deployments at once, so a new
 * collection is listed before its first mint; further back (a backfill, where deployments run to
 * millions and most never emit a transfer) a deployment is inspected when it first emits one.
 */
export const NEAR_HEAD_BLOCKS = 128;

/**
 * How many times in a row the same block may fail the same way (a node that keeps giving the same
 * unusable answer, a statement the database keeps refusing) before the chain stops with that
 * cause. Outages (connections, timeouts, rate limits, a lagging node) are retried for ever.
 */
export const MAX_REPEATED_FAILURES = 5;

/** What a failure of one round calls for. */
type FailureKind = "outage" | "repeated" | "fatal";

function failureKind(error: unknown): FailureKind {
  if (error instanceof RegistryResetError) return "outage";
  const database = classifyDatabaseError(error);
  if (database === "connection") return "outage";
  if (database === "statement") return "repeated";
  if (error instanceof RepeatedNodeError) return "repeated";
  if (error instanceof TransientError) return "outage";
  return "fatal";
}

/** `step`, tried again (with the rounds' backoff) for as long as it fails for want of a database connection. */
async function retryingOutages<T>(
  step: () => Promise<T>,
  options: Pick<ChainIndexerOptions, "chain" | "logger" | "retryBaseMs">,
  signal: AbortSignal,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (signal.aborted || classifyDatabaseError(error) !== "connection") throw error;
      const delay = Math.min(
        MAX_OUTAGE_BACKOFF_MS,
        (options.retryBaseMs ?? 1000) * 2 ** Math.min(attempt, 6),
      );
      options.logger.error(
        { chain: options.chain.name, kind: "outage", retryInMs: delay },
        `starting: ${errorMessage(error)}`,
      );
      await sleep(delay, undefined, { signal }).catch(() => {});
      if (signal.aborted) throw error;
    }
  }
}

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
  const session = openWriteSession(sql, { lockChain: chain.chainId });
  // A database restarting or failing over while indexing starts is waited out, as in the rounds.
  const untilConnected = <T>(step: () => Promise<T>) => retryingOutages(step, options, signal);
  try {
    if (!(await untilConnected(() => session.ensureLocked())))
      throw new UserFacingError(`${chain.name}: another indexer is already indexing chain ${chain.chainId}`);
    const registered = await untilConnected(() => ensureChain(sql, chain));
    const next = registered.nextBlock;
    if (registered.startBlock !== chain.startBlock) {
      logger.warn(
        { chain: chain.name, storedStartBlock: registered.startBlock, givenStartBlock: chain.startBlock },
        `${chain.name} has been indexed from block ${registered.startBlock} since its first run: the start block ${chain.startBlock} given now is ignored (to index from another block, index into a new database)`,
      );
    }
    // Traces are probed where indexing resumes: a full node traces recent blocks only.
    const probeBlock = Math.min(next, await client.blockNumber());
    const pricing = options.pricing ?? (await resolvePricing(client, chain));
    const leftOut = "leftOut" in pricing ? (pricing.leftOut as LeftOut[]) : [];
    for (const source of leftOut) {
      logger.warn(
        { chain: chain.name, kind: source.kind, address: source.address },
        `preset rate source ${source.address} (${source.kind}) left out: ${source.reason}`,
      );
    }
    const counts = { pool: 0, usd_token: 0, pegged_token: 0 };
    for (const source of leftOut) counts[source.kind]++;
    options.onRateSourcesLeftOut?.(chain.name, counts);
    const indexer = new ChainIndexer(
      options,
      session,
      await creationSource(client, chain, logger, probeBlock),
      pricing,
    );
    await indexer.run(next, signal);
  } finally {
    await session.end();
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
      `${chain.name}: the node cannot trace block ${probeBlock} with trace_block or debug_traceBlockByHash (no trace API, or not that block's state)`,
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
  private readonly rateConfig: RateBookConfig;
  private readonly pipeline: BatchPipeline;
  private readonly history: OwnershipHistory | undefined;
  /** What the projections carry after the last batch prepared; resumed from the store after a failure or a reorg. */
  private carries: Carries = [];
  private next = 0;
  private lastHash: Hex | undefined;
  private head = 0;
  /** When the head was last recorded (performance.now()); -Infinity before the first time. */
  private headRecordedAt = Number.NEGATIVE_INFINITY;
  private readonly totals = { blocks: 0, transfers: 0, logs: 0, malformed: 0, unclassified: 0, spam: 0 };
  private outages = 0;
  private phantomReorgs = 0;
  /** The last failure of a round, to tell a block that keeps failing the same way. */
  private lastFailure: { block: number; message: string; count: number } | undefined;

  constructor(
    private readonly options: ChainIndexerOptions,
    private readonly session: WriteSession,
    creations: CreationSource,
    pricing: Pricing,
  ) {
    const { sql, client, chain, tuning } = options;
    this.registry = new ContractRegistry(
      (addresses) => storedContracts(sql, chain.chainId, addresses),
      options.inspect,
    );
    this.rateConfig = {
      nativePegged: pricing.nativePegged ?? chain.nativePegged ?? [],
      pools: pricing.pools,
      usdTokens: pricing.usdTokens,
      windowSeconds: chain.rateWindowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS,
      minDepth: chain.rateMinDepth ?? defaultMinDepth(chain.chainId),
      jump: chain.rateJump ?? DEFAULT_RATE_JUMP,
    };
    const nativePegged = new Set(this.rateConfig.nativePegged);
    this.fetchContext = {
      client,
      registry: this.registry,
      creations,
      pools: this.rateConfig.pools,
      nativePegged,
    };
    this.pipeline = createBatchPipeline({
      sql,
      chainId: chain.chainId,
      projections: createProjections({
        rates: this.rateConfig,
        ...(options.stream === false ? { stream: false } : {}),
        // The funder rule's memory is read back with the reader the batches use, so a resume sees
        // the flows a batch would have carried.
        readFlows: async (from, to) => {
          // Without traces the flows are the logs' alone: the receipts' creations are not needed.
          const read = await readBlocks(
            client,
            creations === "traces" ? "traces" : "events",
            from,
            to,
            TRANSFER_TOPICS,
          );
          return {
            flows: valueFlows(read, from, to, nativePegged),
            firstBlockTime: (read.headers[0] as BlockHeader).timestamp,
            lastBlockTime: (read.headers.at(-1) as BlockHeader).timestamp,
          };
        },
      }),
    });
    this.sizer = new BatchSizer(options.targetEventsPerBatch ?? 10_000, tuning.maxBlocksPerBatch);
    this.history =
      chain.ownershipHistory === "logs"
        ? createOwnershipHistory({
            sql,
            client,
            chainId: chain.chainId,
            chainName: chain.name,
            startBlock: chain.startBlock,
            chunkBlocks: options.historyChunkBlocks ?? tuning.maxLogRange * 16,
            logger: options.logger,
          })
        : undefined;
  }

  /**
   * Reads ownership history between two rounds (no batch in flight), for `sliceMs` at most, or to
   * the end; what it adds to the ownership is in the store, so the ownership's carry is read again
   * (only it: the others do not read what a history writes).
   */
  private async readHistory(signal: AbortSignal, sliceMs: number): Promise<void> {
    if (this.history === undefined) return;
    const applied = await this.history.work(this.session, this.next, signal, Date.now() + sliceMs);
    if (applied > 0) this.carries = await this.pipeline.refresh(this.next, this.carries, ["ownership"]);
  }

  async run(next: number, signal: AbortSignal): Promise<void> {
    const { sql, chain, client, tuning, logger } = this.options;
    this.next = next;
    logger.info({ chain: chain.name, nextBlock: this.next }, "indexing");
    // After a failed round the store is the only truth: the checkpoint and tip are read again.
    let resync = true;
    while (!signal.aborted) {
      try {
        if (resync) {
          this.next = await nextBlock(sql, chain.chainId);
          this.lastHash = await storedBlockHash(sql, chain.chainId, this.next - 1);
          this.carries = await this.pipeline.resume(this.next);
          resync = false;
        }
        if (!(await this.session.ensureLocked())) {
          throw new UserFacingError(
            `${chain.name}: lost the chain lock with a dropped database connection, and another indexer has taken it`,
          );
        }
        if (this.options.untilBlock !== undefined && this.next > this.options.untilBlock) {
          // A bounded run ends with every history it met read and applied.
          await this.readHistory(signal, Number.POSITIVE_INFINITY);
          if (signal.aborted || !this.history?.pending) return;
          continue;
        }
        await this.readHistory(signal, HISTORY_SLICE_MS);
        this.head = await client.blockNumber();
        await this.recordHead();
        let target = this.head - chain.confirmations;
        if (this.options.untilBlock !== undefined) target = Math.min(target, this.options.untilBlock);
        if (target < this.next) {
          this.report("follow", target);
          await sleep(tuning.pollIntervalMs, undefined, { signal }).catch(() => {});
          continue;
        }
        await this.indexRange(target, signal);
        this.outages = 0;
        this.lastFailure = undefined;
      } catch (error) {
        if (signal.aborted) return;
        resync = true;
        const kind = failureKind(error);
        const message = errorMessage(error);
        if (kind === "fatal") {
          if (error instanceof UserFacingError) throw error;
          throw new UserFacingError(`${chain.name}: stopped at block ${this.next}: ${message}`, {
            cause: error,
          });
        }
        // Backoff measures how long indexing has been stuck, so a batch committed since the last
        // failure starts it again from the bottom.
        if (this.lastFailure !== undefined && this.lastFailure.block !== this.next) this.outages = 0;
        const same = this.lastFailure?.block === this.next && this.lastFailure.message === message;
        const count = same ? (this.lastFailure?.count ?? 0) + 1 : 1;
        this.lastFailure = { block: this.next, message, count };
        if (kind === "repeated" && count >= MAX_REPEATED_FAILURES) {
          throw new UserFacingError(
            `${chain.name}: stopped at block ${this.next}, which failed ${count} times in a row the same way: ${message}`,
            { cause: error },
          );
        }
        this.outages++;
        const base = this.options.retryBaseMs ?? 1000;
        const delay = Math.min(MAX_OUTAGE_BACKOFF_MS, base * 2 ** Math.min(this.outages, 6));
        logger.error({ chain: chain.name, block: this.next, kind, retryInMs: delay }, message);
        await sleep(delay, undefined, { signal }).catch(() => {});
      }
    }
  }

  /**
   * Indexes [next, target] as a pipeline: `prefetch` batches are read ahead, and the next batch
   * is prepared while the previous one is being written. One write is in flight at a time.
   */
  private async indexRange(target: number, signal: AbortSignal): Promise<void> {
    const { chain, tuning } = this.options;
    const queue: Array<Promise<FetchedBatch>> = [];
    let cursor = this.next;
    const fill = () => {
      while (queue.length < tuning.prefetch && cursor <= target) {
        const to = Math.min(target, cursor + this.sizer.next() - 1);
        const pending = fetchBatch(this.fetchContext, cursor, to, {
          inspectDeployments: this.head - chain.confirmations - to < NEAR_HEAD_BLOCKS,
          ...(this.options.maxBatchRows !== undefined ? { maxRows: this.options.maxBatchRows } : {}),
        });
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
          await this.handleReorg(signal);
          return;
        }
        if (batch.to < batch.requestedTo) {
          // Cut short to bound its expansion: the batches read ahead start past its end.
          queue.length = 0;
          cursor = batch.to + 1;
        }
        fill();
        const prepared = await this.pipeline.prepare(batch, previous?.carries ?? this.carries);
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

  /** The heartbeat the API's readiness reads: also written between batches, so a long backfill shows alive. */
  private async recordHead(): Promise<void> {
    const now = performance.now();
    if (now - this.headRecordedAt < HEAD_RECORD_MS) return;
    this.headRecordedAt = now;
    const { sql, chain } = this.options;
    await recordHead(sql, chain.chainId, this.head, chain.confirmations);
  }

  private async write(prepared: PreparedBatch, target: number): Promise<void> {
    const { batch } = prepared;
    await this.pipeline.write(this.session, prepared, this.registry);
    await this.recordHead();
    this.carries = prepared.carries;
    this.lastHash = batch.headers.at(-1)?.hash;
    this.next = batch.to + 1;
    // What a batch costs is its rows: ERC-2309 ranges and ERC-1155 batches make more than their
    // logs, and a traced range full of deployments (gas-token children) makes them with no log.
    const rows = Math.max(batch.logCount, batch.nft.length) + batch.creations.length;
    this.sizer.observe(batch.to - batch.from + 1, rows);
    this.totals.blocks += batch.to - batch.from + 1;
    this.totals.transfers += batch.nft.length;
    this.totals.logs += batch.logCount;
    if (batch.skipped.length > 0) this.reportSkipped(batch);
    this.report(this.next > target ? "follow" : "backfill", target);
  }

  /** Counts and logs the logs a batch read but did not index (each is also stored in skipped_logs). */
  private reportSkipped(batch: FetchedBatch): void {
    const counts = { malformed: 0, unclassified: 0, spam: 0 };
    for (const log of batch.skipped) counts[log.reason]++;
    this.totals.malformed += counts.malformed;
    this.totals.unclassified += counts.unclassified;
    this.totals.spam += counts.spam;
    const examples = batch.skipped.slice(0, 5).map((log) => ({
      block: log.blockNumber,
      logIndex: log.logIndex,
      contract: log.contract,
      reason: log.reason,
      ...(log.tokens !== undefined ? { tokens: log.tokens.toString() } : {}),
    }));
    this.options.logger.warn(
      { chain: this.options.chain.name, from: batch.from, to: batch.to, ...counts, examples },
      `${batch.skipped.length} transfer logs not indexed in blocks ${batch.from}..${batch.to} (recorded in skipped_logs)`,
    );
  }

  /** Finds the newest stored block the node still agrees with and rolls back everything after it. */
  private async handleReorg(signal: AbortSignal): Promise<void> {
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
    if (orphaned === 0) {
      // The node's next block does not build on our tip, yet its copy of the tip is ours: it answered
      // from two replicas that disagree. Nothing to undo; wait for it to settle rather than ask again at once.
      this.phantomReorgs++;
      const base = (this.options.retryBaseMs ?? 1000) / 2;
      const delay = Math.min(MAX_OUTAGE_BACKOFF_MS, base * 2 ** Math.min(this.phantomReorgs, 7));
      logger.warn(
        { chain: chain.name, block: this.next, retryInMs: delay },
        `the node's block ${this.next} does not build on block ${ancestor}, which it still reports unchanged: inconsistent answers, retrying`,
      );
      await sleep(delay, undefined, { signal }).catch(() => {});
      return;
    }
    this.phantomReorgs = 0;
    const undone = await rollbackAfter(this.session, chain.chainId, ancestor, this.pipeline.projections);
    this.registry.reset();
    this.carries = await this.pipeline.resume(ancestor + 1);
    this.next = ancestor + 1;
    this.lastHash = await storedBlockHash(sql, chain.chainId, ancestor);
    logger.warn(
      { chain: chain.name, ancestor, orphanedBlocks: orphaned, transfersUndone: undone },
      `chain reorganisation: rolled back blocks ${ancestor + 1}..${ancestor + orphaned}`,
    );
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
