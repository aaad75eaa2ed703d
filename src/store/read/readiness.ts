import type { Queryable } from "../pg/database.ts";

/** What the store tells of one chain's indexer: how far it got and what it last saw of its node. */
export interface ChainHead {
  chainId: number;
  /** The last block indexed (one below the next); `startBlock - 1` before the first batch. */
  indexedBlock: number;
  /** The node's head as the indexer last recorded it; undefined before any indexer recorded one. */
  headBlock: number | undefined;
  /** The depth the indexer keeps behind the head. */
  confirmations: number | undefined;
  /** Seconds since the indexer last recorded the head, by the database's clock. */
  heartbeatAgeSeconds: number | undefined;
  /** Seconds since the head the indexer records last changed, by the database's clock. */
  headStillSeconds: number | undefined;
}

/**
 * The chains' heads, in one round trip over the `chains` rows. The age is measured by the
 * database's clock, which wrote the heartbeat: the API and the indexer may run on hosts whose
 * clocks differ.
 */
export async function chainHeads(sql: Queryable, chainIds: readonly number[]): Promise<ChainHead[]> {
  const rows = await sql<
    {
      chain_id: string;
      next_block: string;
      head_block: string | null;
      confirmations: number | null;
      age: number | null;
      still: number | null;
    }[]
  >`
    SELECT chain_id::text, next_block::text, head_block::text, confirmations,
           extract(epoch FROM clock_timestamp() - heartbeat_at)::float8 AS age,
           extract(epoch FROM clock_timestamp() - head_moved_at)::float8 AS still
    FROM chains WHERE chain_id = ANY(string_to_array(${chainIds.join(",")}, ',')::bigint[])`;
  return rows.map((row) => ({
    chainId: Number(row.chain_id),
    indexedBlock: Number(row.next_block) - 1,
    headBlock: row.head_block === null ? undefined : Number(row.head_block),
    confirmations: row.confirmations ?? undefined,
    heartbeatAgeSeconds: row.age === null ? undefined : Math.max(0, row.age),
    headStillSeconds: row.still === null ? undefined : Math.max(0, row.still),
  }));
}
