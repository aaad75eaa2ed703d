/**
 * Loads the synthetic market into a fresh database the way the indexer writes a chain: each batch
 * of the synthetic chain is classified by the contract registry, prepared by the batch pipeline
 * (ownership replayed over the stored units, trades attributed and priced at the pools' rates,
 * everything encoded) and committed by its write in one pipelined transaction holding the
 * chain's lock, the next batch prepared while the previous one is written. Every table the API
 * reads is therefore derived by the indexer's own code.
 */
import type { Address } from "../../src/core/hex.ts";
import type { ContractType } from "../../src/core/types.ts";
import type { FetchedBatch } from "../../src/indexer/batch.ts";
import { type BatchPipeline, createBatchPipeline, type PreparedBatch } from "../../src/indexer/commit.ts";
import type { EventShape } from "../../src/indexer/decode/shapes.ts";
import { createProjections } from "../../src/indexer/projections.ts";
import { ContractRegistry, type Inspection } from "../../src/indexer/registry.ts";
import { connectDatabase, type Sql } from "../../src/store/pg/database.ts";
import { migrate } from "../../src/store/pg/migrate.ts";
import { openWriteSession } from "../../src/store/pg/session.ts";
import { ensureChain } from "../../src/store/tables/chain-state.ts";
import { storedContracts } from "../../src/store/tables/contracts.ts";
import { type ChainTotals, SyntheticChain } from "./chain.ts";
import { apiMarketShape, type Market, planMarket } from "./market.ts";
import { planSchedule } from "./schedule.ts";

export interface LoadOptions {
  url: string;
  sales: number;
  seed: string;
  chainId: number;
  chainName: string;
  /** NFT transfers per batch, about. */
  batchRows: number;
  /** Unix seconds the year of history ends at. */
  now: number;
  log: (message: string) => void;
}

export interface LoadReport {
  market: Market;
  totals: ChainTotals;
  batches: number;
  /** Generating, preparing and committing every batch. */
  loadSeconds: number;
  /** VACUUM ANALYZE afterwards, as autovacuum would have done on a live server. */
  vacuumSeconds: number;
}

export async function loadDataset(options: LoadOptions): Promise<LoadReport> {
  const { chainId, log } = options;
  await migrate(options.url);
  const sql = await connectDatabase(options.url, { max: 4 });
  try {
    const { nextBlock: next } = await ensureChain(sql, {
      chainId,
      name: options.chainName,
      nativeSymbol: "ETH",
      startBlock: 0,
    });
    if (next !== 0) throw new Error(`the database already holds chain ${chainId} up to block ${next - 1}`);
    const market = planMarket(options.sales, options.seed, options.now, apiMarketShape(options.sales));
    const { size } = market;
    log(
      `loading ${size.sales.toLocaleString("en")} sales: ${size.collections.toLocaleString("en")} collections, ` +
        `${size.tokens.toLocaleString("en")} tokens, ${size.wallets.toLocaleString("en")} wallets, 365 days`,
    );
    const started = performance.now();
    const chain = new SyntheticChain(market, planSchedule(market));
    const batches = await commitChain(sql, options, market, chain);
    const loadSeconds = (performance.now() - started) / 1000;
    const vacuumStarted = performance.now();
    await sql`VACUUM ANALYZE`;
    const vacuumSeconds = (performance.now() - vacuumStarted) / 1000;
    return { market, totals: chain.totals, batches, loadSeconds, vacuumSeconds };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function commitChain(
  sql: Sql,
  options: LoadOptions,
  market: Market,
  chain: SyntheticChain,
): Promise<number> {
  const { log } = options;
  const started = performance.now();
  let reported = started;
  return commitBatches(sql, {
    chainId: options.chainId,
    writer: marketWriter(sql, options.chainId, market),
    next: () => chain.next(options.batchRows),
    start: 0,
    onBatch(batch) {
      if (performance.now() - reported < 10_000) return;
      reported = performance.now();
      const seconds = (reported - started) / 1000;
      const done = chain.totals.sales;
      log(
        `  ${done.toLocaleString("en")} sales, block ${batch.to.toLocaleString("en")} of ` +
          `${chain.head.toLocaleString("en")}, ${seconds.toFixed(0)} s (${Math.round(done / seconds).toLocaleString("en")} sales/s)`,
      );
    },
  });
}

/** The contract registry and the batch pipeline of a market's chain, as the indexer makes them. */
export interface MarketWriter {
  registry: ContractRegistry;
  pipeline: BatchPipeline;
}

export function marketWriter(sql: Sql, chainId: number, market: Market): MarketWriter {
  const inspections = inspectionsOf(market);
  const registry = new ContractRegistry(
    (addresses) => storedContracts(sql, chainId, addresses),
    async (address) => {
      const found = inspections.get(address);
      if (!found) throw new Error(`no contract ${address} in the synthetic market`);
      return found;
    },
  );
  const pipeline = createBatchPipeline({
    sql,
    chainId,
    projections: createProjections({
      rates: {
        nativePegged: [market.weth.address],
        pools: [market.pools.wethUsdc, market.pools.apeWeth],
        usdTokens: market.usdTokens,
      },
    }),
  });
  return { registry, pipeline };
}

export interface CommitOptions {
  chainId: number;
  writer: MarketWriter;
  /** The next batch to commit; undefined at the end. */
  next: () => FetchedBatch | undefined;
  /** The first block the store does not hold: the carries are resumed from there. */
  start: number;
  /** NFT transfers the store held when its statistics were last gathered. */
  analyzedAt?: number;
  /** Called once the carries are resumed, before the first batch. */
  onResumed?: () => void | Promise<void>;
  /** Called once each batch is handed to the write (which may still be running). */
  onBatch?: (batch: FetchedBatch) => void;
}

/**
 * Commits batches as the indexer does: each one's contracts classified by the registry, prepared
 * from the carries of the one before and written in one pipelined transaction holding the chain's
 * lock while the next is prepared. Returns the number of batches.
 */
export async function commitBatches(sql: Sql, options: CommitOptions): Promise<number> {
  const { chainId } = options;
  const { registry, pipeline } = options.writer;
  const session = openWriteSession(sql, { lockChain: chainId });
  let previous: PreparedBatch | undefined;
  let writing: Promise<void> | undefined;
  let batches = 0;
  let analyzedAt = Math.max(10_000, options.analyzedAt ?? 0);
  let rows = options.analyzedAt ?? 0;
  try {
    if (!(await session.ensureLocked())) throw new Error(`another writer holds the lock of chain ${chainId}`);
    const resumed = await pipeline.resume(options.start);
    await options.onResumed?.();
    for (let batch = options.next(); batch; batch = options.next()) {
      batch.contracts = await contractsToCommit(registry, batch);
      const prepared = await pipeline.prepare(batch, previous?.carries ?? resumed);
      await writing;
      rows += batch.nft.length;
      if (rows >= 2 * analyzedAt) {
        // What autovacuum does as tables grow, which a load this fast outruns: without statistics
        // the planner takes the batch's joins for tiny ones and scans whole tables every batch.
        await sql`ANALYZE`;
        analyzedAt = rows;
      }
      writing = pipeline.write(session, prepared, registry);
      // Awaited before the next write or at the end; a failure must not go unhandled meanwhile.
      writing.catch(() => {});
      previous = prepared;
      batches++;
      options.onBatch?.(batch);
    }
    await writing;
  } finally {
    await writing?.catch(() => {});
    await session.end();
  }
  return batches;
}

/**
 * The contracts a batch commits, as `fetchBatch` finds them: its emitters are classified with the
 * event shapes they emitted (a contract is stored when it first emits a transfer, as in a backfill),
 * and those whose inspection is not stored yet are committed with the batch.
 */
export async function contractsToCommit(registry: ContractRegistry, batch: FetchedBatch): Promise<Address[]> {
  const emitted = new Map<Address, Set<EventShape>>();
  const add = (address: Address, shape: EventShape) => {
    const shapes = emitted.get(address);
    if (shapes) shapes.add(shape);
    else emitted.set(address, new Set([shape]));
  };
  for (const t of batch.nft)
    add(t.contract, t.standard === "erc1155" ? "erc1155-transfer" : "erc721-transfer");
  for (const f of batch.fungible) add(f.contract, "erc20-transfer");
  const classified = await registry.ensure(emitted);
  const involved = new Set<Address>([...batch.creations.map((c) => c.address), ...emitted.keys()]);
  return classified.pending.filter((address) => involved.has(address));
}

/** What inspecting each contract of the market on a node would answer. */
function inspectionsOf(market: Market): Map<Address, Inspection> {
  const inspections = new Map<Address, Inspection>();
  for (const c of market.collections) {
    const types: ContractType[] = [c.standard === "erc721" ? "TYPE_ERC721" : "TYPE_ERC1155"];
    inspections.set(c.address, { types, name: c.name, symbol: c.symbol, decimals: 0 });
  }
  for (const token of [market.weth, market.ape, market.usdc]) {
    const { name, symbol, decimals } = token;
    inspections.set(token.address, { types: ["TYPE_ERC20"], name, symbol, decimals });
  }
  return inspections;
}
