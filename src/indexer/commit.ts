/**
 * The batch pipeline over the projections: each batch is prepared from the carries of the one
 * before it (which may still be being written), then written with its checkpoint in one pipelined
 * transaction. After a failed round or a reorganisation the carries are resumed from the store.
 */
import type { Sql } from "../store/pg/database.ts";
import type { WriteSession } from "../store/pg/session.ts";
import { type FetchedBatch, timeOfBatch } from "./batch.ts";
import { firstSeenIn } from "./projections/contracts.ts";
import type { AnyProjection, BatchFacts } from "./projections/projection.ts";
import type { ContractRegistry } from "./registry.ts";

/** What each projection carries from one batch to the next, in list order. */
export type Carries = readonly unknown[];

/** A batch with what every projection makes of it, ready to be written, and the carries after it. */
export interface PreparedBatch {
  batch: FetchedBatch;
  prepared: readonly unknown[];
  carries: Carries;
}

export interface BatchPipeline {
  readonly projections: readonly AnyProjection[];
  /** The carries to start from when `next` is the first block not yet indexed. */
  resume(next: number): Promise<Carries>;
  /**
   * The carries again for the projections named, whose tables something besides the batches has
   * written (between two batches, with none in flight); the others keep theirs, which may be costly to
   * read again (the funder rule's flows are read back from the node).
   */
  refresh(next: number, carries: Carries, names: readonly string[]): Promise<Carries>;
  prepare(batch: FetchedBatch, carries: Carries): Promise<PreparedBatch>;
  /**
   * Commits a prepared batch and its checkpoint in one transaction: after a crash at any instant
   * the store holds either all of the batch or none of it, and indexing resumes at the checkpoint.
   */
  write(session: WriteSession, prepared: PreparedBatch, registry: ContractRegistry): Promise<void>;
}

export function createBatchPipeline(options: {
  sql: Sql;
  chainId: number;
  projections: readonly AnyProjection[];
}): BatchPipeline {
  const { sql, chainId, projections } = options;
  return {
    projections,
    async resume(next) {
      const carries: unknown[] = [];
      for (const p of projections) carries.push(await p.resume({ sql, chainId, next }));
      return carries;
    },
    async refresh(next, carries, names) {
      const unknown = names.filter((name) => !projections.some((p) => p.name === name));
      if (unknown.length > 0) throw new Error(`no projection named ${unknown.join(", ")}`);
      return Promise.all(
        projections.map((p, i) => (names.includes(p.name) ? p.resume({ sql, chainId, next }) : carries[i])),
      );
    },
    async prepare(batch, carries) {
      const facts: BatchFacts = {};
      const timeOf = timeOfBatch(batch);
      const prepared: unknown[] = [];
      const after: unknown[] = [];
      for (const [i, p] of projections.entries()) {
        const made = await p.prepare({ sql, chainId, batch, timeOf, facts }, carries[i]);
        prepared.push(made.prepared);
        after.push(made.carry);
      }
      return { batch, prepared, carries: after };
    },
    async write(session, prepared, registry) {
      const { batch } = prepared;
      const timeOf = timeOfBatch(batch);
      const contracts = registry.takeRecords(batch.contracts, firstSeenIn(batch, timeOf));
      const context = { chainId, batch, timeOf, contracts };
      await session.pipelined((tx) => [
        // Losing the last commits in a server crash only moves the checkpoint back with them (the
        // batch and its checkpoint are one transaction), so there is no need to wait for the flush.
        tx`SET LOCAL synchronous_commit = off`,
        // A batch's sorts (the outbox's numbering, the rollups' groups) hold up to a few tens of
        // thousands of wide rows: in the default 4 MB they spill to temporary files.
        tx`SET LOCAL work_mem = '64MB'`,
        ...projections.flatMap((p, i) => p.statements(tx, context, prepared.prepared[i])),
      ]);
      registry.markStored(contracts);
    },
  };
}
