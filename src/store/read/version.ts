import type { Queryable } from "../pg/database.ts";

/** What a chain's served data is at: the indexer's part and the metadata worker's, apart. */
export interface VersionParts {
  /** Moves with every commit and rollback of the indexer (its next block and the time of its write). */
  chain: string;
  /** Moves with every document the metadata worker stores (the newest fetch time) and every ranking of a collection. */
  metadata: string;
  /** Moves with every spam verdict stored and every override changed (migration 0024). */
  spam: string;
}

/** Five indexed single-row reads, in one round trip. */
export async function dataVersion(sql: Queryable, chainId: number): Promise<VersionParts> {
  const [row] = await sql<{ chain: string | null; metadata: string | null; spam: string | null }[]>`
    SELECT (SELECT next_block::text || '@' || extract(epoch FROM updated_at)::text FROM chains
            WHERE chain_id = ${chainId}) AS chain,
           (SELECT extract(epoch FROM max(fetched_at))::text FROM token_metadata WHERE chain_id = ${chainId})
           || '/' || coalesce((SELECT extract(epoch FROM max(ranked_at))::text FROM collection_trait_totals
                               WHERE chain_id = ${chainId}), '-') AS metadata,
           (SELECT extract(epoch FROM max(computed_at))::text FROM spam_verdicts WHERE chain_id = ${chainId})
             || '/' || coalesce((SELECT extract(epoch FROM overrides_at)::text FROM spam_state WHERE chain_id = ${chainId}), '-')
             AS spam`;
  return { chain: row?.chain ?? "none", metadata: row?.metadata ?? "-", spam: row?.spam ?? "-" };
}
