/**
 * A collection's traits as counted from its fetched documents (migration 0023): string traits with
 * the tokens holding each value, numeric traits with their least and greatest values. Both lists
 * go in byte order of their key, each page one range of its table's primary key.
 */
import type { Address } from "../../core/hex.ts";
import type { NumericDisplayType } from "../../core/traits.ts";
import { bare, type Queryable } from "../pg/database.ts";

export interface StringTrait {
  name: string;
  value: string;
  /** Tokens with a fetched document holding this value. */
  tokens: bigint;
}

export interface NumericTrait {
  name: string;
  displayType: NumericDisplayType;
  min: number;
  max: number;
}

export interface TraitsQuery<After> {
  limit: number;
  offset: number;
  /** Only traits after this key: the page after the one that ended there. */
  after?: After | undefined;
}

export type StringTraitKey = { name: string; value: string };
export type NumericTraitKey = { name: string; displayType: string };

/**
 * The query of a page of string traits, unsent (a test asks PostgreSQL for its plan): by (name,
 * value) in byte order, at most offset + limit rows of the primary key after `after`.
 */
export function stringTraitsQuery(
  sql: Queryable,
  chainId: number,
  contract: Address,
  query: TraitsQuery<StringTraitKey>,
) {
  const after =
    query.after === undefined ? sql`` : sql`AND (name, value) > (${query.after.name}, ${query.after.value})`;
  return sql<{ name: string; value: string; tokens: string }[]>`
    SELECT name, value, tokens::text FROM collection_traits
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(contract), "hex")} AND tokens > 0 ${after}
    ORDER BY name, value
    LIMIT ${query.limit} OFFSET ${query.offset}`;
}

/**
 * The query of a page of numeric traits, unsent: the (name, display type) pairs in byte order,
 * found by skipping from one to the next along the primary key (one probe each, however many
 * values a trait has), then each one's least and greatest value, the two ends of its range.
 */
export function numericTraitsQuery(
  sql: Queryable,
  chainId: number,
  contract: Address,
  query: TraitsQuery<NumericTraitKey>,
) {
  const address = Buffer.from(bare(contract), "hex");
  const start = query.after === undefined ? undefined : query.after;
  const first =
    start === undefined ? sql`` : sql`AND (name, display_type) > (${start.name}, ${start.displayType})`;
  return sql<{ name: string; display_type: NumericDisplayType; min: number; max: number }[]>`
    WITH RECURSIVE kinds AS (
      (SELECT name, display_type, 1 AS visit FROM collection_numeric_traits
       WHERE chain_id = ${chainId} AND contract = ${address} AND tokens > 0 ${first}
       ORDER BY name, display_type LIMIT 1)
      UNION ALL
      SELECT n.name, n.display_type, k.visit + 1
      FROM kinds k CROSS JOIN LATERAL (
        SELECT name, display_type FROM collection_numeric_traits
        WHERE chain_id = ${chainId} AND contract = ${address} AND tokens > 0
          AND (name, display_type) > (k.name, k.display_type)
        ORDER BY name, display_type LIMIT 1) n
      WHERE k.visit < ${query.offset + query.limit})
    SELECT k.name, k.display_type,
      (SELECT value FROM collection_numeric_traits v
       WHERE v.chain_id = ${chainId} AND v.contract = ${address} AND v.name = k.name
         AND v.display_type = k.display_type AND v.tokens > 0
       ORDER BY v.value LIMIT 1) AS min,
      (SELECT value FROM collection_numeric_traits v
       WHERE v.chain_id = ${chainId} AND v.contract = ${address} AND v.name = k.name
         AND v.display_type = k.display_type AND v.tokens > 0
       ORDER BY v.value DESC LIMIT 1) AS max
    FROM kinds k
    ORDER BY k.name, k.display_type
    OFFSET ${query.offset}`;
}

/**
 * A collection's tokens with a fetched document (what percentages are out of), or undefined for a
 * contract the indexer never saw.
 */
async function collectionDocuments(sql: Queryable, chainId: number, contract: Address) {
  const address = Buffer.from(bare(contract), "hex");
  const [row] = await sql<{ known: boolean; documents: string | null }[]>`
    SELECT EXISTS (SELECT 1 FROM contracts WHERE chain_id = ${chainId} AND address = ${address}) AS known,
           (SELECT documents::text FROM collection_trait_totals
            WHERE chain_id = ${chainId} AND contract = ${address}) AS documents`;
  return row?.known ? BigInt(row.documents ?? 0) : undefined;
}

/** A page of string traits and the collection's documents, or undefined for an unknown contract. */
export async function listStringTraits(
  sql: Queryable,
  chainId: number,
  contract: Address,
  query: TraitsQuery<StringTraitKey>,
): Promise<{ documents: bigint; traits: StringTrait[] } | undefined> {
  const [documents, rows] = await Promise.all([
    collectionDocuments(sql, chainId, contract),
    stringTraitsQuery(sql, chainId, contract, query),
  ]);
  if (documents === undefined) return undefined;
  return { documents, traits: rows.map((r) => ({ name: r.name, value: r.value, tokens: BigInt(r.tokens) })) };
}

/** A page of numeric traits, or undefined for an unknown contract. */
export async function listNumericTraits(
  sql: Queryable,
  chainId: number,
  contract: Address,
  query: TraitsQuery<NumericTraitKey>,
): Promise<NumericTrait[] | undefined> {
  const [documents, rows] = await Promise.all([
    collectionDocuments(sql, chainId, contract),
    numericTraitsQuery(sql, chainId, contract, query),
  ]);
  if (documents === undefined) return undefined;
  return rows.map((r) => ({ name: r.name, displayType: r.display_type, min: r.min, max: r.max }));
}
