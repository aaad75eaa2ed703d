/**
 * Stored sales moving between the organic and the flagged figures: a wash rule that fired after a
 * sale was counted (a verdict), or a verdict taken back by a rollback. Only those two classes swap:
 * an unpriced sale stays unpriced whatever its wash flags.
 *
 * A move is applied as a delta, like a batch's sales: the counts, units and volume of the class left
 * go down and those of the class entered go up; the extremes of the class entered take the sale's
 * unit price in. An extreme of the class left is read again only when the sale held it (its unit
 * price is that extreme): from the bucket's sales in a bucket, from the rollups in a window. So a
 * move costs its own rows, not the size of its bucket.
 */
import type postgres from "postgres";
import type { Address } from "../core/hex.ts";
import { BUCKET_SECONDS } from "../core/periods.ts";
import type { SaleClass } from "../core/sale-classes.ts";
import { bulkRows, joinColumn } from "../store/pg/bulk-rows.ts";
import { bare, type Queryable } from "../store/pg/database.ts";
import type { Statement } from "../store/pg/session.ts";
import { dayStatements, touchedDays } from "./days.ts";
import { windowHighStatements } from "./rankings.ts";
import { RANKING_WINDOWS } from "./windows.ts";

/** A stored sale changing class, with what its bucket counted of it. */
export interface SaleMove {
  contract: Address;
  /** Unix seconds of the sale's block. */
  time: number;
  quantity: bigint;
  totalNative: bigint;
  was: SaleClass;
  now: SaleClass;
}

/**
 * The moves as rows (contract, bucket_start, q, v, p, was, now): a query over the store, or a list.
 * Rows whose classes are equal move nothing and are left out by the statements.
 */
export type MoveRows = postgres.PendingQuery<postgres.Row[]>;

/**
 * The moves the verdicts given in blocks [from, to] made: each sale they named, in the class its
 * flags gave before those verdicts' rules and the class they give now. Read after the flags are
 * written, in the same transaction.
 */
export function verdictMoves(sql: Queryable, chainId: number, from: number, to: number): MoveRows {
  return sql`
    SELECT s.contract, date_bin('15 minutes', s.block_time, TIMESTAMPTZ 'epoch') AS bucket_start,
           s.quantity AS q, s.total_native AS v, trunc(s.total_native / s.quantity) AS p,
           mintlens_sale_class(ARRAY(SELECT f FROM unnest(s.flags) AS f WHERE f <> ALL (x.rules))) AS was,
           mintlens_sale_class(s.flags) AS now
    FROM (SELECT block_number, log_index, seq, seller, array_agg(rule) AS rules FROM sale_verdicts
          WHERE chain_id = ${chainId} AND verdict_block BETWEEN ${from} AND ${to}
          GROUP BY 1, 2, 3, 4) x
    JOIN sales s ON s.chain_id = ${chainId} AND s.block_number = x.block_number AND s.log_index = x.log_index
      AND s.seq = x.seq AND s.seller = x.seller`;
}

/** Moves known to the caller (a rollback's), as rows. */
export function listedMoves(sql: Queryable, moves: readonly SaleMove[]): MoveRows {
  const rows = bulkRows(
    sql,
    {
      c: joinColumn(moves.map((m) => bare(m.contract))),
      t: joinColumn(moves.map((m) => m.time)),
      q: joinColumn(moves.map((m) => m.quantity)),
      v: joinColumn(moves.map((m) => m.totalNative)),
      was: joinColumn(moves.map((m) => m.was)),
      now: joinColumn(moves.map((m) => m.now)),
    },
    { joined: true },
  );
  return sql`
    SELECT decode(u.c, 'hex') AS contract, to_timestamp(u.t::bigint - u.t::bigint % ${BUCKET_SECONDS}) AS bucket_start,
           u.q::numeric AS q, u.v::numeric AS v, trunc(u.v::numeric / u.q::numeric) AS p, u.was, u.now
    FROM ${rows}`;
}

/** Sums of the moves per group, by class left and entered (organic `…`, flagged `f…`). */
const DELTAS = `
  sum(CASE WHEN m.now = 'organic' THEN 1 WHEN m.was = 'organic' THEN -1 ELSE 0 END) AS dn,
  sum(CASE WHEN m.now = 'organic' THEN m.q WHEN m.was = 'organic' THEN -m.q ELSE 0 END) AS du,
  sum(CASE WHEN m.now = 'organic' THEN m.v WHEN m.was = 'organic' THEN -m.v ELSE 0 END) AS dv,
  sum(CASE WHEN m.now = 'flagged' THEN 1 WHEN m.was = 'flagged' THEN -1 ELSE 0 END) AS fdn,
  sum(CASE WHEN m.now = 'flagged' THEN m.q WHEN m.was = 'flagged' THEN -m.q ELSE 0 END) AS fdu,
  sum(CASE WHEN m.now = 'flagged' THEN m.v WHEN m.was = 'flagged' THEN -m.v ELSE 0 END) AS fdv,
  min(m.p) FILTER (WHERE m.now = 'organic') AS in_lo, max(m.p) FILTER (WHERE m.now = 'organic') AS in_hi,
  min(m.p) FILTER (WHERE m.now = 'flagged') AS fin_lo, max(m.p) FILTER (WHERE m.now = 'flagged') AS fin_hi,
  min(m.p) FILTER (WHERE m.was = 'organic') AS out_lo, max(m.p) FILTER (WHERE m.was = 'organic') AS out_hi,
  min(m.p) FILTER (WHERE m.was = 'flagged') AS fout_lo, max(m.p) FILTER (WHERE m.was = 'flagged') AS fout_hi`;

/** Moves that change class: between organic and flagged. */
const MOVING = "m.was <> m.now AND m.was IN ('organic', 'flagged') AND m.now IN ('organic', 'flagged')";

/**
 * The statements that apply `moves` to the buckets, then to the days `buckets` are in (worked out
 * again from their buckets), then to every ranked window ending at `windowEnd` that holds one of
 * those buckets.
 */
export function moveStatements(
  sql: Queryable,
  chainId: number,
  moves: MoveRows,
  buckets: readonly { contract: Address; start: number }[],
  windowEnd: number | undefined,
): Statement[] {
  if (buckets.length === 0) return [];
  // A bucket extreme the moved sales held, read again from the bucket's sales of the class (the
  // flags are already the new ones): by time, through the BRIN index on it.
  const extreme = (agg: "min" | "max", cls: SaleClass) => sql`
    (SELECT ${sql.unsafe(agg)}(trunc(s.total_native / s.quantity)) FROM sales s
     WHERE s.chain_id = ${chainId} AND s.contract = t.contract AND s.kind = 'sale'
       AND s.block_time >= t.bucket_start AND s.block_time < t.bucket_start + make_interval(secs => ${BUCKET_SECONDS})
       AND mintlens_sale_class(s.flags) = ${cls})`;
  const statements: Statement[] = [
    sql`
    WITH m AS (${moves}),
    d AS (SELECT m.contract, m.bucket_start, ${sql.unsafe(DELTAS)} FROM m WHERE ${sql.unsafe(MOVING)} GROUP BY 1, 2)
    UPDATE collection_buckets t
    SET sales = t.sales + d.dn, sold_units = t.sold_units + d.du, volume = t.volume + d.dv,
        min_unit_price = CASE WHEN d.out_lo <= t.min_unit_price THEN ${extreme("min", "organic")}
                              ELSE LEAST(t.min_unit_price, d.in_lo) END,
        max_unit_price = CASE WHEN d.out_hi >= t.max_unit_price THEN ${extreme("max", "organic")}
                              ELSE GREATEST(t.max_unit_price, d.in_hi) END,
        flagged_sales = t.flagged_sales + d.fdn, flagged_units = t.flagged_units + d.fdu,
        flagged_volume = t.flagged_volume + d.fdv,
        flagged_min_unit_price = CASE WHEN d.fout_lo <= t.flagged_min_unit_price
                                      THEN ${extreme("min", "flagged")}
                                      ELSE LEAST(t.flagged_min_unit_price, d.fin_lo) END,
        flagged_max_unit_price = CASE WHEN d.fout_hi >= t.flagged_max_unit_price
                                      THEN ${extreme("max", "flagged")}
                                      ELSE GREATEST(t.flagged_max_unit_price, d.fin_hi) END
    FROM d
    WHERE t.chain_id = ${chainId} AND t.contract = d.contract AND t.bucket_start = d.bucket_start`,
    ...dayStatements(sql, chainId, touchedDays(buckets)),
  ];
  if (windowEnd === undefined) return statements;
  const windows = RANKING_WINDOWS.filter((seconds) => buckets.some((b) => b.start >= windowEnd - seconds));
  if (windows.length === 0) return statements;
  // A window's highest price of a class the moved sales held is marked (-1), then read again from
  // the rollups, as when a bucket holding it leaves the window.
  statements.push(sql`
    WITH m AS (${moves}),
    d AS (
      SELECT w.seconds, m.contract, ${sql.unsafe(DELTAS)}
      FROM m JOIN unnest(${windows}::int[]) AS w(seconds)
        ON m.bucket_start >= to_timestamp(${windowEnd} - w.seconds) AND m.bucket_start < to_timestamp(${windowEnd})
      WHERE ${sql.unsafe(MOVING)}
      GROUP BY 1, 2)
    UPDATE collection_windows t
    SET sales = t.sales + d.dn, sold_units = t.sold_units + d.du, volume = t.volume + d.dv,
        max_unit_price = CASE WHEN d.out_hi >= t.max_unit_price THEN -1
                              ELSE GREATEST(t.max_unit_price, coalesce(d.in_hi, 0)) END,
        flagged_sales = t.flagged_sales + d.fdn, flagged_units = t.flagged_units + d.fdu,
        flagged_volume = t.flagged_volume + d.fdv,
        flagged_max_unit_price = CASE WHEN d.fout_hi >= t.flagged_max_unit_price THEN -1
                                      ELSE GREATEST(t.flagged_max_unit_price, coalesce(d.fin_hi, 0)) END
    FROM d
    WHERE t.chain_id = ${chainId} AND t.window_seconds = d.seconds AND t.contract = d.contract`);
  for (const seconds of windows) statements.push(...windowHighStatements(sql, chainId, seconds, windowEnd));
  return statements;
}
