/**
 * Rarity ranks, recomputed per collection once its traits changed. The trait counts move with every
 * document (triggers of migration 0023); a rank depends on every token of the collection, so ranks
 * are computed apart, by the metadata worker, for the collections whose counts moved: each one in
 * one set-based statement, when its changes have settled for a while or, changing still, when its
 * ranks have been behind for too long.
 */
import type { Address } from "../../core/hex.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

export interface RankingPolicy {
  /** A collection is ranked once this long has passed since its last change. */
  settleSeconds: number;
  /** Or once its ranks have been behind this long, even while it changes still. */
  maxBehindSeconds: number;
  /** Collections ranked per pass at most. */
  collectionsPerPass: number;
}

export const DEFAULT_RANKING_POLICY: RankingPolicy = {
  settleSeconds: 5,
  maxBehindSeconds: 60,
  collectionsPerPass: 4,
};

/**
 * The collections of a chain whose ranks are behind and due by `policy`, those behind longest
 * first: an index range of the dirty collections.
 */
export async function dueRankings(
  sql: Queryable,
  chainId: number,
  policy: RankingPolicy,
): Promise<Address[]> {
  const rows = await sql<{ contract: Uint8Array }[]>`
    SELECT contract FROM collection_trait_totals
    WHERE chain_id = ${chainId} AND changes > ranked_changes
      AND (changed_at <= now() - make_interval(secs => ${policy.settleSeconds})
           OR dirty_since <= now() - make_interval(secs => ${policy.maxBehindSeconds}))
    ORDER BY dirty_since
    LIMIT ${policy.collectionsPerPass}`;
  return rows.map((r) => toHex(r.contract) as Address);
}

/**
 * Ranks every token of a collection with a fetched document, in one statement: the scores (see
 * `informationScores`, the same computation), the ranks (1 the rarest, equal scores sharing one),
 * tokens without a document any more taken out, and the collection marked ranked at the count of
 * changes its snapshot saw (a change committed meanwhile leaves it behind, to be ranked again).
 * Then the counts that reached 0 are removed. Returns the number of tokens ranked.
 */
export async function rankCollection(sql: Queryable, chainId: number, contract: Address): Promise<number> {
  const address = Buffer.from(bare(contract), "hex");
  const [row] = await sql<{ ranked: string | null }[]>`
    WITH totals AS (
      SELECT changes FROM collection_trait_totals WHERE chain_id = ${chainId} AND contract = ${address}),
    documents AS (
      SELECT token_id, attributes FROM token_metadata
      WHERE chain_id = ${chainId} AND contract = ${address} AND status = 'ok'),
    size AS (SELECT count(*)::double precision AS n FROM documents),
    pairs AS (
      SELECT DISTINCT d.token_id, coalesce(a->>'traitType', '') AS name, coalesce(a->>'value', '') AS value
      FROM documents d,
           jsonb_array_elements(CASE jsonb_typeof(d.attributes) WHEN 'array' THEN d.attributes ELSE '[]' END) a
      WHERE jsonb_typeof(a) = 'object' AND trait_display_type(a->>'displayType', a->>'value') IS NULL),
    value_counts AS (SELECT name, value, count(*)::double precision AS c FROM pairs GROUP BY name, value),
    names AS (SELECT DISTINCT token_id, name FROM pairs),
    -- The bits of "absent" per name; 0 for a name every token has (then no token lacks it).
    absent AS (
      SELECT h.name, CASE WHEN h.holders < s.n THEN -ln((s.n - h.holders) / s.n) / ln(2) ELSE 0 END AS bits
      FROM (SELECT name, count(*)::double precision AS holders FROM names GROUP BY name) h CROSS JOIN size s),
    -- Every token lacks every name to start with; each name it has replaces "absent" by its values.
    base AS (SELECT coalesce(sum(bits ORDER BY bits), 0) AS bits FROM absent),
    terms AS (
      SELECT p.token_id, -ln(v.c / s.n) / ln(2) AS bits
      FROM pairs p JOIN value_counts v USING (name, value) CROSS JOIN size s
      UNION ALL
      SELECT t.token_id, -a.bits FROM names t JOIN absent a USING (name)),
    scores AS (
      -- Summed in one order, so that tokens with the same traits have the same sum.
      SELECT d.token_id, round((b.bits + coalesce(sum(t.bits ORDER BY t.bits), 0))::numeric, 9)::double precision AS score
      FROM documents d CROSS JOIN base b LEFT JOIN terms t USING (token_id)
      GROUP BY d.token_id, b.bits),
    ranked AS (SELECT token_id, score, rank() OVER (ORDER BY score DESC) AS rank FROM scores),
    gone AS (
      DELETE FROM token_rarity r
      WHERE r.chain_id = ${chainId} AND r.contract = ${address}
        AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.token_id = r.token_id)
      RETURNING 1),
    stored AS (
      INSERT INTO token_rarity AS r (chain_id, contract, token_id, score, rank)
      SELECT ${chainId}, ${address}, token_id, score, rank FROM ranked ORDER BY token_id
      ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET score = excluded.score, rank = excluded.rank
      WHERE (r.score, r.rank) IS DISTINCT FROM (excluded.score, excluded.rank)
      RETURNING 1)
    UPDATE collection_trait_totals SET
      ranked_changes = (SELECT changes FROM totals), ranked_at = now(),
      ranked_documents = (SELECT n FROM size)::bigint
    WHERE chain_id = ${chainId} AND contract = ${address}
    RETURNING ranked_documents::text AS ranked, (SELECT count(*) FROM gone) AS gone,
              (SELECT count(*) FROM stored) AS stored`;
  await sql`DELETE FROM collection_traits WHERE chain_id = ${chainId} AND contract = ${address} AND tokens = 0`;
  await sql`
    DELETE FROM collection_numeric_traits WHERE chain_id = ${chainId} AND contract = ${address} AND tokens = 0`;
  return Number(row?.ranked ?? 0);
}

/** One ranking pass: the due collections of a chain (at most `collectionsPerPass`), each ranked. */
export async function rankDueCollections(
  sql: Queryable,
  chainId: number,
  policy: RankingPolicy = DEFAULT_RANKING_POLICY,
): Promise<Address[]> {
  const due = await dueRankings(sql, chainId, policy);
  for (const contract of due) await rankCollection(sql, chainId, contract);
  return due;
}
