import type { Queryable } from "../pg/database.ts";

/**
 * A value that changes whenever data the API serves for a chain changes: the indexer's commits
 * and rollbacks (each moves the chain's next block or its `updated_at`) and the metadata
 * fetcher's documents (their latest fetch time). Three indexed single-row reads.
 */
export async function dataVersion(sql: Queryable, chainId: number): Promise<string> {
  const [row] = await sql<{ v: string | null }[]>`
    SELECT (SELECT next_block::text || '@' || extract(epoch FROM updated_at)::text FROM chains WHERE chain_id = ${chainId})
           || '@' || coalesce((SELECT extract(epoch FROM max(fetched_at))::text FROM token_metadata
                               WHERE chain_id = ${chainId}), '-') AS v`;
  return row?.v ?? "none";
}
