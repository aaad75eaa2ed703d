import type { Address } from "../../core/hex.ts";
import { type Queryable, toHex } from "../pg/database.ts";
import { DAY_SECONDS } from "../tables/days.ts";

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
  /** The window [from, to), on fifteen-minute boundaries. */
  from: Date;
  to: Date;
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
  hi: string | null;
}

/** A page of the ranking of a window: `windowSales` ranked by `rankCollections`. */
export async function topCollections(sql: Queryable, chainId: number, query: TopQuery): Promise<Ranked[]> {
  const ranked = rankCollections(await windowSales(sql, chainId, query), query.metric);
  return ranked.slice(query.offset, query.offset + query.limit);
}

/**
 * Every collection with sales in a window [from, to), with its sales, units, volume and highest
 * unit price there, in no particular order. The whole days inside the window are read from the
 * day rows and its edges from the buckets, so a year costs at most 365 rows per collection.
 */
export async function windowSales(
  sql: Queryable,
  chainId: number,
  window: { from: Date; to: Date },
): Promise<Ranked[]> {
  const from = window.from.getTime() / 1000;
  const to = window.to.getTime() / 1000;
  if (from % 900 !== 0 || to % 900 !== 0 || to < from) {
    throw new RangeError(
      `a window runs between fifteen-minute boundaries: ${window.from.toISOString()}..${window.to.toISOString()}`,
    );
  }
  // Whole days inside the window; an empty range when it holds none.
  const dayFrom = Math.ceil(from / DAY_SECONDS) * DAY_SECONDS;
  const dayTo = Math.max(dayFrom, Math.floor(to / DAY_SECONDS) * DAY_SECONDS);
  const rows = await sql<Row[]>`
    WITH parts AS (
      SELECT contract, sales, sold_units, volume, max_unit_price FROM collection_days
      WHERE chain_id = ${chainId} AND day >= to_timestamp(${dayFrom}) AND day < to_timestamp(${dayTo})
        AND sales > 0
      UNION ALL
      SELECT contract, sales, sold_units, volume, max_unit_price FROM collection_buckets
      WHERE chain_id = ${chainId} AND sales > 0
        AND ((bucket_start >= to_timestamp(${from}) AND bucket_start < to_timestamp(${Math.min(dayFrom, to)}))
          OR (bucket_start >= to_timestamp(${Math.max(dayTo, from)}) AND bucket_start < to_timestamp(${to})))),
    sums AS (
      SELECT contract, sum(sales) AS sales, sum(sold_units) AS units, sum(volume) AS volume,
             max(max_unit_price) AS hi
      FROM parts GROUP BY contract)
    SELECT s.contract, c.name, s.sales::text, s.units::text, s.volume::text, s.hi::text
    FROM sums s LEFT JOIN contracts c ON c.chain_id = ${chainId} AND c.address = s.contract`;
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    name: r.name ?? "",
    sales: BigInt(r.sales),
    units: BigInt(r.units),
    volume: BigInt(r.volume),
    maxUnitPrice: BigInt(r.hi ?? 0),
  }));
}

const byAddress = (a: Ranked, b: Ranked) => (a.contract < b.contract ? -1 : a.contract > b.contract ? 1 : 0);
const descending = (a: bigint, b: bigint) => (a > b ? -1 : a < b ? 1 : 0);

/** Higher average unit price first; a collection without units sold averages 0. */
function byAverage(a: Ranked, b: Ranked): number {
  if (a.units === 0n || b.units === 0n) return descending(a.units === 0n ? 0n : 1n, b.units === 0n ? 0n : 1n);
  return descending(a.volume * b.units, b.volume * a.units);
}

/**
 * The collections highest metric first, ties by contract address. The average price is volume
 * over units sold, compared exactly (cross-multiplied), not as rounded quotients.
 */
export function rankCollections(rows: readonly Ranked[], metric: RankingMetric): Ranked[] {
  const compare: (a: Ranked, b: Ranked) => number =
    metric === "volume"
      ? (a, b) => descending(a.volume, b.volume)
      : metric === "sales"
        ? (a, b) => descending(a.sales, b.sales)
        : metric === "maxPrice"
          ? (a, b) => descending(a.maxUnitPrice, b.maxUnitPrice)
          : byAverage;
  return [...rows].sort((a, b) => compare(a, b) || byAddress(a, b));
}
