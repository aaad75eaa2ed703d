import type { Address } from "../../core/hex.ts";
import { type Queryable, toHex } from "../pg/database.ts";

export type RankingMetric = "volume" | "sales" | "maxPrice" | "avgPrice";

/** A collection's sales in a window: counts and wei. */
export interface Ranked {
  contract: Address;
  name: string;
  sales: bigint;
  units: bigint;
  volume: bigint;
  maxUnitPrice: bigint;
  /** The value the ranking orders by, exactly as stored: what a page token goes on after. */
  rankValue: string;
}

export interface TopQuery {
  /** The window's length in seconds (it ends where the indexer keeps the chain's windows). */
  windowSeconds: number;
  metric: RankingMetric;
  limit: number;
  offset: number;
  /** Only the collections ranked after this one: its metric value (as `rankValue` gives it) and address. */
  after?: { value: string; contract: Address } | undefined;
}

interface Row {
  contract: Uint8Array;
  name: string | null;
  sales: string;
  units: string;
  volume: string;
  hi: string;
  value: string;
}

/** The column each metric ranks by, highest first; each has an index with the contract after it. */
const ORDER: Readonly<Record<RankingMetric, string>> = {
  volume: "volume",
  sales: "sales",
  maxPrice: "max_unit_price",
  avgPrice: "avg_unit_price",
};

/** Each column's type: a page token's value is compared as it, or the index would not serve the comparison. */
const TYPE: Readonly<Record<RankingMetric, string>> = {
  volume: "numeric",
  sales: "bigint",
  maxPrice: "numeric",
  avgPrice: "numeric",
};

/**
 * A page of a ranking, as the indexer keeps it at commit time: one range of the metric's index
 * (highest first, ties by contract address; the index holds the metric negated, so that going on
 * after a row is one row comparison), and a contract row per collection for its name.
 */
export async function topCollections(sql: Queryable, chainId: number, query: TopQuery): Promise<Ranked[]> {
  const rows = await topQuery(sql, chainId, query);
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    name: r.name ?? "",
    sales: BigInt(r.sales),
    units: BigInt(r.units),
    volume: BigInt(r.volume),
    maxUnitPrice: BigInt(r.hi),
    rankValue: r.value,
  }));
}

/** The statement of a page of a ranking, unsent: what `topCollections` runs (and tests explain). */
export function topQuery(sql: Queryable, chainId: number, query: TopQuery) {
  const key = sql.unsafe(`-${ORDER[query.metric]}`);
  const after = query.after
    ? sql`AND (${key}, contract) > (-(${query.after.value}::${sql.unsafe(TYPE[query.metric])}), ${Buffer.from(query.after.contract.slice(2), "hex")})`
    : sql``;
  return sql<Row[]>`
    SELECT w.contract, c.name, w.sales::text, w.sold_units::text AS units, w.volume::text,
           w.max_unit_price::text AS hi, w.value::text
    FROM (SELECT contract, sales, sold_units, volume, max_unit_price, ${key} AS rank_key,
                 ${sql.unsafe(ORDER[query.metric])} AS value
          FROM collection_windows
          WHERE chain_id = ${chainId} AND window_seconds = ${query.windowSeconds} ${after}
          ORDER BY ${key}, contract
          LIMIT ${query.limit} OFFSET ${query.offset}) w
    LEFT JOIN contracts c ON c.chain_id = ${chainId} AND c.address = w.contract
    ORDER BY w.rank_key, w.contract`;
}
