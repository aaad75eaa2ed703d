import type { Sql } from "./database.ts";

/** Advisory-lock namespace of the per-chain indexer lock (an arbitrary constant of this project). */
const INDEXER_LOCK_SPACE = 0x6d6c6e73;

/**
 * Takes the chain's indexer lock on a dedicated connection. Only one indexer may write a
 * chain; the lock dies with the connection, so a killed indexer never leaves it behind.
 */
export async function tryLockChain(sql: Sql, chainId: number): Promise<(() => Promise<void>) | undefined> {
  const connection = await sql.reserve();
  const [row] = await connection<{ locked: boolean }[]>`
    SELECT pg_try_advisory_lock(${INDEXER_LOCK_SPACE}, ${chainId % 2 ** 31}) AS locked`;
  if (!row?.locked) {
    connection.release();
    return undefined;
  }
  return async () => {
    await connection`SELECT pg_advisory_unlock(${INDEXER_LOCK_SPACE}, ${chainId % 2 ** 31})`;
    connection.release();
  };
}
