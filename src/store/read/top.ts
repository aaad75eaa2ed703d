import type { Address } from "../../core/hex.ts";
import { type Queryable, toHex } from "../pg/database.ts";

export type RankingMetric = "volume" | "sales" | "maxPrice" | "avgPrice";

/** A collection's sales in a window: counts and wei, of the figures ranked (organic, or every priced sale). */
export interface Ranked {
  contract: Address;
  name: string;
  sales: bigint;
  units: bigint;
  volume: bigint;
  maxUnitPrice: bigint;
  /** The window's flagged sales and their volume (wei), whichever figures are ranked. */
  flaggedSales: bigint;
  flaggedVolume: bigint;
  /** The window's sales without a price. */
  unpricedSales: bigint;
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
  /** Rank every sale with a price, flagged ones too, rather than the organic ones only. */
  includeFlagged?: boolean;
}

interface Row {
  contract: Uint8Array;
  name: string | null;
  sales: string;
  units: string;
  volume: string;
  hi: string;
  flagged_sales: string;
  flagged_volume: string;
  unpriced_sales: string;
  value: string;
}

/**
 * The columns of each set of figures, and the one each metric ranks by, highest first; each has a
 * partial index (of the collections with such sales) with the contract after it.
 */
const FIGURES = {
  organic: {
    sales: "sales",
    units: "sold_units",
    volume: "volume",
    maxPrice: "max_unit_price",
    avgPrice: "avg_unit_price",
  },
  all: {
    sales: "all_sales",
    units: "sold_units + flagged_units",
    volume: "all_volume",
    maxPrice: "all_max_unit_price",
    avgPrice: "all_avg_unit_price",
  },
} as const;

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
    flaggedSales: BigInt(r.flagged_sales),
    flaggedVolume: BigInt(r.flagged_volume),
    unpricedSales: BigInt(r.unpriced_sales),
    rankValue: r.value,
  }));
}

/** The statement of a page of a ranking, unsent: what `topCollections` runs (and tests explain). */
export function topQuery(sql: Queryable, chainId: number, query: TopQuery) {
  const f = FIGURES[query.includeFlagged ? "all" : "organic"];
  const key = sql.unsafe(`-${f[query.metric]}`);
  const after = query.after
    ? sql`AND (${key}, contract) > (-(${query.after.value}::${sql.unsafe(TYPE[query.metric])}), ${Buffer.from(query.after.contract.slice(2), "hex")})`
    : sql``;
  // The predicate of the metric's partial index, written as the index has it.
  return sql<Row[]>`
    SELECT w.contract, c.name, w.sales::text, w.units::text, w.volume::text, w.hi::text, w.flagged_sales::text,
           w.flagged_volume::text, w.unpriced_sales::text, w.value::text
    FROM (SELECT contract, ${sql.unsafe(f.sales)} AS sales, ${sql.unsafe(f.units)} AS units,
                 ${sql.unsafe(f.volume)} AS volume, ${sql.unsafe(f.maxPrice)} AS hi, flagged_sales, flagged_volume,
                 unpriced_sales, ${key} AS rank_key, ${sql.unsafe(f[query.metric])} AS value
          FROM collection_windows
          WHERE chain_id = ${chainId} AND window_seconds = ${query.windowSeconds} AND ${sql.unsafe(f.sales)} > 0
            ${after}
          ORDER BY ${key}, contract
          LIMIT ${query.limit} OFFSET ${query.offset}) w
    LEFT JOIN contracts c ON c.chain_id = ${chainId} AND c.address = w.contract
    ORDER BY w.rank_key, w.contract`;
}
