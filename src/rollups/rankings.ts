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
  columns: { c: string; st: string; n: string; u: string; v: string; hi: string };
}

export function encodeSaleDeltas(deltas: readonly SaleBucketDelta[]): EncodedSaleDeltas {
  return {
    rows: deltas.length,
    columns: {
      c: joinColumn(deltas.map((d) => bare(d.contract))),
      st: joinColumn(deltas.map((d) => d.start)),
      n: joinColumn(deltas.map((d) => d.sales)),
      u: joinColumn(deltas.map((d) => d.units)),
      v: joinColumn(deltas.map((d) => d.volume)),
      hi: joinColumn(deltas.map((d) => d.maxUnitPrice)),
    },
  };
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
           v::numeric AS v, hi::numeric AS hi
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
               max(b.max_unit_price) AS hi
        FROM unnest(${sliding.map((m) => m.seconds)}::int[], ${sliding.map((m) => m.leaving.from)}::bigint[],
                    ${sliding.map((m) => m.leaving.to)}::bigint[]) AS w(seconds, lo, hi)
        JOIN collection_buckets b ON b.chain_id = ${chainId} AND b.sales > 0
          AND b.bucket_start >= to_timestamp(w.lo) AND b.bucket_start < to_timestamp(w.hi)
        LEFT JOIN delta d ON d.contract = b.contract AND d.bucket_start = b.bucket_start
        GROUP BY w.seconds, b.contract)
      UPDATE collection_windows t
      SET sales = t.sales - l.n, sold_units = t.sold_units - l.u, volume = t.volume - l.v,
          max_unit_price = CASE WHEN l.hi >= t.max_unit_price THEN -1 ELSE t.max_unit_price END
      FROM leaving l
      WHERE t.chain_id = ${chainId} AND t.window_seconds = l.seconds AND t.contract = l.contract`);
  }
  if (deltas.rows > 0 && slides.length > 0) {
    statements.push(sql`
      WITH delta AS (${delta})
      INSERT INTO collection_windows AS t (chain_id, window_seconds, contract, sales, sold_units, volume, max_unit_price)
      SELECT ${chainId}, w.seconds, d.contract, sum(d.n), sum(d.u), sum(d.v), max(d.hi)
      FROM unnest(${slides.map((m) => m.seconds)}::int[]) AS w(seconds)
      JOIN delta d ON d.bucket_start >= to_timestamp(${to} - w.seconds) AND d.bucket_start < to_timestamp(${to})
      GROUP BY w.seconds, d.contract
      ON CONFLICT (chain_id, window_seconds, contract) DO UPDATE SET
        sales = t.sales + excluded.sales, sold_units = t.sold_units + excluded.sold_units,
        volume = t.volume + excluded.volume,
        max_unit_price = CASE WHEN t.max_unit_price < 0 THEN -1
                              ELSE GREATEST(t.max_unit_price, excluded.max_unit_price) END`);
  }
  if (sliding.length > 0) {
    for (const m of sliding) {
      statements.push(
        sql`
        UPDATE collection_windows t SET max_unit_price = coalesce((${windowHigh(sql, chainId, to - m.seconds, to)}), 0)
        WHERE t.chain_id = ${chainId} AND t.window_seconds = ${m.seconds} AND t.max_unit_price < 0`,
      );
    }
    statements.push(sql`
      DELETE FROM collection_windows
      WHERE chain_id = ${chainId} AND window_seconds = ANY(${sliding.map((m) => m.seconds)}::int[]) AND sales <= 0`);
  }
  for (const seconds of recounts) statements.push(...recountStatements(sql, chainId, seconds, to, undefined));
  if (from !== to)
    statements.push(sql`UPDATE chains SET window_end = to_timestamp(${to}) WHERE chain_id = ${chainId}`);
  return statements;
}

/** The highest unit price of collection `t.contract` in [from, to), read from its rollups. */
function windowHigh(sql: Queryable, chainId: number, from: number, to: number) {
  const p = windowParts(from, to);
  return sql`
    SELECT max(x) FROM (
      SELECT d.max_unit_price AS x FROM collection_days d
      WHERE d.chain_id = ${chainId} AND d.contract = t.contract AND d.sales > 0
        AND d.day >= to_timestamp(${p.dayFrom}) AND d.day < to_timestamp(${p.dayTo})
      UNION ALL
      SELECT b.max_unit_price FROM collection_buckets b
      WHERE b.chain_id = ${chainId} AND b.contract = t.contract AND b.sales > 0
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
  const insert = sql`
    INSERT INTO collection_windows (chain_id, window_seconds, contract, sales, sold_units, volume, max_unit_price)`;
  const inDays = sql`d.sales > 0 AND d.day >= to_timestamp(${p.dayFrom}) AND d.day < to_timestamp(${p.dayTo})`;
  const inEdges = sql`
    b.sales > 0
    AND ((b.bucket_start >= to_timestamp(${p.head.from}) AND b.bucket_start < to_timestamp(${p.head.to}))
      OR (b.bucket_start >= to_timestamp(${p.tail.from}) AND b.bucket_start < to_timestamp(${p.tail.to})))`;
  if (contracts === undefined) {
    return [
      sql`DELETE FROM collection_windows WHERE chain_id = ${chainId} AND window_seconds = ${seconds}`,
      sql`
        ${insert}
        SELECT ${chainId}, ${seconds}, contract, sum(sales), sum(sold_units), sum(volume), max(max_unit_price)
        FROM (
          SELECT d.contract, d.sales, d.sold_units, d.volume, d.max_unit_price FROM collection_days d
          WHERE d.chain_id = ${chainId} AND ${inDays}
          UNION ALL
          SELECT b.contract, b.sales, b.sold_units, b.volume, b.max_unit_price FROM collection_buckets b
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
      SELECT ${chainId}, ${seconds}, w.contract, w.sales, w.units, w.volume, w.hi
      FROM ${list}
      CROSS JOIN LATERAL (
        SELECT decode(u.c, 'hex') AS contract, sum(sales) AS sales, sum(sold_units) AS units, sum(volume) AS volume,
               max(max_unit_price) AS hi
        FROM (
          SELECT d.sales, d.sold_units, d.volume, d.max_unit_price FROM collection_days d
          WHERE d.chain_id = ${chainId} AND d.contract = decode(u.c, 'hex') AND ${inDays}
          UNION ALL
          SELECT b.sales, b.sold_units, b.volume, b.max_unit_price FROM collection_buckets b
          WHERE b.chain_id = ${chainId} AND b.contract = decode(u.c, 'hex') AND ${inEdges}) parts) w
      WHERE w.sales > 0`,
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
      SELECT DISTINCT contract FROM collection_buckets
      WHERE chain_id = ${chainId} AND sales > 0
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
