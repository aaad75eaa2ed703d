import type { Address } from "../core/hex.ts";
import { bare, type Queryable, toHex } from "./database.ts";
import type { Statement } from "./session.ts";

/** A trade as stored: everything a sale row and its payment rows hold, amounts in base units. */
export interface SaleRow {
  contract: Address;
  tokenId: bigint;
  blockNumber: number;
  logIndex: number;
  seq: number;
  seller: Address;
  buyer: Address;
  txHash: `0x${string}`;
  txIndex: number;
  /** Unix seconds of the block. */
  time: number;
  kind: "sale" | "mint" | "return";
  quantity: bigint;
  nativePaid: bigint;
  fungiblePaid: bigint;
  totalNative: bigint;
  totalUsd: string | undefined;
  attributedBy: string;
  market: string;
  flags: readonly string[];
  payments: readonly { token: Address; amount: bigint; nativeValue: bigint | undefined }[];
}

/** Sales in one fifteen-minute bucket of one collection; unit prices in wei, rounded down. */
export interface SaleBucketDelta {
  contract: Address;
  start: number;
  sales: number;
  units: bigint;
  volume: bigint;
  minUnitPrice: bigint;
  maxUnitPrice: bigint;
}

/**
 * The rows as JSON: a batch has far fewer sales than transfers, and JSON carries the market's
 * name and the flags, which comma-joined columns could not, with no escaping to get wrong.
 */
export function encodeSales(rows: readonly SaleRow[]): { sales: string; payments: string; count: number } {
  const sales = rows.map((r) => ({
    c: bare(r.contract),
    id: r.tokenId.toString(),
    b: r.blockNumber,
    li: r.logIndex,
    sq: r.seq,
    s: bare(r.seller),
    bu: bare(r.buyer),
    tx: bare(r.txHash),
    ti: r.txIndex,
    tm: r.time,
    k: r.kind,
    q: r.quantity.toString(),
    np: r.nativePaid.toString(),
    fp: r.fungiblePaid.toString(),
    tn: r.totalNative.toString(),
    usd: r.totalUsd ?? null,
    ab: r.attributedBy,
    m: r.market,
    f: r.flags,
  }));
  const payments = rows.flatMap((r) =>
    r.payments.map((p) => ({
      c: bare(r.contract),
      b: r.blockNumber,
      li: r.logIndex,
      sq: r.seq,
      s: bare(r.seller),
      t: bare(p.token),
      a: p.amount.toString(),
      nv: p.nativeValue === undefined ? null : p.nativeValue.toString(),
    })),
  );
  return { sales: JSON.stringify(sales), payments: JSON.stringify(payments), count: rows.length };
}

export function salesStatements(
  sql: Queryable,
  chainId: number,
  encoded: { sales: string; payments: string; count: number },
  buckets: readonly SaleBucketDelta[],
): Statement[] {
  if (encoded.count === 0) return [];
  const statements: Statement[] = [
    sql`
    INSERT INTO sales (chain_id, contract, token_id, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
                       block_time, kind, quantity, native_paid, fungible_paid, total_native, total_usd, attributed_by,
                       market, flags)
    SELECT ${chainId}, decode(c, 'hex'), id::numeric, b, li, sq, decode(s, 'hex'), decode(bu, 'hex'), decode(tx, 'hex'),
           ti, to_timestamp(tm), k, q::numeric, np::numeric, fp::numeric, tn::numeric, usd::numeric, ab, m, f
    FROM jsonb_to_recordset(${encoded.sales}::text::jsonb) AS r(c text, id text, b bigint, li integer, sq integer, s text,
      bu text, tx text, ti integer, tm bigint, k text, q text, np text, fp text, tn text, usd text, ab text, m text,
      f text[])`,
    sql`
    INSERT INTO sale_payments (chain_id, contract, block_number, log_index, seq, seller, token, amount, native_value)
    SELECT ${chainId}, decode(c, 'hex'), b, li, sq, decode(s, 'hex'), decode(t, 'hex'), a::numeric, nv::numeric
    FROM jsonb_to_recordset(${encoded.payments}::text::jsonb)
      AS r(c text, b bigint, li integer, sq integer, s text, t text, a text, nv text)`,
  ];
  if (buckets.length > 0) {
    const json = JSON.stringify(
      buckets.map((k) => ({
        c: bare(k.contract),
        st: k.start,
        n: k.sales,
        u: k.units.toString(),
        v: k.volume.toString(),
        lo: k.minUnitPrice.toString(),
        hi: k.maxUnitPrice.toString(),
      })),
    );
    statements.push(sql`
    INSERT INTO collection_buckets AS t (chain_id, contract, bucket_start, sales, sold_units, volume, min_unit_price,
                                         max_unit_price)
    SELECT ${chainId}, decode(c, 'hex'), to_timestamp(st), n, u::numeric, v::numeric, lo::numeric, hi::numeric
    FROM jsonb_to_recordset(${json}::text::jsonb) AS r(c text, st bigint, n bigint, u text, v text, lo text, hi text)
    ON CONFLICT (chain_id, contract, bucket_start) DO UPDATE SET
      sales = t.sales + excluded.sales,
      sold_units = t.sold_units + excluded.sold_units,
      volume = t.volume + excluded.volume,
      min_unit_price = LEAST(t.min_unit_price, excluded.min_unit_price),
      max_unit_price = GREATEST(t.max_unit_price, excluded.max_unit_price)`);
  }
  return statements;
}

/** The parties of each token's latest sale, keyed by contract + token id. */
export type LastSales = ReadonlyMap<string, { seller: Address; buyer: Address }>;

export function tokenKey(contract: Address, tokenId: bigint): string {
  return `${contract}:${tokenId}`;
}

/** The latest stored sale of each of `tokens`: what tells a wash pair (the buyer sold it to the seller). */
export async function lastSales(
  sql: Queryable,
  chainId: number,
  tokens: readonly { contract: Address; tokenId: bigint }[],
): Promise<Map<string, { seller: Address; buyer: Address }>> {
  const found = new Map<string, { seller: Address; buyer: Address }>();
  if (tokens.length === 0) return found;
  const rows = await sql<{ contract: Uint8Array; token_id: string; seller: Uint8Array; buyer: Uint8Array }[]>`
    SELECT DISTINCT ON (s.contract, s.token_id) s.contract, s.token_id, s.seller, s.buyer
    FROM sales s
    JOIN unnest(${tokens.map((t) => bare(t.contract))}::text[], ${tokens.map((t) => t.tokenId.toString())}::text[])
      AS u(c, id) ON s.contract = decode(u.c, 'hex') AND s.token_id = u.id::numeric
    WHERE s.chain_id = ${chainId} AND s.kind = 'sale'
    ORDER BY s.contract, s.token_id, s.block_number DESC, s.log_index DESC, s.seq DESC`;
  for (const r of rows) {
    found.set(tokenKey(toHex(r.contract) as Address, BigInt(r.token_id)), {
      seller: toHex(r.seller) as Address,
      buyer: toHex(r.buyer) as Address,
    });
  }
  return found;
}

/**
 * Takes back the sales of blocks after `ancestor`: their counts, units and volume leave their
 * buckets, and each bucket's extreme prices are worked out again from the sales it keeps (an
 * extreme cannot be subtracted).
 */
export async function rollbackSalesAfter(sql: Queryable, chainId: number, ancestor: number): Promise<void> {
  await sql`
    WITH gone AS (
      SELECT contract, date_bin('15 minutes', block_time, TIMESTAMPTZ 'epoch') AS bucket_start,
             count(*) AS n, sum(quantity) AS u, sum(total_native) AS v
      FROM sales WHERE chain_id = ${chainId} AND block_number > ${ancestor} AND kind = 'sale'
      GROUP BY 1, 2)
    UPDATE collection_buckets t SET sales = t.sales - g.n, sold_units = t.sold_units - g.u, volume = t.volume - g.v,
      min_unit_price = NULL, max_unit_price = NULL
    FROM gone g
    WHERE t.chain_id = ${chainId} AND t.contract = g.contract AND t.bucket_start = g.bucket_start`;
  await sql`DELETE FROM sale_payments WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
  await sql`DELETE FROM sales WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
  await sql`
    UPDATE collection_buckets t SET min_unit_price = m.lo, max_unit_price = m.hi
    FROM (
      SELECT s.contract, date_bin('15 minutes', s.block_time, TIMESTAMPTZ 'epoch') AS bucket_start,
             min(trunc(s.total_native / s.quantity)) AS lo, max(trunc(s.total_native / s.quantity)) AS hi
      FROM sales s
      JOIN collection_buckets b ON b.chain_id = s.chain_id AND b.contract = s.contract
        AND s.block_time >= b.bucket_start AND s.block_time < b.bucket_start + interval '15 minutes'
      WHERE s.chain_id = ${chainId} AND s.kind = 'sale' AND b.sales > 0 AND b.min_unit_price IS NULL
      GROUP BY 1, 2) m
    WHERE t.chain_id = ${chainId} AND t.contract = m.contract AND t.bucket_start = m.bucket_start`;
}

/** The latest bid event of a punk: its bidder and value (0 once withdrawn). */
export interface OpenBid {
  bidder: Address;
  value: bigint;
}

export function punkKey(contract: Address, punkIndex: bigint): string {
  return `${contract}:${punkIndex}`;
}

export function punkBidStatements(
  sql: Queryable,
  chainId: number,
  bids: readonly {
    contract: Address;
    punkIndex: bigint;
    bidder: Address;
    value: bigint;
    blockNumber: number;
    logIndex: number;
  }[],
): Statement[] {
  if (bids.length === 0) return [];
  const json = JSON.stringify(
    bids.map((b) => ({
      c: bare(b.contract),
      p: b.punkIndex.toString(),
      b: b.blockNumber,
      li: b.logIndex,
      bi: bare(b.bidder),
      v: b.value.toString(),
    })),
  );
  return [
    sql`
    INSERT INTO punk_bids (chain_id, contract, punk_index, block_number, log_index, bidder, value)
    SELECT ${chainId}, decode(c, 'hex'), p::numeric, b, li, decode(bi, 'hex'), v::numeric
    FROM jsonb_to_recordset(${json}::text::jsonb) AS r(c text, p text, b bigint, li integer, bi text, v text)`,
  ];
}

/** The latest stored bid event of each punk of `keys`. */
export async function latestPunkBids(
  sql: Queryable,
  chainId: number,
  punks: readonly { contract: Address; punkIndex: bigint }[],
): Promise<Map<string, OpenBid>> {
  const found = new Map<string, OpenBid>();
  if (punks.length === 0) return found;
  const rows = await sql<{ contract: Uint8Array; punk_index: string; bidder: Uint8Array; value: string }[]>`
    SELECT DISTINCT ON (b.contract, b.punk_index) b.contract, b.punk_index, b.bidder, b.value
    FROM punk_bids b
    JOIN unnest(${punks.map((p) => bare(p.contract))}::text[], ${punks.map((p) => p.punkIndex.toString())}::text[])
      AS u(c, p) ON b.contract = decode(u.c, 'hex') AND b.punk_index = u.p::numeric
    WHERE b.chain_id = ${chainId}
    ORDER BY b.contract, b.punk_index, b.block_number DESC, b.log_index DESC`;
  for (const r of rows) {
    found.set(punkKey(toHex(r.contract) as Address, BigInt(r.punk_index)), {
      bidder: toHex(r.bidder) as Address,
      value: BigInt(r.value),
    });
  }
  return found;
}

export async function deletePunkBidsAfter(sql: Queryable, chainId: number, ancestor: number): Promise<void> {
  await sql`DELETE FROM punk_bids WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
}
