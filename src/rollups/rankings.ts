/**
 * Rankings kept at commit time: for every ranked window (an hour, a day, 7, 30 and 365 days) each
 * collection with sales in it has one row of `collection_windows` with its sales, units, volume and
 * highest unit price there. Each batch moves the windows to end after its newest block (the
 * buckets leaving a window at its start are taken out) and adds its own sales; the API reads a
 * page of ranked rows through an index per metric and computes nothing.
 *
 * Sums move by subtraction. A highest price cannot be subtracted: when a bucket holding a
 * collection's highest price leaves a window, that collection's highest price is read again from
 * the rollups of the window (at most 365 day rows and 190 buckets). A window that moves by its
 * whole length or more (a resumed chain, the first batch) is counted again from the rollups.
 */
import type { Address } from "../core/hex.ts";
import { bulkRows, joinColumn } from "../store/pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../store/pg/database.ts";
import { runInOrder, type Statement } from "../store/pg/session.ts";
import { encodeSaleColumns } from "./buckets.ts";
import type { SaleBucketDelta } from "./sale-buckets.ts";
import { RANKING_WINDOWS, type WindowMove, windowMoves, windowParts } from "./windows.ts";

/** The end of the chain's ranked windows (Unix seconds); undefined before any is kept. */
export async function storedWindowEnd(sql: Queryable, chainId: number): Promise<number | undefined> {
  const [row] = await sql<{ end: string | null }[]>`
    SELECT extract(epoch FROM window_end)::bigint AS end FROM chains WHERE chain_id = ${chainId}`;
  return row?.end == null ? undefined : Number(row.end);
}

/** A batch's sale deltas as one parameter per column. */
export interface EncodedSaleDeltas {
  rows: number;
  columns: Record<"c" | "st" | "n" | "u" | "v" | "hi" | "fn" | "fu" | "fv" | "fhi" | "pn", string>;
}

export function encodeSaleDeltas(deltas: readonly SaleBucketDelta[]): EncodedSaleDeltas {
  const { c, st, n, u, v, hi, fn, fu, fv, fhi, pn } = encodeSaleColumns(deltas);
  return { rows: deltas.length, columns: { c, st, n, u, v, hi, fn, fu, fv, fhi, pn } };
}

/**
 * The statements that take the windows from ending at `from` to ending at `to` and add a batch's
 * sale deltas. They run after the batch's buckets and days are written: a leaving bucket's sums
 * there include the batch's own deltas, which are taken back out of them.
 */
export function rankingStatements(
  sql: Queryable,
  chainId: number,
  from: number | undefined,
  to: number,
  deltas: EncodedSaleDeltas,
): Statement[] {
  const moves = windowMoves(from, to);
  const slides = moves.filter((m): m is Extract<WindowMove, { kind: "slide" }> => m.kind === "slide");
  const recounts = moves.filter((m) => m.kind === "recount").map((m) => m.seconds);
  const statements: Statement[] = [];
  const delta = sql`
    SELECT decode(c, 'hex') AS contract, to_timestamp(st::bigint) AS bucket_start, n::bigint AS n, u::numeric AS u,
           v::numeric AS v, NULLIF(hi, '')::numeric AS hi, fn::bigint AS fn, fu::numeric AS fu, fv::numeric AS fv,
           NULLIF(fhi, '')::numeric AS fhi, pn::bigint AS pn
    FROM ${bulkRows(sql, deltas.columns, { joined: true })}`;
  const sliding = slides.filter((m) => m.leaving.to > m.leaving.from);
  if (sliding.length > 0) {
    // The buckets leaving each window, as they were before this batch; a collection whose highest
    // price may be among them is marked (-1) to be read again below.
    statements.push(sql`
      WITH delta AS (${delta}),
      leaving AS (
        SELECT w.seconds, b.contract, sum(b.sales - coalesce(d.n, 0)) AS n,
               sum(b.sold_units - coalesce(d.u, 0)) AS u, sum(b.volume - coalesce(d.v, 0)) AS v,
               max(b.max_unit_price) AS hi, sum(b.flagged_sales - coalesce(d.fn, 0)) AS fn,
               sum(b.flagged_units - coalesce(d.fu, 0)) AS fu, sum(b.flagged_volume - coalesce(d.fv, 0)) AS fv,
               max(b.flagged_max_unit_price) AS fhi, sum(b.unpriced_sales - coalesce(d.pn, 0)) AS pn
        FROM unnest(${sliding.map((m) => m.seconds)}::int[], ${sliding.map((m) => m.leaving.from)}::bigint[],
                    ${sliding.map((m) => m.leaving.to)}::bigint[]) AS w(seconds, lo, hi)
        JOIN collection_buckets b ON b.chain_id = ${chainId} AND ${sql.unsafe(anySales("b"))}
          AND b.bucket_start >= to_timestamp(w.lo) AND b.bucket_start < to_timestamp(w.hi)
        LEFT JOIN delta d ON d.contract = b.contract AND d.bucket_start = b.bucket_start
        GROUP BY w.seconds, b.contract)
      UPDATE collection_windows t
      SET sales = t.sales - l.n, sold_units = t.sold_units - l.u, volume = t.volume - l.v,
          max_unit_price = CASE WHEN l.hi >= t.max_unit_price THEN -1 ELSE t.max_unit_price END,
          flagged_sales = t.flagged_sales - l.fn, flagged_units = t.flagged_units - l.fu,
          flagged_volume = t.flagged_volume - l.fv,
          flagged_max_unit_price = CASE WHEN l.fhi >= t.flagged_max_unit_price THEN -1
                                        ELSE t.flagged_max_unit_price END,
          unpriced_sales = t.unpriced_sales - l.pn
      FROM leaving l
      WHERE t.chain_id = ${chainId} AND t.window_seconds = l.seconds AND t.contract = l.contract`);
  }
  if (deltas.rows > 0 && slides.length > 0) {
    statements.push(sql`
      WITH delta AS (${delta})
      INSERT INTO collection_windows AS t (${sql.unsafe(WINDOW_COLUMNS)})
      SELECT ${chainId}, w.seconds, d.contract, sum(d.n), sum(d.u), sum(d.v), coalesce(max(d.hi), 0), sum(d.fn),
             sum(d.fu), sum(d.fv), coalesce(max(d.fhi), 0), sum(d.pn)
      FROM unnest(${slides.map((m) => m.seconds)}::int[]) AS w(seconds)
      JOIN delta d ON d.bucket_start >= to_timestamp(${to} - w.seconds) AND d.bucket_start < to_timestamp(${to})
      GROUP BY w.seconds, d.contract
      ON CONFLICT (chain_id, window_seconds, contract) DO UPDATE SET
        sales = t.sales + excluded.sales, sold_units = t.sold_units + excluded.sold_units,
        volume = t.volume + excluded.volume,
        max_unit_price = CASE WHEN t.max_unit_price < 0 THEN -1
                              ELSE GREATEST(t.max_unit_price, excluded.max_unit_price) END,
        flagged_sales = t.flagged_sales + excluded.flagged_sales,
        flagged_units = t.flagged_units + excluded.flagged_units,
        flagged_volume = t.flagged_volume + excluded.flagged_volume,
        flagged_max_unit_price = CASE WHEN t.flagged_max_unit_price < 0 THEN -1
                                      ELSE GREATEST(t.flagged_max_unit_price, excluded.flagged_max_unit_price) END,
        unpriced_sales = t.unpriced_sales + excluded.unpriced_sales`);
  }
  if (sliding.length > 0) {
    for (const m of sliding) statements.push(...windowHighStatements(sql, chainId, m.seconds, to));
    statements.push(sql`
      DELETE FROM collection_windows
      WHERE chain_id = ${chainId} AND window_seconds = ANY(${sliding.map((m) => m.seconds)}::int[])
        AND sales + flagged_sales + unpriced_sales <= 0`);
  }
  for (const seconds of recounts) statements.push(...recountStatements(sql, chainId, seconds, to, undefined));
  if (from !== to)
    statements.push(sql`UPDATE chains SET window_end = to_timestamp(${to}) WHERE chain_id = ${chainId}`);
  return statements;
}

/**
 * Reads again, in the window of `seconds` ending at `end`, each highest price marked unknown (-1)
 * from the rollups of the window.
 */
export function windowHighStatements(
  sql: Queryable,
  chainId: number,
  seconds: number,
  end: number,
): Statement[] {
  return (["organic", "flagged"] as const).map((figures) => {
    const column = sql.unsafe(HIGH[figures]);
    return sql`
      UPDATE collection_windows t
      SET ${column} = coalesce((${windowHigh(sql, chainId, end - seconds, end, figures)}), 0)
      WHERE t.chain_id = ${chainId} AND t.window_seconds = ${seconds} AND t.${column} < 0`;
  });
}

/** Rows of the rollups (alias `r`) with a sale of any class. */
function anySales(alias: string): string {
  return `(${alias}.sales + ${alias}.flagged_sales + ${alias}.unpriced_sales) > 0`;
}

/** The highest unit price of each class of figures, in the rollups and in the windows alike. */
const HIGH = { organic: "max_unit_price", flagged: "flagged_max_unit_price" } as const;
const COUNT = { organic: "sales", flagged: "flagged_sales" } as const;

const WINDOW_COLUMNS =
  "chain_id, window_seconds, contract, sales, sold_units, volume, max_unit_price, flagged_sales, flagged_units, " +
  "flagged_volume, flagged_max_unit_price, unpriced_sales";

/** A window's figures, summed from day rows and buckets (`parts`). */
const WINDOW_SUMS =
  "sum(sales), sum(sold_units), sum(volume), coalesce(max(max_unit_price), 0), sum(flagged_sales), " +
  "sum(flagged_units), sum(flagged_volume), coalesce(max(flagged_max_unit_price), 0), sum(unpriced_sales)";
const PART_COLUMNS =
  "sales, sold_units, volume, max_unit_price, flagged_sales, flagged_units, flagged_volume, " +
  "flagged_max_unit_price, unpriced_sales";

/** The highest unit price of one class in collection `t.contract` in [from, to), read from its rollups. */
function windowHigh(sql: Queryable, chainId: number, from: number, to: number, figures: keyof typeof HIGH) {
  const p = windowParts(from, to);
  const [high, count] = [sql.unsafe(HIGH[figures]), sql.unsafe(COUNT[figures])];
  return sql`
    SELECT max(x) FROM (
      SELECT d.${high} AS x FROM collection_days d
      WHERE d.chain_id = ${chainId} AND d.contract = t.contract AND d.${count} > 0
        AND d.day >= to_timestamp(${p.dayFrom}) AND d.day < to_timestamp(${p.dayTo})
      UNION ALL
      SELECT b.${high} FROM collection_buckets b
      WHERE b.chain_id = ${chainId} AND b.contract = t.contract AND b.${count} > 0
        AND ((b.bucket_start >= to_timestamp(${p.head.from}) AND b.bucket_start < to_timestamp(${p.head.to}))
          OR (b.bucket_start >= to_timestamp(${p.tail.from}) AND b.bucket_start < to_timestamp(${p.tail.to})))) s`;
}

/**
 * Counts a window ending at `end` again from the rollups: for every collection (read by the day and
 * bucket indexes on time), or only for `contracts` (a rollback's, read by each collection's keys).
 * Every row of those collections is replaced.
 */
function recountStatements(
  sql: Queryable,
  chainId: number,
  seconds: number,
  end: number,
  contracts: readonly Address[] | undefined,
): Statement[] {
  const p = windowParts(end - seconds, end);
  const insert = sql`INSERT INTO collection_windows (${sql.unsafe(WINDOW_COLUMNS)})`;
  const inDays = sql`${sql.unsafe(anySales("d"))} AND d.day >= to_timestamp(${p.dayFrom}) AND d.day < to_timestamp(${p.dayTo})`;
  const inEdges = sql`
    ${sql.unsafe(anySales("b"))}
    AND ((b.bucket_start >= to_timestamp(${p.head.from}) AND b.bucket_start < to_timestamp(${p.head.to}))
      OR (b.bucket_start >= to_timestamp(${p.tail.from}) AND b.bucket_start < to_timestamp(${p.tail.to})))`;
  if (contracts === undefined) {
    return [
      sql`DELETE FROM collection_windows WHERE chain_id = ${chainId} AND window_seconds = ${seconds}`,
      sql`
        ${insert}
        SELECT ${chainId}, ${seconds}, contract, ${sql.unsafe(WINDOW_SUMS)}
        FROM (
          SELECT d.contract, ${sql.unsafe(PART_COLUMNS.replace(/(\w+)/g, "d.$1"))} FROM collection_days d
          WHERE d.chain_id = ${chainId} AND ${inDays}
          UNION ALL
          SELECT b.contract, ${sql.unsafe(PART_COLUMNS.replace(/(\w+)/g, "b.$1"))} FROM collection_buckets b
          WHERE b.chain_id = ${chainId} AND ${inEdges}) parts
        GROUP BY contract`,
    ];
  }
  const list = bulkRows(sql, { c: joinColumn(contracts.map(bare)) }, { joined: true });
  return [
    sql`
      DELETE FROM collection_windows t USING ${list}
      WHERE t.chain_id = ${chainId} AND t.window_seconds = ${seconds} AND t.contract = decode(u.c, 'hex')`,
    sql`
      ${insert}
      SELECT ${chainId}, ${seconds}, w.*
      FROM ${list}
      CROSS JOIN LATERAL (
        SELECT decode(u.c, 'hex') AS contract, ${sql.unsafe(WINDOW_SUMS)}
        FROM (
          SELECT ${sql.unsafe(PART_COLUMNS.replace(/(\w+)/g, "d.$1"))} FROM collection_days d
          WHERE d.chain_id = ${chainId} AND d.contract = decode(u.c, 'hex') AND ${inDays}
          UNION ALL
          SELECT ${sql.unsafe(PART_COLUMNS.replace(/(\w+)/g, "b.$1"))} FROM collection_buckets b
          WHERE b.chain_id = ${chainId} AND b.contract = decode(u.c, 'hex') AND ${inEdges}) parts
        HAVING count(*) > 0) w`,
  ];
}

/**
 * After a rollback whose rollups are already undone: the windows end after the ancestor again, and
 * the collections whose window figures that changes are counted again: those that lost sales, and
 * those with sales in the buckets that re-enter a window at its start.
 */
export async function undoRankings(
  sql: Queryable,
  chainId: number,
  end: number | undefined,
  lostSales: readonly Address[],
): Promise<void> {
  const current = await storedWindowEnd(sql, chainId);
  if (current === undefined) return;
  if (end === undefined || end > current) {
    // Without the ancestor's time, every window is counted again where it stands.
    for (const seconds of RANKING_WINDOWS)
      await runInOrder(recountStatements(sql, chainId, seconds, current, undefined));
    return;
  }
  for (const seconds of RANKING_WINDOWS) {
    const reentering = await sql<{ contract: Uint8Array }[]>`
      SELECT DISTINCT contract FROM collection_buckets b
      WHERE chain_id = ${chainId} AND ${sql.unsafe(anySales("b"))}
        AND bucket_start >= to_timestamp(${end - seconds}) AND bucket_start < to_timestamp(${current - seconds})`;
    const contracts = [...new Set([...lostSales, ...reentering.map((r) => toHex(r.contract) as Address)])];
    if (contracts.length > 0) await runInOrder(recountStatements(sql, chainId, seconds, end, contracts));
  }
  await sql`UPDATE chains SET window_end = to_timestamp(${end}) WHERE chain_id = ${chainId}`;
}

/** Counts every window again, ending at `end`: for a store whose windows were never kept. */
export async function recountRankings(sql: Queryable, chainId: number, end: number): Promise<void> {
  for (const seconds of RANKING_WINDOWS)
    await runInOrder(recountStatements(sql, chainId, seconds, end, undefined));
  await sql`UPDATE chains SET window_end = to_timestamp(${end}) WHERE chain_id = ${chainId}`;
}
