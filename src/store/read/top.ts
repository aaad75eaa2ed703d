import type { Address } from "../../core/hex.ts";
import { type Queryable, toHex } from "../database.ts";
import { DAY_SECONDS } from "../days.ts";

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

/**
 * The collections with sales in a window, highest metric first, ties by contract address. The
 * whole days inside the window are read from the day rows and its edges from the buckets, so a
 * year costs at most 365 rows per collection. The average price is volume over units sold,
 * compared to the wei.
 */
export async function topCollections(sql: Queryable, chainId: number, query: TopQuery): Promise<Ranked[]> {
  const from = query.from.getTime() / 1000;
  const to = query.to.getTime() / 1000;
  if (from % 900 !== 0 || to % 900 !== 0 || to < from) {
    throw new RangeError(
      `a window runs between fifteen-minute boundaries: ${query.from.toISOString()}..${query.to.toISOString()}`,
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
    FROM sums s LEFT JOIN contracts c ON c.chain_id = ${chainId} AND c.address = s.contract
    ORDER BY ${
      query.metric === "volume"
        ? sql`s.volume DESC`
        : query.metric === "sales"
          ? sql`s.sales DESC`
          : query.metric === "maxPrice"
            ? sql`s.hi DESC NULLS LAST`
            : sql`s.volume / NULLIF(s.units, 0) DESC NULLS LAST`
    }, s.contract ASC
    LIMIT ${query.limit} OFFSET ${query.offset}`;
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    name: r.name ?? "",
    sales: BigInt(r.sales),
    units: BigInt(r.units),
    volume: BigInt(r.volume),
    maxUnitPrice: BigInt(r.hi ?? 0),
  }));
}
