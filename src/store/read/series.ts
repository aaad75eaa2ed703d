import type { Address } from "../../core/hex.ts";
import { DAY_SECONDS } from "../../core/periods.ts";
import { bare, type Queryable } from "../pg/database.ts";

/** What a series read asks for: `points` periods of `periodSeconds` from `start` (aligned by the caller). */
export interface SeriesQuery {
  start: Date;
  periodSeconds: number;
  points: number;
  /**
   * The exclusive end of the data counted, on a fifteen-minute boundary, at most the grid's end
   * (the default). An earlier end makes the last period partial; holders are counted at it.
   */
  end?: Date | undefined;
  /** Count flagged sales in the sales figures too, rather than the organic ones only. */
  includeFlagged?: boolean;
}

/** What one period of the grid holds, summed from the fifteen-minute buckets it covers. */
export interface SeriesPoint {
  start: Date;
  minted: bigint;
  burned: bigint;
  /** Distinct holders at the end of the period (the current count for periods ending later than now). */
  holders: bigint;
  /**
   * Sales, NFT units sold, their total price (wei) and the extreme unit prices (wei; 0 without
   * sales): of the organic sales, or of every sale with a price when flagged ones are included.
   */
  sales: bigint;
  units: bigint;
  volume: bigint;
  minUnitPrice: bigint;
  maxUnitPrice: bigint;
  /** The period's flagged sales, their units and volume (wei), whether or not they are counted above. */
  flaggedSales: bigint;
  flaggedUnits: bigint;
  flaggedVolume: bigint;
  /** The period's sales without a price, and their units: in no figure above. */
  unpricedSales: bigint;
  unpricedUnits: bigint;
}

interface Row {
  i: number;
  minted: string;
  burned: string;
  holders_delta: string;
  sales: string;
  units: string;
  volume: string;
  lo: string | null;
  hi: string | null;
  flo: string | null;
  fhi: string | null;
  fn: string;
  fu: string;
  fv: string;
  pn: string;
  pu: string;
}

/**
 * A collection's supply, holders and sales on a grid, from its fifteen-minute buckets and their
 * day sums only (a period must be a whole number of buckets; whole days on day boundaries read
 * one row a day). Periods without activity are present with zeros. The
 * holder count at the end of a period is today's count less the changes of every later bucket:
 * nothing before the window needs reading, and periods ending in the future carry today's count.
 */
export async function collectionSeries(
  sql: Queryable,
  chainId: number,
  contract: Address,
  grid: SeriesQuery,
): Promise<SeriesPoint[]> {
  if (grid.periodSeconds <= 0 || grid.periodSeconds % 900 !== 0) {
    throw new RangeError(`a period is a whole number of fifteen-minute buckets, not ${grid.periodSeconds} s`);
  }
  const address = Buffer.from(bare(contract), "hex");
  const from = grid.start;
  const gridEnd = new Date(grid.start.getTime() + grid.points * grid.periodSeconds * 1000);
  const to = grid.end === undefined || grid.end > gridEnd ? gridEnd : grid.end;
  if ((to.getTime() / 1000) % 900 !== 0 || to < from) {
    throw new RangeError(`the data end is a fifteen-minute boundary in the grid, not ${to.toISOString()}`);
  }
  // Periods of whole days between day boundaries read the day rows; others the buckets.
  const daily =
    grid.periodSeconds % DAY_SECONDS === 0 &&
    (from.getTime() / 1000) % DAY_SECONDS === 0 &&
    (to.getTime() / 1000) % DAY_SECONDS === 0;
  const [table, time] = daily ? ["collection_days", "day"] : ["collection_buckets", "bucket_start"];
  const laterDays = Math.ceil(to.getTime() / 1000 / DAY_SECONDS) * DAY_SECONDS;
  const [rows, [later], [stats]] = await Promise.all([
    sql<Row[]>`
      SELECT floor(extract(epoch FROM ${sql(time)} - ${from}::timestamptz) / ${grid.periodSeconds})::int AS i,
             sum(minted)::text AS minted, sum(burned)::text AS burned, sum(holders_delta)::text AS holders_delta,
             sum(sales)::text AS sales, sum(sold_units)::text AS units, sum(volume)::text AS volume,
             min(min_unit_price)::text AS lo, max(max_unit_price)::text AS hi,
             min(flagged_min_unit_price)::text AS flo, max(flagged_max_unit_price)::text AS fhi,
             sum(flagged_sales)::text AS fn, sum(flagged_units)::text AS fu, sum(flagged_volume)::text AS fv,
             sum(unpriced_sales)::text AS pn, sum(unpriced_units)::text AS pu
      FROM ${sql(table)}
      WHERE chain_id = ${chainId} AND contract = ${address}
        AND ${sql(time)} >= ${from}::timestamptz AND ${sql(time)} < ${to}::timestamptz
      GROUP BY 1`,
    // The changes after the window: buckets up to the next day boundary, day rows from there.
    sql<{ delta: string }[]>`
      SELECT (coalesce((SELECT sum(holders_delta) FROM collection_buckets
                        WHERE chain_id = ${chainId} AND contract = ${address}
                          AND bucket_start >= ${to}::timestamptz AND bucket_start < to_timestamp(${laterDays})), 0)
            + coalesce((SELECT sum(holders_delta) FROM collection_days
                        WHERE chain_id = ${chainId} AND contract = ${address}
                          AND day >= to_timestamp(${laterDays})), 0))::text AS delta`,
    sql<{ holders: string }[]>`
      SELECT holders::text FROM collection_stats WHERE chain_id = ${chainId} AND contract = ${address}`,
  ]);
  const byIndex = new Map(rows.map((r) => [r.i, r]));
  const points: SeriesPoint[] = [];
  // Walked from the last period back: each one ends with the holders the next one started with.
  let holders = BigInt(stats?.holders ?? 0) - BigInt(later?.delta ?? 0);
  for (let i = grid.points - 1; i >= 0; i--) {
    const r = byIndex.get(i);
    const flagged = { sales: BigInt(r?.fn ?? 0), units: BigInt(r?.fu ?? 0), volume: BigInt(r?.fv ?? 0) };
    const organic = {
      sales: BigInt(r?.sales ?? 0),
      units: BigInt(r?.units ?? 0),
      volume: BigInt(r?.volume ?? 0),
    };
    const counted = grid.includeFlagged
      ? {
          sales: organic.sales + flagged.sales,
          units: organic.units + flagged.units,
          volume: organic.volume + flagged.volume,
          lo: lowest(r?.lo, r?.flo),
          hi: highest(r?.hi, r?.fhi),
        }
      : { ...organic, lo: optional(r?.lo), hi: optional(r?.hi) };
    points.push({
      start: new Date(from.getTime() + i * grid.periodSeconds * 1000),
      minted: BigInt(r?.minted ?? 0),
      burned: BigInt(r?.burned ?? 0),
      holders,
      sales: counted.sales,
      units: counted.units,
      volume: counted.volume,
      minUnitPrice: counted.lo ?? 0n,
      maxUnitPrice: counted.hi ?? 0n,
      flaggedSales: flagged.sales,
      flaggedUnits: flagged.units,
      flaggedVolume: flagged.volume,
      unpricedSales: BigInt(r?.pn ?? 0),
      unpricedUnits: BigInt(r?.pu ?? 0),
    });
    holders -= BigInt(r?.holders_delta ?? 0);
  }
  return points.reverse();
}

function optional(value: string | null | undefined): bigint | undefined {
  return value == null ? undefined : BigInt(value);
}

/** The lower of two extreme prices, either of which may be absent (no sales of its class). */
function lowest(a: string | null | undefined, b: string | null | undefined): bigint | undefined {
  const [x, y] = [optional(a), optional(b)];
  if (x === undefined) return y;
  return y === undefined || x <= y ? x : y;
}

function highest(a: string | null | undefined, b: string | null | undefined): bigint | undefined {
  const [x, y] = [optional(a), optional(b)];
  if (x === undefined) return y;
  return y === undefined || x >= y ? x : y;
}
