import type { Hex } from "../../core/hex.ts";
import { type Queryable, toHex } from "../pg/database.ts";

/** The newest block a chain's served data holds: every block up to it is indexed and committed. */
export interface IndexedBlock {
  number: bigint;
  hash: Hex;
  /** The block's own time, in Unix seconds. */
  time: number;
}

/** What a chain's served data is at: the indexer's part and the metadata worker's, apart. */
export interface VersionParts {
  /** Moves with every commit and rollback of the indexer (its next block and the time of its write). */
  chain: string;
  /** Moves with every document the metadata worker stores (the newest fetch time) and every ranking of a collection. */
  metadata: string;
  /** Moves with every spam verdict stored and every override changed (migration 0024). */
  spam: string;
  /**
   * The newest indexed block, read in the same statement as `chain` (so of the same commit); none
   * before the first batch is committed.
   */
  head: IndexedBlock | undefined;
}

/**
 * Six indexed single-row reads, in one statement: one snapshot, so the head block is the one the
 * `chain` part names. The checkpoint writes the head's header in the batch that moves
 * `next_block` past it (src/indexer/projections/checkpoint.ts), and a rollback keeps its ancestor's.
 */
export async function dataVersion(sql: Queryable, chainId: number): Promise<VersionParts> {
  const [row] = await sql<
    {
      chain: string | null;
      metadata: string | null;
      spam: string | null;
      head_number: string | null;
      head_hash: Uint8Array | null;
      head_time: string | null;
    }[]
  >`
    SELECT c.next_block::text || '@' || extract(epoch FROM c.updated_at)::text AS chain,
           (SELECT extract(epoch FROM max(fetched_at))::text FROM token_metadata WHERE chain_id = ${chainId})
           || '/' || coalesce((SELECT extract(epoch FROM max(ranked_at))::text FROM collection_trait_totals
                               WHERE chain_id = ${chainId}), '-') AS metadata,
           (SELECT extract(epoch FROM max(computed_at))::text FROM spam_verdicts WHERE chain_id = ${chainId})
             || '/' || coalesce((SELECT extract(epoch FROM overrides_at)::text FROM spam_state WHERE chain_id = ${chainId}), '-')
             AS spam,
           b.number::text AS head_number, b.hash AS head_hash,
           extract(epoch FROM b.block_time)::bigint::text AS head_time
    FROM (SELECT 1) AS one
    LEFT JOIN chains c ON c.chain_id = ${chainId}
    LEFT JOIN recent_blocks b ON b.chain_id = c.chain_id AND b.number = c.next_block - 1`;
  const head =
    row?.head_number != null && row.head_hash != null && row.head_time != null
      ? { number: BigInt(row.head_number), hash: toHex(row.head_hash), time: Number(row.head_time) }
      : undefined;
  return { chain: row?.chain ?? "none", metadata: row?.metadata ?? "-", spam: row?.spam ?? "-", head };
}
