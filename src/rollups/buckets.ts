/**
 * Fifteen-minute buckets per collection: mints, burns, holder-count changes and transfers from the
 * ownership replay, sales, units sold, volume and extreme unit prices from the trades. Every series
 * and window is read from them (and their day sums), never by scanning transfers or sales.
 */
import type { Address } from "../core/hex.ts";
import { BUCKET_SECONDS } from "../core/periods.ts";
import { bulkRows, joinColumn } from "../store/pg/bulk-rows.ts";
import { bare, type Queryable } from "../store/pg/database.ts";
import { runInOrder, type Statement } from "../store/pg/session.ts";
import type { CountedSale } from "../store/tables/sales.ts";
import { addSaleToBucket, type PricedFigures, type SaleBucketDelta } from "./sale-buckets.ts";

/** The parameters of a batch's sale deltas: organic, flagged (`f…`) and unpriced (`p…`) figures. */
const SALE_COLUMNS = [
  "c",
  "st",
  "n",
  "u",
  "v",
  "lo",
  "hi",
  "fn",
  "fu",
  "fv",
  "flo",
  "fhi",
  "pn",
  "pu",
] as const;

/** The columns of one class of priced sales. */
function pricedColumns(sales: readonly SaleBucketDelta[], pick: (d: SaleBucketDelta) => PricedFigures) {
  return {
    n: joinColumn(sales.map((d) => pick(d).sales)),
    u: joinColumn(sales.map((d) => pick(d).units)),
    v: joinColumn(sales.map((d) => pick(d).volume)),
    lo: joinColumn(sales.map((d) => pick(d).minUnitPrice)),
    hi: joinColumn(sales.map((d) => pick(d).maxUnitPrice)),
  };
}

export function encodeSaleColumns(
  sales: readonly SaleBucketDelta[],
): Record<(typeof SALE_COLUMNS)[number], string> {
  const organic = pricedColumns(sales, (d) => d.organic);
  const flagged = pricedColumns(sales, (d) => d.flagged);
  return {
    c: joinColumn(sales.map((d) => bare(d.contract))),
    st: joinColumn(sales.map((d) => d.start)),
    ...organic,
    fn: flagged.n,
    fu: flagged.u,
    fv: flagged.v,
    flo: flagged.lo,
    fhi: flagged.hi,
    pn: joinColumn(sales.map((d) => d.unpriced.sales)),
    pu: joinColumn(sales.map((d) => d.unpriced.units)),
  };
}

/** What the ownership replay changes in one bucket. */
export interface TransferBucketDelta {
  contract: Address;
  start: number;
  minted: bigint;
  burned: bigint;
  holders: number;
  transfers: number;
}

/** Bucket changes as the parameters of the statements that apply them, built before the transaction. */
export interface EncodedBuckets {
  transfers?: { c: string; st: string; m: string; b: string; h: string; n: string };
  /** Extreme prices cannot be subtracted: sale deltas are only ever added. */
  sales?: Record<(typeof SALE_COLUMNS)[number], string>;
}

/** `sign` -1 encodes the transfer deltas in reverse (a rollback). */
export function encodeBuckets(
  transfers: readonly TransferBucketDelta[],
  sales: readonly SaleBucketDelta[],
  sign: 1 | -1 = 1,
): EncodedBuckets {
  const s = BigInt(sign);
  return {
    transfers:
      transfers.length === 0
        ? undefined
        : {
            c: joinColumn(transfers.map((b) => bare(b.contract))),
            st: joinColumn(transfers.map((b) => b.start)),
            m: joinColumn(transfers.map((b) => b.minted * s)),
            b: joinColumn(transfers.map((b) => b.burned * s)),
            h: joinColumn(transfers.map((b) => b.holders * sign)),
            n: joinColumn(transfers.map((b) => b.transfers * sign)),
          },
    sales: sales.length === 0 ? undefined : encodeSaleColumns(sales),
  };
}

export function bucketStatements(sql: Queryable, chainId: number, encoded: EncodedBuckets): Statement[] {
  const statements: Statement[] = [];
  const { transfers: t, sales } = encoded;
  if (t) {
    statements.push(sql`
      INSERT INTO collection_buckets AS t (chain_id, contract, bucket_start, minted, burned, holders_delta, transfers)
      SELECT ${chainId}, decode(c, 'hex'), to_timestamp(st::bigint), m::numeric, b::numeric, h::bigint, n::bigint
      FROM ${bulkRows(sql, t)}
      ON CONFLICT (chain_id, contract, bucket_start) DO UPDATE SET
        minted = t.minted + excluded.minted, burned = t.burned + excluded.burned,
        holders_delta = t.holders_delta + excluded.holders_delta, transfers = t.transfers + excluded.transfers`);
  }
  if (sales) {
    statements.push(sql`
      INSERT INTO collection_buckets AS t (chain_id, contract, bucket_start, sales, sold_units, volume, min_unit_price,
                                           max_unit_price, flagged_sales, flagged_units, flagged_volume,
                                           flagged_min_unit_price, flagged_max_unit_price, unpriced_sales, unpriced_units)
      SELECT ${chainId}, decode(c, 'hex'), to_timestamp(st::bigint), n::bigint, u::numeric, v::numeric,
             NULLIF(lo, '')::numeric, NULLIF(hi, '')::numeric, fn::bigint, fu::numeric, fv::numeric,
             NULLIF(flo, '')::numeric, NULLIF(fhi, '')::numeric, pn::bigint, pu::numeric
      FROM ${bulkRows(sql, sales)}
      ON CONFLICT (chain_id, contract, bucket_start) DO UPDATE SET
        sales = t.sales + excluded.sales,
        sold_units = t.sold_units + excluded.sold_units,
        volume = t.volume + excluded.volume,
        min_unit_price = LEAST(t.min_unit_price, excluded.min_unit_price),
        max_unit_price = GREATEST(t.max_unit_price, excluded.max_unit_price),
        flagged_sales = t.flagged_sales + excluded.flagged_sales,
        flagged_units = t.flagged_units + excluded.flagged_units,
        flagged_volume = t.flagged_volume + excluded.flagged_volume,
        flagged_min_unit_price = LEAST(t.flagged_min_unit_price, excluded.flagged_min_unit_price),
        flagged_max_unit_price = GREATEST(t.flagged_max_unit_price, excluded.flagged_max_unit_price),
        unpriced_sales = t.unpriced_sales + excluded.unpriced_sales,
        unpriced_units = t.unpriced_units + excluded.unpriced_units`);
  }
  return statements;
}

/**
 * Takes back what orphaned blocks added to their buckets: the transfer deltas replayed from the
 * journal, and the sales' counts, units and volume of each class. The extreme prices of a bucket
 * that lost sales are worked out again from the sales it keeps (an extreme cannot be subtracted),
 * reading only the sales of those buckets. Buckets left without transfers are removed. Runs after
 * the orphaned sales are deleted.
 */
export async function undoBuckets(
  sql: Queryable,
  chainId: number,
  transfers: readonly TransferBucketDelta[],
  sales: readonly CountedSale[],
): Promise<void> {
  await runInOrder(bucketStatements(sql, chainId, encodeBuckets(transfers, [], -1)));
  const gone = new Map<string, SaleBucketDelta>();
  for (const s of sales) addSaleToBucket(gone, s);
  if (gone.size > 0) {
    const g = encodeSaleColumns([...gone.values()]);
    await sql`
      UPDATE collection_buckets t
      SET sales = t.sales - u.n::bigint, sold_units = t.sold_units - u.u::numeric, volume = t.volume - u.v::numeric,
          min_unit_price = m.lo, max_unit_price = m.hi,
          flagged_sales = t.flagged_sales - u.fn::bigint, flagged_units = t.flagged_units - u.fu::numeric,
          flagged_volume = t.flagged_volume - u.fv::numeric,
          flagged_min_unit_price = m.flo, flagged_max_unit_price = m.fhi,
          unpriced_sales = t.unpriced_sales - u.pn::bigint, unpriced_units = t.unpriced_units - u.pu::numeric
      FROM ${bulkRows(
        sql,
        { c: g.c, st: g.st, n: g.n, u: g.u, v: g.v, fn: g.fn, fu: g.fu, fv: g.fv, pn: g.pn, pu: g.pu },
        { joined: true },
      )}
      CROSS JOIN LATERAL (
        -- The sales the bucket keeps: after the newest block known to be older than the bucket (when
        -- the recent headers reach back that far), so that the read stays within the bucket's blocks.
        SELECT min(p) FILTER (WHERE k = 'organic') AS lo, max(p) FILTER (WHERE k = 'organic') AS hi,
               min(p) FILTER (WHERE k = 'flagged') AS flo, max(p) FILTER (WHERE k = 'flagged') AS fhi
        FROM (
          SELECT trunc(s.total_native / s.quantity) AS p, mintlens_sale_class(s.flags) AS k
          FROM sales s
          WHERE s.chain_id = ${chainId} AND s.contract = decode(u.c, 'hex') AND s.kind = 'sale'
            AND s.block_time >= to_timestamp(u.st::bigint)
            AND s.block_time < to_timestamp(u.st::bigint + ${BUCKET_SECONDS})
            AND s.block_number > coalesce((SELECT max(r.number) FROM recent_blocks r
                                           WHERE r.chain_id = ${chainId} AND r.block_time < to_timestamp(u.st::bigint)), -1)
        ) kept) m
      WHERE t.chain_id = ${chainId} AND t.contract = decode(u.c, 'hex') AND t.bucket_start = to_timestamp(u.st::bigint)`;
  }
  await sql`
    DELETE FROM collection_buckets t
    USING ${bulkRows(
      sql,
      {
        c: joinColumn(transfers.map((k) => bare(k.contract))),
        st: joinColumn(transfers.map((k) => k.start)),
      },
      { joined: true },
    )}
    WHERE t.chain_id = ${chainId} AND t.contract = decode(u.c, 'hex') AND t.bucket_start = to_timestamp(u.st::bigint)
      AND t.transfers = 0`;
}
