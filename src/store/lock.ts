import type postgres from "postgres";
import type { Queryable, Sql } from "./database.ts";
import { connectionIsGone } from "./errors.ts";
import type { Statement } from "./pipeline.ts";

/** Advisory-lock namespace of the per-chain indexer lock (an arbitrary constant of this project). */
const INDEXER_LOCK_SPACE = 0x6d6c6e73;

/**
 * The chain's indexer lock: only one indexer may write a chain. It is a session-level advisory
 * lock on a dedicated connection, so a killed indexer never leaves it behind; for the same reason
 * a dropped connection (a failover, a restarted server) loses it, and it must be taken again
 * before writing — unless another indexer took it meanwhile.
 */
export interface ChainLock {
  /** Takes the lock again if its connection was lost. False when another indexer holds it now. */
  ensureHeld(): Promise<boolean>;
  /**
   * A statement for each write transaction that fails it unless the lock is still held by this
   * indexer's connection: a lock lost between two checks can never let two writers interleave.
   */
  requireStatement(tx: Queryable): Statement;
  release(): Promise<void>;
}

export async function tryLockChain(sql: Sql, chainId: number): Promise<ChainLock | undefined> {
  const key = chainId % 2 ** 31;
  let connection: postgres.ReservedSql | undefined;
  let holder = -1;

  const take = async (): Promise<boolean> => {
    const reserved = await sql.reserve();
    try {
      const [row] = await reserved<{ locked: boolean; pid: number }[]>`
        SELECT pg_try_advisory_lock(${INDEXER_LOCK_SPACE}, ${key}) AS locked, pg_backend_pid() AS pid`;
      if (!row?.locked) {
        reserved.release();
        return false;
      }
      connection = reserved;
      holder = row.pid;
      return true;
    } catch (error) {
      if (!connectionIsGone(error)) reserved.release();
      throw error;
    }
  };

  if (!(await take())) return undefined;

  // Whether the lock's session still holds it, asked on the pool: a statement sent on a reserved
  // connection the server has terminated is written to a socket that is gone, which postgres.js
  // does not survive. The dead connection is never touched again.
  const stillHeld = async (): Promise<boolean> => {
    const [row] = await sql<{ held: boolean }[]>`
      SELECT EXISTS (
        SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND classid = ${INDEXER_LOCK_SPACE}::bigint::oid
          AND objid = ${key}::bigint::oid AND objsubid = 2 AND pid = ${holder} AND granted
      ) AS held`;
    return row?.held === true;
  };

  return {
    async ensureHeld() {
      if (connection && (await stillHeld())) return true;
      connection = undefined;
      return take();
    },
    requireStatement(tx) {
      return tx`SELECT mintlens_require_chain_lock(${INDEXER_LOCK_SPACE}, ${key}, ${holder})`;
    },
    async release() {
      if (!connection) return;
      const held = await stillHeld().catch(() => false);
      const reserved = connection;
      connection = undefined;
      if (!held) return;
      const gone = await reserved`SELECT pg_advisory_unlock(${INDEXER_LOCK_SPACE}, ${key})`.then(
        () => false,
        (error: unknown) => connectionIsGone(error),
      );
      if (!gone) reserved.release();
    },
  };
}
