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
}

export interface TopQuery {
  /** The window's length in seconds (it ends where the indexer keeps the chain's windows). */
  windowSeconds: number;
  metric: RankingMetric;
  limit: number;
  offset: number;
}

interface Row {
  contract: Uint8Array;
  name: string | null;
  sales: string;
  units: string;
  volume: string;
  hi: string;
}

/** The column each metric ranks by, highest first; each has an index with the contract after it. */
const ORDER: Readonly<Record<RankingMetric, string>> = {
  volume: "volume",
  sales: "sales",
  maxPrice: "max_unit_price",
  avgPrice: "avg_unit_price",
};

/**
 * A page of a ranking, as the indexer keeps it at commit time: one range of the metric's index
 * (highest first, ties by contract address), and a contract row per collection for its name.
 */
export async function topCollections(sql: Queryable, chainId: number, query: TopQuery): Promise<Ranked[]> {
  const order = ORDER[query.metric];
  const rows = await sql<Row[]>`
    SELECT w.contract, c.name, w.sales::text, w.sold_units::text AS units, w.volume::text,
           w.max_unit_price::text AS hi
    FROM (SELECT contract, sales, sold_units, volume, max_unit_price, avg_unit_price FROM collection_windows
          WHERE chain_id = ${chainId} AND window_seconds = ${query.windowSeconds}
          ORDER BY ${sql(order)} DESC, contract ASC
          LIMIT ${query.limit} OFFSET ${query.offset}) w
    LEFT JOIN contracts c ON c.chain_id = ${chainId} AND c.address = w.contract
    ORDER BY w.${sql(order)} DESC, w.contract ASC`;
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    name: r.name ?? "",
    sales: BigInt(r.sales),
    units: BigInt(r.units),
    volume: BigInt(r.volume),
    maxUnitPrice: BigInt(r.hi),
  }));
}
