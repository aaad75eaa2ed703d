/**
 * The outbox of the live event stream (migration 0028): written in each batch's transaction,
 * retracted in a rollback's, pruned by retention. What its rows mean to a consumer is
 * src/core/stream-events.ts.
 *
 * Ids: a chain's rows are numbered from 1 without gaps by the writer itself (the highest id, or
 * where retention pruned to, plus the row's rank in the statement). The chain's indexer is its only
 * writer: it holds the chain's lock, and its transactions run one after another on one connection,
 * so the ids a transaction takes follow every id committed before it, and no reader ever sees a row
 * while an earlier id is still to be committed. Cursors made of them therefore never skip an event
 * that commits later.
 */
import type { Address } from "../../core/hex.ts";
import type { StoredTrade, StreamRow } from "../../core/stream-events.ts";
import type { SaleVerdict } from "../../core/types.ts";
import { bulkRows, type JsonRows, joinColumn, jsonRows } from "../pg/bulk-rows.ts";
import { bare, type Queryable, type Sql, toHex } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";
import type { SaleRow } from "./sales.ts";
import { encodeVerdicts } from "./verdicts.ts";

/** The stored kinds of row. */
const TRANSFER = 0;
const TRADE = 1;
const VERDICT = 2;

/** The row kinds a read of these event kinds needs. */
export function rowKindsOf(kinds: readonly ("transfer" | "ownership" | "sale")[]): number[] {
  const all = kinds.length === 0;
  return [
    ...(all || kinds.includes("transfer") || kinds.includes("ownership") ? [TRANSFER] : []),
    // A verdict is sent with the trades it changes.
    ...(all || kinds.includes("sale") ? [TRADE, VERDICT] : []),
  ];
}

/**
 * The verdicts a batch gave, each with the key of the sale it names (its collection included, so
 * that the sale is one probe of its key) and the time of the block that gave it: where the
 * verdicts' rows go. Those the store recorded (a rule the sale did not carry yet) get a row.
 */
export interface EncodedVerdictRows {
  count: number;
  columns: Record<"c" | "b" | "li" | "sq" | "s" | "r" | "vb" | "vt", string>;
}

export function encodeVerdictRows(
  verdicts: readonly SaleVerdict[],
  timeOf: (block: number) => number,
): EncodedVerdictRows {
  const { count, columns } = encodeVerdicts(verdicts);
  return {
    count,
    columns: {
      ...columns,
      c: joinColumn(verdicts.map((v) => bare(v.sale.contract))),
      vt: joinColumn(verdicts.map((v) => timeOf(v.blockNumber))),
    },
  };
}

/** A batch's trades as the columns of the outbox's insert (see `bulkRows`). */
export interface EncodedStreamTrades {
  count: number;
  columns: Record<string, string | JsonRows>;
}

/**
 * The outbox rows of a batch's trades, with each trade's content as JSON. A sale is bundled when its
 * buyer got other NFTs in sales of the same transaction: the transfers list's rule, told here from
 * the batch's own trades (a transaction is never split between batches).
 */
export function encodeStreamTrades(rows: readonly SaleRow[]): EncodedStreamTrades {
  const positions = new Map<string, Set<string>>();
  for (const r of rows) {
    if (r.kind !== "sale") continue;
    const key = `${r.txHash}:${r.buyer}`;
    const set = positions.get(key) ?? new Set<string>();
    set.add(`${r.logIndex}:${r.seq}`);
    positions.set(key, set);
  }
  const trades = rows.map((r): StoredTrade => {
    return {
      kind: r.kind,
      market: r.market,
      flags: [...r.flags],
      bundled: r.kind === "sale" && (positions.get(`${r.txHash}:${r.buyer}`)?.size ?? 0) > 1,
      attributedBy: r.attributedBy,
      nativePaid: r.nativePaid.toString(),
      fungiblePaid: r.fungiblePaid.toString(),
      totalNative: r.totalNative.toString(),
      totalUsd: r.totalUsd ?? null,
      payments: [...r.payments]
        .sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0))
        .map((p) => ({
          token: p.token,
          amount: p.amount.toString(),
          nativeValue: p.nativeValue === undefined ? null : p.nativeValue.toString(),
        })),
    };
  });
  return {
    count: rows.length,
    columns: {
      c: joinColumn(rows.map((r) => bare(r.contract))),
      id: joinColumn(rows.map((r) => r.tokenId)),
      b: joinColumn(rows.map((r) => r.blockNumber)),
      li: joinColumn(rows.map((r) => r.logIndex)),
      sq: joinColumn(rows.map((r) => r.seq)),
      s: joinColumn(rows.map((r) => bare(r.seller))),
      bu: joinColumn(rows.map((r) => bare(r.buyer))),
      q: joinColumn(rows.map((r) => r.quantity)),
      tx: joinColumn(rows.map((r) => bare(r.txHash))),
      tm: joinColumn(rows.map((r) => r.time)),
      j: jsonRows(trades),
    },
  };
}

/** The next id of a chain's outbox, as a subquery: after the highest kept, or where retention pruned to. */
function idBase(sql: Queryable, chainId: number) {
  return sql`
    SELECT coalesce(
      (SELECT id FROM stream_events WHERE chain_id = ${chainId} ORDER BY id DESC LIMIT 1),
      (SELECT pruned_through FROM stream_state WHERE chain_id = ${chainId}),
      0) AS id`;
}

/**
 * A row per verdict the batch recorded (`sale_verdicts`, written earlier in its transaction), with
 * the trade it names as it stands with the rule: its flags are the stored ones but for the rules of
 * verdicts after this one (the batch's own later ones), so the row is the same whichever batches
 * the blocks fell into. The content is `encodeStreamTrades`' for a trade read back from the store,
 * each part found by a key: the verdict and the sale by theirs, its payments by the sale's, and
 * the other sales of a bundle through the transfers to its buyer in its block.
 */
function verdictRows(sql: Queryable, chainId: number, verdicts: EncodedVerdictRows) {
  return sql`
      UNION ALL
      SELECT v.verdict_block, s.log_index, s.seq, ${VERDICT}::smallint, s.contract, s.token_id, s.seller, s.buyer,
             s.quantity, s.tx_hash, to_timestamp(c.vt::bigint), NULL,
             json_build_object(
               'kind', s.kind,
               'market', s.market,
               'flags', to_json(ARRAY(
                 SELECT f FROM unnest(s.flags) WITH ORDINALITY AS x(f, o)
                 WHERE f <> ALL (ARRAY(
                   SELECT w.rule FROM sale_verdicts w
                   WHERE w.chain_id = ${chainId} AND w.block_number = v.block_number AND w.log_index = v.log_index
                     AND w.seq = v.seq AND w.seller = v.seller AND (w.verdict_block, w.rule) > (v.verdict_block, v.rule)))
                 ORDER BY o)),
               'bundled', s.kind = 'sale' AND EXISTS (
                 SELECT 1 FROM nft_transfers t
                 JOIN sales o ON o.chain_id = ${chainId} AND o.contract = t.contract AND o.block_number = t.block_number
                   AND o.log_index = t.log_index AND o.seq = t.seq
                 WHERE t.chain_id = ${chainId} AND t.to_address = s.buyer AND t.block_number = s.block_number
                   AND t.tx_hash = s.tx_hash AND (t.log_index, t.seq) <> (s.log_index, s.seq)
                   AND o.buyer = s.buyer AND o.kind = 'sale'),
               'attributedBy', s.attributed_by,
               'nativePaid', s.native_paid::text,
               'fungiblePaid', s.fungible_paid::text,
               'totalNative', s.total_native::text,
               'totalUsd', s.total_usd::text,
               'payments', coalesce((
                 SELECT json_agg(json_build_object(
                          'token', '0x' || encode(p.token, 'hex'), 'amount', p.amount::text,
                          'nativeValue', p.native_value::text) ORDER BY p.token)
                 FROM sale_payments p
                 WHERE p.chain_id = ${chainId} AND p.contract = s.contract AND p.block_number = s.block_number
                   AND p.log_index = s.log_index AND p.seq = s.seq AND p.seller = s.seller), '[]'::json),
               'verdict', json_build_object(
                 'rule', v.rule, 'saleBlock', s.block_number, 'saleTime', extract(epoch FROM s.block_time)::bigint))
      FROM ${bulkRows(sql, verdicts.columns, { joined: true, alias: "c" })}
      JOIN sale_verdicts v ON v.chain_id = ${chainId} AND v.block_number = c.b::bigint AND v.log_index = c.li::integer
        AND v.seq = c.sq::integer AND v.seller = decode(c.s, 'hex') AND v.rule = c.r AND v.verdict_block = c.vb::bigint
      JOIN sales s ON s.chain_id = ${chainId} AND s.contract = decode(c.c, 'hex') AND s.block_number = v.block_number
        AND s.log_index = v.log_index AND s.seq = v.seq AND s.seller = v.seller`;
}

/**
 * Appends the outbox rows of a batch: its transfers, read back from `nft_transfers` as the batch's
 * transaction has just written them (one range of their key, and nothing to encode or send again),
 * its trades, and the verdicts it gave on trades already stored; in chain order, a transfer before
 * the trades it delivered, a block's verdicts after its other rows.
 */
export function streamStatements(
  sql: Queryable,
  chainId: number,
  blocks: { from: number; to: number },
  transfers: number,
  trades: EncodedStreamTrades,
  verdicts: EncodedVerdictRows = encodeVerdictRows([], () => 0),
): Statement[] {
  if (transfers === 0 && trades.count === 0 && verdicts.count === 0) return [];
  const tradeRows =
    trades.count === 0
      ? sql``
      : sql`
      UNION ALL
      SELECT b::bigint, li::integer, sq::integer, ${TRADE}::smallint, decode(c, 'hex'), id::numeric,
             decode(s, 'hex'), decode(bu, 'hex'), q::numeric, decode(tx, 'hex'), to_timestamp(tm::bigint), NULL,
             j::json
      FROM ${bulkRows(sql, trades.columns)}`;
  return [
    sql`
    INSERT INTO stream_events (chain_id, id, block_number, log_index, seq, kind, contract, token_id, from_address,
                               to_address, amount, tx_hash, block_time, standard, trade)
    SELECT ${chainId},
           base.id + row_number() OVER (
             ORDER BY e.block_number, e.kind = ${VERDICT}, e.log_index, e.seq, e.kind, e.from_address, e.trade->'verdict'->>'rule'),
           e.*
    FROM (
      SELECT block_number, log_index, seq, ${TRANSFER}::smallint AS kind, contract, token_id, from_address, to_address,
             amount, tx_hash, block_time, standard, NULL::json AS trade
      FROM nft_transfers
      WHERE chain_id = ${chainId} AND block_number BETWEEN ${blocks.from} AND ${blocks.to}
      ${tradeRows}
      ${verdicts.count === 0 ? sql`` : verdictRows(sql, chainId, verdicts)}
    ) e CROSS JOIN (${idBase(sql, chainId)}) base`,
  ];
}

/**
 * Takes back every standing row of the blocks after `ancestor`, inside the rollback's transaction
 * and before the checkpoint moves: each is marked with the rollback's peak and copied as a
 * retraction, newest first, after every row there is. Returns the retractions written.
 *
 * Only the newest rows are read: a standing row written at block b was written once every row above
 * b had been taken back, so the standing rows of blocks after `ancestor` all come after the newest
 * row of a block at or below it (retracted or not), and the walk back along the key stops there.
 */
export async function retractAfter(tx: Queryable, chainId: number, ancestor: number): Promise<number> {
  // Found first, and given to the next statement as a constant: the walk back is then one range of
  // the key, whatever the planner would make of a join.
  const [floor] = await tx<{ id: string }[]>`
    SELECT id FROM stream_events
    WHERE chain_id = ${chainId} AND block_number <= ${ancestor} AND retracts IS NULL
    ORDER BY id DESC LIMIT 1`;
  const [row] = await tx<{ retracted: string }[]>`
    WITH peak AS (
      INSERT INTO stream_state (chain_id, peak_block)
      SELECT ${chainId}, next_block - 1 FROM chains WHERE chain_id = ${chainId}
      ON CONFLICT (chain_id) DO UPDATE SET peak_block = greatest(stream_state.peak_block, excluded.peak_block)
      RETURNING peak_block),
    orphaned AS (
      UPDATE stream_events e SET rollback_peak = peak.peak_block
      FROM peak
      WHERE e.chain_id = ${chainId} AND e.id > ${floor?.id ?? "0"}::bigint AND e.block_number > ${ancestor}
        AND e.retracts IS NULL AND e.rollback_peak IS NULL
      RETURNING e.*),
    written AS (
      INSERT INTO stream_events (chain_id, id, block_number, log_index, seq, kind, contract, token_id, from_address,
                                 to_address, amount, tx_hash, block_time, standard, trade, retracts, rollback_peak)
      SELECT ${chainId}, base.id + row_number() OVER (ORDER BY o.id DESC), o.block_number, o.log_index, o.seq, o.kind,
             o.contract, o.token_id, o.from_address, o.to_address, o.amount, o.tx_hash, o.block_time, o.standard,
             o.trade, o.id, o.rollback_peak
      FROM orphaned o CROSS JOIN (${idBase(tx, chainId)}) base
      RETURNING 1)
    SELECT count(*) AS retracted FROM written`;
  return Number(row?.retracted ?? 0);
}

/** The outbox's columns as a read selects them (`streamRowOf` turns them into a row). */
export const STREAM_COLUMNS =
  "id, block_number, log_index, seq, contract, token_id, from_address, to_address, amount, tx_hash, block_time, standard, trade, retracts, rollback_peak";

export interface StoredStreamRow {
  id: string;
  block_number: string;
  log_index: number;
  seq: number;
  contract: Uint8Array;
  token_id: string;
  from_address: Uint8Array;
  to_address: Uint8Array;
  amount: string;
  tx_hash: Uint8Array;
  block_time: Date;
  standard: string | null;
  trade: StoredTrade | null;
  retracts: string | null;
  rollback_peak: string | null;
  /** A trade row's collection is judged spam, as a read finds it; absent where not read. */
  spam?: boolean | null;
}

export function streamRowOf(r: StoredStreamRow): StreamRow {
  return {
    id: BigInt(r.id),
    blockNumber: Number(r.block_number),
    logIndex: r.log_index,
    seq: r.seq,
    contract: toHex(r.contract) as Address,
    tokenId: BigInt(r.token_id),
    from: toHex(r.from_address) as Address,
    to: toHex(r.to_address) as Address,
    amount: BigInt(r.amount),
    txHash: toHex(r.tx_hash),
    blockTime: r.block_time,
    standard: r.standard ?? undefined,
    trade: r.trade ?? undefined,
    retracts: r.retracts === null ? undefined : BigInt(r.retracts),
    rollbackPeak: r.rollback_peak === null ? undefined : Number(r.rollback_peak),
    ...(r.spam ? { spam: true } : {}),
  };
}

/**
 * Prunes the oldest rows of a chain's outbox, at most `maxRows`, up to the first row of a block at or
 * after `before`, and records how far it pruned (in the same transaction, so a read sees both or
 * neither). Rows go in id order only: a cursor is then pruned exactly when it is below the record.
 */
export async function pruneStream(
  sql: Sql,
  chainId: number,
  before: Date,
  maxRows: number,
): Promise<{ pruned: number; more: boolean }> {
  return sql.begin(async (tx) => {
    const oldest = await tx<{ id: string; young: boolean }[]>`
      SELECT id, block_time >= ${before} AS young FROM stream_events
      WHERE chain_id = ${chainId} ORDER BY id LIMIT ${maxRows}`;
    const firstYoung = oldest.findIndex((r) => r.young);
    const doomed = firstYoung < 0 ? oldest : oldest.slice(0, firstYoung);
    const last = doomed.at(-1);
    if (!last) return { pruned: 0, more: false };
    await tx`DELETE FROM stream_events WHERE chain_id = ${chainId} AND id <= ${last.id}`;
    await tx`
      INSERT INTO stream_state (chain_id, pruned_through, pruned_before) VALUES (${chainId}, ${last.id}, ${before})
      ON CONFLICT (chain_id) DO UPDATE SET pruned_through = excluded.pruned_through, pruned_before = excluded.pruned_before`;
    return { pruned: doomed.length, more: firstYoung < 0 && oldest.length === maxRows };
  });
}
