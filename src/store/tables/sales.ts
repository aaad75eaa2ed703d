import type { Address } from "../../core/hex.ts";
import { type SaleClass, saleClass } from "../../core/sale-classes.ts";
import type { PastSale, SaleKey } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

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

/** Sales and their payments as the columns of the statements that insert them (see `column`). */
export interface EncodedSales {
  count: number;
  sales: Record<(typeof SALE_COLUMNS)[number], string>;
  payments: Record<(typeof PAYMENT_COLUMNS)[number], string>;
}

const SALE_COLUMNS = [
  "c",
  "id",
  "b",
  "li",
  "sq",
  "s",
  "bu",
  "tx",
  "ti",
  "tm",
  "k",
  "q",
  "np",
  "fp",
  "tn",
  "usd",
  "ab",
  "m",
  "f",
] as const;
const PAYMENT_COLUMNS = ["c", "b", "li", "sq", "s", "t", "a", "nv"] as const;

/**
 * Separates a sale's flags inside its column; flags and market labels are the indexer's own words,
 * and never hold a comma. Empty labels and flags arrive as NULL or '' (see `bulkRows`): hence the
 * COALESCE and NULLIF around the columns that can be empty.
 */
const FLAG_SEPARATOR = "|";

function label(value: string): string {
  if (value.includes(",") || value.includes(FLAG_SEPARATOR)) {
    throw new RangeError(`a sale's label cannot hold "," or "${FLAG_SEPARATOR}": ${value}`);
  }
  return value;
}

export function encodeSales(rows: readonly SaleRow[]): EncodedSales {
  const paid = rows.flatMap((r) => r.payments.map((p) => ({ r, p })));
  return {
    count: rows.length,
    sales: {
      c: joinColumn(rows.map((r) => bare(r.contract))),
      id: joinColumn(rows.map((r) => r.tokenId)),
      b: joinColumn(rows.map((r) => r.blockNumber)),
      li: joinColumn(rows.map((r) => r.logIndex)),
      sq: joinColumn(rows.map((r) => r.seq)),
      s: joinColumn(rows.map((r) => bare(r.seller))),
      bu: joinColumn(rows.map((r) => bare(r.buyer))),
      tx: joinColumn(rows.map((r) => bare(r.txHash))),
      ti: joinColumn(rows.map((r) => r.txIndex)),
      tm: joinColumn(rows.map((r) => r.time)),
      k: joinColumn(rows.map((r) => r.kind)),
      q: joinColumn(rows.map((r) => r.quantity)),
      np: joinColumn(rows.map((r) => r.nativePaid)),
      fp: joinColumn(rows.map((r) => r.fungiblePaid)),
      tn: joinColumn(rows.map((r) => r.totalNative)),
      // Empty for no USD value: NULL in the row.
      usd: joinColumn(rows.map((r) => r.totalUsd ?? "")),
      ab: joinColumn(rows.map((r) => label(r.attributedBy))),
      m: joinColumn(rows.map((r) => label(r.market))),
      f: joinColumn(rows.map((r) => r.flags.map(label).join(FLAG_SEPARATOR))),
    },
    payments: {
      c: joinColumn(paid.map(({ r }) => bare(r.contract))),
      b: joinColumn(paid.map(({ r }) => r.blockNumber)),
      li: joinColumn(paid.map(({ r }) => r.logIndex)),
      sq: joinColumn(paid.map(({ r }) => r.seq)),
      s: joinColumn(paid.map(({ r }) => bare(r.seller))),
      t: joinColumn(paid.map(({ p }) => bare(p.token))),
      a: joinColumn(paid.map(({ p }) => p.amount)),
      nv: joinColumn(paid.map(({ p }) => (p.nativeValue === undefined ? "" : p.nativeValue))),
    },
  };
}

export function salesStatements(sql: Queryable, chainId: number, encoded: EncodedSales): Statement[] {
  if (encoded.count === 0) return [];
  const e = encoded.sales;
  const p = encoded.payments;
  const statements: Statement[] = [
    sql`
    INSERT INTO sales (chain_id, contract, token_id, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
                       block_time, kind, quantity, native_paid, fungible_paid, total_native, total_usd, attributed_by,
                       market, flags)
    SELECT ${chainId}, decode(c, 'hex'), id::numeric, b::bigint, li::integer, sq::integer, decode(s, 'hex'),
           decode(bu, 'hex'), decode(tx, 'hex'), ti::integer, to_timestamp(tm::bigint), k, q::numeric, np::numeric,
           fp::numeric, tn::numeric, NULLIF(usd, '')::numeric, ab, COALESCE(m, ''),
           COALESCE(string_to_array(NULLIF(f, ''), ${FLAG_SEPARATOR}), '{}')
    FROM ${bulkRows(sql, e)}`,
  ];
  if (p.c !== "") {
    statements.push(sql`
    INSERT INTO sale_payments (chain_id, contract, block_number, log_index, seq, seller, token, amount, native_value)
    SELECT ${chainId}, decode(c, 'hex'), b::bigint, li::integer, sq::integer, decode(s, 'hex'), decode(t, 'hex'),
           a::numeric, NULLIF(nv, '')::numeric
    FROM ${bulkRows(sql, p)}`);
  }
  return statements;
}

/** Each token's recent sales, oldest first, by `tokenKey`. */
export type LastSales = ReadonlyMap<string, readonly PastSale[]>;

export function tokenKey(contract: Address, tokenId: bigint): string {
  return `${contract}:${tokenId}`;
}

/** Whether the store holds any sale of the chain. */
export async function hasSales(sql: Queryable, chainId: number): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM sales WHERE chain_id = ${chainId} AND kind = 'sale') AS found`;
  return row?.found === true;
}

/**
 * The latest `count` stored sales of each of `tokens`, oldest first: what tells a wash cycle.
 * One index range per token: the ordering names the token's own columns, so that only the index
 * of each token's sales serves it, whatever the table's statistics (a hash join over every sale,
 * or a walk of a whole collection's sales by block, would cost as much as the table is large).
 */
export async function lastSales(
  sql: Queryable,
  chainId: number,
  tokens: readonly { contract: Address; tokenId: bigint }[],
  count: number,
): Promise<Map<string, PastSale[]>> {
  const found = new Map<string, PastSale[]>();
  if (tokens.length === 0) return found;
  const rows = await sql<
    {
      c: string;
      id: string;
      seller: Uint8Array;
      buyer: Uint8Array;
      time: string;
      block_number: string;
      log_index: number;
      seq: number;
    }[]
  >`
    SELECT u.c, u.id, l.seller, l.buyer, l.time, l.block_number, l.log_index, l.seq
    FROM unnest(${tokens.map((t) => bare(t.contract))}::text[], ${tokens.map((t) => t.tokenId.toString())}::text[])
      AS u(c, id)
    CROSS JOIN LATERAL (
      SELECT s.seller, s.buyer, extract(epoch FROM s.block_time)::bigint AS time, s.block_number, s.log_index, s.seq
      FROM sales s
      WHERE s.chain_id = ${chainId} AND s.kind = 'sale' AND s.contract = decode(u.c, 'hex') AND s.token_id = u.id::numeric
      ORDER BY s.chain_id DESC, s.contract DESC, s.token_id DESC, s.block_number DESC, s.log_index DESC, s.seq DESC
      LIMIT ${count}) l`;
  // Newest first as read: each token's list is built backwards.
  for (const r of rows) {
    const key = tokenKey(`0x${r.c}`, BigInt(r.id));
    const list = found.get(key) ?? [];
    list.unshift({
      seller: toHex(r.seller) as Address,
      buyer: toHex(r.buyer) as Address,
      time: Number(r.time),
      blockNumber: Number(r.block_number),
      logIndex: r.log_index,
      seq: r.seq,
    });
    found.set(key, list);
  }
  return found;
}

/** A sale's key and time as a statement returns them (`time` in Unix seconds). */
export interface SaleKeyRow {
  contract: Uint8Array;
  block_number: string;
  log_index: number;
  seq: number;
  seller: Uint8Array;
  time: string;
}

export function saleKeyOf(r: SaleKeyRow): SaleKey {
  return {
    contract: toHex(r.contract) as Address,
    blockNumber: Number(r.block_number),
    logIndex: r.log_index,
    seq: r.seq,
    seller: toHex(r.seller) as Address,
    time: Number(r.time),
  };
}

/** A stored sale of kind `sale` with its parties, transaction, price and flags. */
export interface StoredDealSale {
  contract: Address;
  blockNumber: number;
  logIndex: number;
  seq: number;
  seller: Address;
  buyer: Address;
  txHash: `0x${string}`;
  txIndex: number;
  time: number;
  totalNative: bigint;
  flags: string[];
}

/** The sales from block `fromBlock` on whose block's time is `fromTime` or later, in chain order. */
export async function salesSince(
  sql: Queryable,
  chainId: number,
  fromBlock: number,
  fromTime: number,
): Promise<StoredDealSale[]> {
  const rows = await sql<
    (SaleKeyRow & {
      buyer: Uint8Array;
      tx_hash: Uint8Array;
      tx_index: number;
      total_native: string;
      flags: string[];
    })[]
  >`
    SELECT contract, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
           extract(epoch FROM block_time)::bigint AS time, total_native, flags
    FROM sales
    WHERE chain_id = ${chainId} AND block_number >= ${fromBlock} AND block_time >= to_timestamp(${fromTime})
      AND kind = 'sale'
    ORDER BY block_number, log_index, seq, seller`;
  return rows.map((r) => ({
    ...saleKeyOf(r),
    buyer: toHex(r.buyer) as Address,
    txHash: toHex(r.tx_hash) as `0x${string}`,
    txIndex: r.tx_index,
    totalNative: BigInt(r.total_native),
    flags: r.flags,
  }));
}

/** Who deployed each of `accounts` that the store knows as a contract: the deploying transaction's sender. */
export async function deployersOf(
  sql: Queryable,
  chainId: number,
  accounts: readonly Address[],
): Promise<Map<Address, Address>> {
  const found = new Map<Address, Address>();
  if (accounts.length === 0) return found;
  const rows = await sql<{ address: Uint8Array; minter: Uint8Array }[]>`
    SELECT c.address, c.minter FROM contract_creations c
    JOIN unnest(${accounts.map(bare)}::text[]) AS u(a) ON c.address = decode(u.a, 'hex')
    WHERE c.chain_id = ${chainId}`;
  for (const r of rows) found.set(toHex(r.address) as Address, toHex(r.minter) as Address);
  return found;
}

/** A stored sale as the rollups counted it. */
export interface CountedSale {
  contract: Address;
  time: number;
  quantity: bigint;
  totalNative: bigint;
  class: SaleClass;
}

/** The sales of blocks after `ancestor`: what the rollups take back on a rollback. */
export async function salesAfter(sql: Queryable, chainId: number, ancestor: number): Promise<CountedSale[]> {
  const rows = await sql<
    { contract: Uint8Array; time: string; quantity: string; total_native: string; flags: string[] }[]
  >`
    SELECT contract, extract(epoch FROM block_time)::bigint AS time, quantity, total_native, flags FROM sales
    WHERE chain_id = ${chainId} AND block_number > ${ancestor} AND kind = 'sale'`;
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    time: Number(r.time),
    quantity: BigInt(r.quantity),
    totalNative: BigInt(r.total_native),
    class: saleClass(r.flags),
  }));
}

export async function deleteSalesAfter(sql: Queryable, chainId: number, ancestor: number): Promise<void> {
  await sql`DELETE FROM sale_payments WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
  await sql`DELETE FROM sales WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
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
  return [
    sql`
    INSERT INTO punk_bids (chain_id, contract, punk_index, block_number, log_index, bidder, value)
    SELECT ${chainId}, decode(c, 'hex'), p::numeric, b::bigint, li::integer, decode(bi, 'hex'), v::numeric
    FROM ${bulkRows(sql, {
      c: joinColumn(bids.map((b) => bare(b.contract))),
      p: joinColumn(bids.map((b) => b.punkIndex)),
      b: joinColumn(bids.map((b) => b.blockNumber)),
      li: joinColumn(bids.map((b) => b.logIndex)),
      bi: joinColumn(bids.map((b) => bare(b.bidder))),
      v: joinColumn(bids.map((b) => b.value)),
    })}`,
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
  const rows = await sql<{ c: string; p: string; bidder: Uint8Array; value: string }[]>`
    SELECT u.c, u.p, l.bidder, l.value
    FROM unnest(${punks.map((p) => bare(p.contract))}::text[], ${punks.map((p) => p.punkIndex.toString())}::text[])
      AS u(c, p)
    CROSS JOIN LATERAL (
      SELECT b.bidder, b.value FROM punk_bids b
      WHERE b.chain_id = ${chainId} AND b.contract = decode(u.c, 'hex') AND b.punk_index = u.p::numeric
      ORDER BY b.block_number DESC, b.log_index DESC
      LIMIT 1) l`;
  for (const r of rows) {
    found.set(punkKey(`0x${r.c}`, BigInt(r.p)), {
      bidder: toHex(r.bidder) as Address,
      value: BigInt(r.value),
    });
  }
  return found;
}

export async function deletePunkBidsAfter(sql: Queryable, chainId: number, ancestor: number): Promise<void> {
  await sql`DELETE FROM punk_bids WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
}
