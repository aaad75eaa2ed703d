/**
 * New activity indexed on top of a built store, and the store set back afterwards.
 *
 * - `rankingsPass` writes fifteen-minute batches one by one, each in one transaction as the
 *   pipeline's write does, but sending each projection's statements in turn and timing them: the
 *   rankings' statements run at their place in the transaction, after the rollups they read, on the
 *   data the batches before them left. Sent in turn rather than pipelined, the batch's write costs
 *   a few more round trips on loopback; its total is reported beside the rankings' share.
 * - `ingestPass` writes the same chain, merged into backfill-sized batches, through the pipeline's
 *   real loop (prepare the next batch while the previous one is written, pipelined transactions),
 *   and counts events/s and the CPU of this process and of PostgreSQL.
 * - `restoreStore` rolls every block after the built head back with the indexer's own rollback,
 *   as after a reorganisation, so that each run measures the store as it was built.
 */
import { readFileSync } from "node:fs";
import { type FetchedBatch, timeOfBatch } from "../../src/indexer/batch.ts";
import type { PreparedBatch } from "../../src/indexer/commit.ts";
import { firstSeenIn } from "../../src/indexer/projections/contracts.ts";
import { rollbackAfter } from "../../src/indexer/rollback.ts";
import type { Queryable, Sql } from "../../src/store/pg/database.ts";
import { openWriteSession, runInOrder, type WriteSession } from "../../src/store/pg/session.ts";
import { nextBlock } from "../../src/store/tables/chain-state.ts";
import { processTreeCpu } from "../bench/process-cpu.ts";
import { commitBatches, contractsToCommit, type MarketWriter, marketWriter } from "../bench-api/dataset.ts";
import type { Market } from "../bench-api/market.ts";
import { CHAIN_ID, type RecentBlock, type ScaleStore, type StoreMeta } from "./store.ts";

export interface BatchTiming {
  transfers: number;
  /** Milliseconds preparing the batch (reading stored units and sales, replaying, encoding). */
  prepare: number;
  /** Milliseconds of each projection's statements, by name, and of the whole transaction. */
  projections: Record<string, number>;
  write: number;
}

export async function rankingsPass(
  sql: Sql,
  market: Market,
  meta: StoreMeta,
  batches: readonly FetchedBatch[],
): Promise<BatchTiming[]> {
  const { registry, pipeline } = marketWriter(sql, CHAIN_ID, market);
  const session = openWriteSession(sql, { lockChain: CHAIN_ID });
  const timings: BatchTiming[] = [];
  try {
    if (!(await session.ensureLocked())) throw new Error("another writer holds the chain's lock");
    let carries = await pipeline.resume(meta.builtHead + 1);
    for (const batch of batches) {
      batch.contracts = await contractsToCommit(registry, batch);
      const started = performance.now();
      const prepared = await pipeline.prepare(batch, carries);
      const prepare = performance.now() - started;
      const { projections, write } = await timedWrite(session, { registry, pipeline }, prepared);
      timings.push({ transfers: batch.nft.length, prepare, projections, write });
      carries = prepared.carries;
    }
  } finally {
    await session.end();
  }
  return timings;
}

/** The pipeline's write, each projection's statements sent in turn and timed. */
async function timedWrite(
  session: WriteSession,
  { registry, pipeline }: MarketWriter,
  prepared: PreparedBatch,
): Promise<{ projections: Record<string, number>; write: number }> {
  const { batch } = prepared;
  const timeOf = timeOfBatch(batch);
  const contracts = registry.takeRecords(batch.contracts, firstSeenIn(batch, timeOf));
  const context = { chainId: CHAIN_ID, batch, timeOf, contracts };
  const projections: Record<string, number> = {};
  const started = performance.now();
  await session.transaction(async (tx) => {
    await tx`SET LOCAL synchronous_commit = off`;
    for (const [i, p] of pipeline.projections.entries()) {
      const at = performance.now();
      await runInOrder(p.statements(tx, context, prepared.prepared[i]));
      projections[p.name] = performance.now() - at;
    }
  });
  registry.markStored(contracts);
  return { projections, write: performance.now() - started };
}

export interface IngestResult {
  batches: number;
  transfers: number;
  seconds: number;
  /** CPU seconds of this process and of PostgreSQL's processes; undefined when not readable. */
  processCpu: number;
  postgresCpu: number | undefined;
  /** Pages PostgreSQL found in its buffers, and read from outside them (the OS's cache or the disk). */
  pagesHit: number;
  pagesRead: number;
  /** Seconds the machine's cores waited on I/O meanwhile (all processes: /proc/stat's iowait). */
  ioWait: number;
}

export async function ingestPass(
  sql: Sql,
  market: Market,
  start: number,
  batches: readonly FetchedBatch[],
  postgresPid: number | undefined,
  analyzedAt: number,
): Promise<IngestResult> {
  let i = 0;
  // Measured from the first batch on: resuming the carries is what an indexer does once as it starts.
  let cpuBefore = process.cpuUsage();
  let postgresBefore = 0;
  let pagesBefore = { hit: 0, read: 0 };
  let ioWaitBefore = 0;
  let started = performance.now();
  await commitBatches(sql, {
    chainId: CHAIN_ID,
    writer: marketWriter(sql, CHAIN_ID, market),
    next: () => batches[i++],
    start,
    analyzedAt,
    async onResumed() {
      pagesBefore = await pages(sql);
      ioWaitBefore = ioWait();
      cpuBefore = process.cpuUsage();
      postgresBefore = postgresPid === undefined ? 0 : processTreeCpu(postgresPid);
      started = performance.now();
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const waited = ioWait() - ioWaitBefore;
  const pagesAfter = await pages(sql);
  return {
    pagesHit: pagesAfter.hit - pagesBefore.hit,
    pagesRead: pagesAfter.read - pagesBefore.read,
    ioWait: waited,
    batches: batches.length,
    transfers: batches.reduce((sum, b) => sum + b.nft.length, 0),
    seconds,
    processCpu: (cpu.user + cpu.system) / 1e6,
    postgresCpu: postgresPid === undefined ? undefined : processTreeCpu(postgresPid) - postgresBefore,
  };
}

async function pages(sql: Queryable): Promise<{ hit: number; read: number }> {
  // Backends report their counts when a transaction ends, at most once a second.
  await sql`SELECT pg_sleep(1.1)`;
  await sql`SELECT pg_stat_clear_snapshot()`;
  const [row] = await sql<{ hit: string; read: string }[]>`
    SELECT blks_hit AS hit, blks_read AS read FROM pg_stat_database WHERE datname = current_database()`;
  return { hit: Number(row?.hit ?? 0), read: Number(row?.read ?? 0) };
}

/** Seconds every core has waited on I/O since boot; 0 where /proc/stat cannot be read. */
function ioWait(): number {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/) ?? [];
    return Number(cpu[5] ?? 0) / 100;
  } catch {
    return 0;
  }
}

/**
 * Takes the store back to its built head. The recent blocks of the built head are kept in
 * `meta.json` the first time the store is seen there: the rollback reads the head's time from them
 * to set the ranked windows back where they were.
 */
export async function restoreStore(
  sql: Sql,
  store: ScaleStore,
  meta: StoreMeta,
  market: Market,
  log: (message: string) => void,
): Promise<void> {
  const next = await nextBlock(sql, CHAIN_ID);
  if (next === meta.builtHead + 1) {
    if (meta.recentBlocks === undefined) {
      meta.recentBlocks = await sql<RecentBlock[]>`
        SELECT number::int, encode(hash, 'hex') AS hash, encode(parent_hash, 'hex') AS parent_hash,
               extract(epoch FROM block_time)::bigint::int AS time
        FROM recent_blocks WHERE chain_id = ${CHAIN_ID} ORDER BY number`;
      store.saveMeta(meta);
    }
    return;
  }
  if (next < meta.builtHead + 1) throw new Error(`${store.dir} is not completely built: run --build`);
  log(
    `  rolling back blocks ${(meta.builtHead + 1).toLocaleString("en")}..${(next - 1).toLocaleString("en")} to the built head`,
  );
  const started = performance.now();
  await putBackRecentBlocks(sql, meta.recentBlocks ?? []);
  const session = openWriteSession(sql, { lockChain: CHAIN_ID });
  try {
    if (!(await session.ensureLocked())) throw new Error("another writer holds the chain's lock");
    await rollbackAfter(
      session,
      CHAIN_ID,
      meta.builtHead,
      marketWriter(sql, CHAIN_ID, market).pipeline.projections,
    );
  } finally {
    await session.end();
  }
  // What autovacuum would do in time: the measurements after this one should not meet the dead rows.
  await sql`VACUUM`;
  log(`  rolled back and vacuumed in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

async function putBackRecentBlocks(sql: Queryable, blocks: readonly RecentBlock[]): Promise<void> {
  if (blocks.length === 0) return;
  await sql`
    INSERT INTO recent_blocks (chain_id, number, hash, parent_hash, block_time)
    SELECT ${CHAIN_ID}, n, decode(h, 'hex'), decode(p, 'hex'), to_timestamp(t)
    FROM unnest(${blocks.map((b) => b.number)}::bigint[], ${blocks.map((b) => b.hash)}::text[],
                ${blocks.map((b) => b.parent_hash)}::text[], ${blocks.map((b) => b.time)}::bigint[]) AS u(n, h, p, t)
    ON CONFLICT (chain_id, number) DO NOTHING`;
}
