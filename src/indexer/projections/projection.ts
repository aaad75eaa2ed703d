/**
 * A projection: one table (or a few kept together) that the indexer derives from the chain, with
 * everything that keeps it exact in one place. The batch write, the rollback and the crash/reorg
 * snapshot test all walk one registered list of them (`projections.ts`), so a new derived table is
 * one new module: it cannot be written without saying how it resumes and how it is undone.
 *
 *   resume      after a start, a failed round or a reorganisation: the state the next batch starts
 *               from (its "carry"), read from the store, which is then the only truth;
 *   prepare     from a fetched batch and the carry after the previous batch (which may still be
 *               being written): what to write, and the carry after this batch. It reads the store
 *               only for what the carry lacks; the rest is pure;
 *   statements  what it adds to the batch's pipelined transaction;
 *   undo        its inverse, for a rollback to an ancestor block, inside the rollback's transaction.
 *
 * Projections run in list order for prepare, statements and undo alike: a projection may use what
 * those before it derived from the batch (`facts`) or undid, and its statements run after theirs.
 */
import type { Address } from "../../core/hex.ts";
import type { NftTransfer, SaleVerdict } from "../../core/types.ts";
import type { Queryable, Sql } from "../../store/pg/database.ts";
import type { Statement } from "../../store/pg/session.ts";
import type { CountedSale } from "../../store/tables/sales.ts";
import type { FetchedBatch } from "../batch.ts";
import type { Effects } from "../effects.ts";
import type { TakenRecords } from "../registry.ts";
import type { BatchTrades, PricesAt } from "../trades.ts";

/** A table a projection writes, with the order that makes a dump of it canonical. */
export interface TableSpec {
  name: string;
  order: string;
  /** Only these columns are the indexer's (the rest are written by others); all when absent. */
  columns?: string;
  /**
   * For tables whose rows follow where batches ended rather than the chain alone: the query whose
   * rows stand for the table in a snapshot, or `false` when another table's query covers it.
   */
  snapshot?: string | false;
}

export interface ResumeContext {
  sql: Sql;
  chainId: number;
  /** The first block not yet indexed: the carry reflects every block before it. */
  next: number;
}

/** What projections earlier in the list derived from the batch, for those after them. */
export interface BatchFacts {
  /** Ownership: the balances, holders and transfer buckets the batch changes. */
  effects?: Effects;
  /** Pool states: how payments are valued at each block of the batch. */
  prices?: PricesAt;
  /** Punk bids: the open bid of each punk before the batch. */
  bidBefore?: (key: string) => { bidder: Address; value: bigint } | undefined;
  /** Sales: the batch's trades and their buckets. */
  trades?: BatchTrades;
  /** Sales: wash rules that fired on sales already seen, stored or of this batch, in order. */
  verdicts?: SaleVerdict[];
  /** Rankings: where the ranked windows end after the batch (undefined before any is kept). */
  windowEnd?: number;
}

export interface PrepareContext {
  /** Reads outside the write's transaction: the indexer is the chain's only writer, so they stay current. */
  sql: Sql;
  chainId: number;
  batch: FetchedBatch;
  timeOf: (blockNumber: number) => number;
  facts: BatchFacts;
}

export interface WriteContext {
  chainId: number;
  batch: FetchedBatch;
  timeOf: (blockNumber: number) => number;
  /** The contract rows this batch commits, taken from the registry at write time. */
  contracts: TakenRecords;
}

/**
 * The stored rows of the orphaned blocks, read before anything is undone: the journal that every
 * projection's inverse replays.
 */
export interface RollbackJournal {
  transfers: NftTransfer[];
  /** Unix seconds of each orphaned block. */
  times: Map<number, number>;
  /** The ownership the orphaned transfers made, replayed from the units held before them. */
  effects: Effects;
  /** The sales of the orphaned blocks, as the rollups counted them. */
  sales: CountedSale[];
  /** Unix seconds of the ancestor block; undefined when its header is no longer kept. */
  ancestorTime: number | undefined;
}

export interface UndoContext {
  chainId: number;
  ancestor: number;
  journal: RollbackJournal;
}

export interface Projection<Carry, Prepared> {
  readonly name: string;
  readonly tables: readonly TableSpec[];
  resume(context: ResumeContext): Promise<Carry>;
  prepare(context: PrepareContext, carry: Carry): Promise<{ prepared: Prepared; carry: Carry }>;
  statements(tx: Queryable, context: WriteContext, prepared: Prepared): Statement[];
  undo(tx: Queryable, context: UndoContext): Promise<void>;
}

/**
 * A projection whose carry and prepared values are opaque to the pipeline: each is only ever handed
 * back to the projection that made it.
 */
export type AnyProjection = Projection<unknown, unknown>;

export function defineProjection<Carry, Prepared>(projection: Projection<Carry, Prepared>): AnyProjection {
  return projection as unknown as AnyProjection;
}

/** A fact a projection needs from one listed before it. */
export function need<K extends keyof BatchFacts>(
  facts: BatchFacts,
  key: K,
  by: string,
): NonNullable<BatchFacts[K]> {
  const value = facts[key];
  if (value === undefined)
    throw new Error(`the ${by} projection needs ${key}, derived by a projection listed before it`);
  return value as NonNullable<BatchFacts[K]>;
}
