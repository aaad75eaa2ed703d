/**
 * Each collection's fifteen-minute buckets summed per UTC day, so that a long series or window
 * reads a day's row rather than its 96 buckets. A touched day is worked out again from its
 * buckets, within the batch's or the rollback's transaction: a day always equals their sum.
 */
import type { Address } from "../core/hex.ts";
import { DAY_SECONDS, dayStart } from "../core/periods.ts";
import { bulkRows, joinColumn } from "../store/pg/bulk-rows.ts";
import { bare, type Queryable } from "../store/pg/database.ts";
import type { Statement } from "../store/pg/session.ts";

/** What a day holds of its buckets: sums, and the extremes of the extreme prices. */
const SUMMED = [
  "minted",
  "burned",
  "holders_delta",
  "transfers",
  "sales",
  "sold_units",
  "volume",
  "flagged_sales",
  "flagged_units",
  "flagged_volume",
  "unpriced_sales",
  "unpriced_units",
];
const LOWEST = ["min_unit_price", "flagged_min_unit_price"];
const HIGHEST = ["max_unit_price", "flagged_max_unit_price"];

/** The columns of a day row, in the order `daySums` gives their values. */
function dayColumnList(): string {
  return ["chain_id", "contract", "day", ...SUMMED, ...LOWEST, ...HIGHEST].join(", ");
}

function daySumList(prefix: string): string {
  return [
    ...SUMMED.map((c) => `sum(${prefix}${c})`),
    ...LOWEST.map((c) => `min(${prefix}${c})`),
    ...HIGHEST.map((c) => `max(${prefix}${c})`),
  ].join(", ");
}

/** The (collection, day) pairs a batch changed buckets of, as the columns of the statements below. */
export interface TouchedDays {
  contracts: string[];
  days: number[];
}

function touchedRows(sql: Queryable, touched: TouchedDays) {
  return bulkRows(sql, { c: joinColumn(touched.contracts), d: joinColumn(touched.days) }, { joined: true });
}

/** Each distinct (collection, day) of the given buckets (starts in Unix seconds). */
export function touchedDays(buckets: Iterable<{ contract: Address; start: number }>): TouchedDays {
  const seen = new Set<string>();
  const touched: TouchedDays = { contracts: [], days: [] };
  for (const { contract, start } of buckets) {
    const day = dayStart(start);
    const key = `${contract}${day}`;
    if (seen.has(key)) continue;
    seen.add(key);
    touched.contracts.push(bare(contract));
    touched.days.push(day);
  }
  return touched;
}

/**
 * Works the touched days out again from their buckets: deleted first, so that a day whose
 * buckets are all gone (after a rollback) leaves no row. Runs after the buckets are written.
 */
export function dayStatements(sql: Queryable, chainId: number, touched: TouchedDays): Statement[] {
  if (touched.days.length === 0) return [];
  return [
    sql`
    DELETE FROM collection_days t
    USING ${touchedRows(sql, touched)}
    WHERE t.chain_id = ${chainId} AND t.contract = decode(u.c, 'hex') AND t.day = to_timestamp(u.d::bigint)`,
    sql`
    INSERT INTO collection_days (${sql.unsafe(dayColumnList())})
    SELECT ${chainId}, b.contract, to_timestamp(u.d::bigint), ${sql.unsafe(daySumList("b."))}
    FROM ${touchedRows(sql, touched)}
    JOIN collection_buckets b ON b.chain_id = ${chainId} AND b.contract = decode(u.c, 'hex')
      AND b.bucket_start >= to_timestamp(u.d::bigint) AND b.bucket_start < to_timestamp(u.d::bigint + ${DAY_SECONDS})
    GROUP BY b.contract, u.d`,
  ];
}

/**
 * After a rollback to the ancestor at `ancestorTime`: every day from the ancestor's own is worked out again from the
 * buckets that remain (whatever was undone happened at or after the ancestor's time).
 */
export async function rebuildDaysAfter(
  sql: Queryable,
  chainId: number,
  ancestorTime: number | undefined,
): Promise<void> {
  // Without the ancestor's header (it is always kept while a rollback can reach it), every day.
  const from = ancestorTime === undefined ? 0 : dayStart(ancestorTime);
  await sql`DELETE FROM collection_days WHERE chain_id = ${chainId} AND day >= to_timestamp(${from})`;
  await sql`
    INSERT INTO collection_days (${sql.unsafe(dayColumnList())})
    SELECT chain_id, contract, date_bin('1 day', bucket_start, TIMESTAMPTZ 'epoch'), ${sql.unsafe(daySumList(""))}
    FROM collection_buckets
    WHERE chain_id = ${chainId} AND bucket_start >= to_timestamp(${from})
    GROUP BY 1, 2, 3`;
}
