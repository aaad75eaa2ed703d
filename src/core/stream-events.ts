/**
 * The live event stream as consumers see it, made from the outbox's stored rows (migration 0028,
 * src/store/tables/stream-events.ts) by pure functions: cursors, the events of a row, filters and
 * the rules of confirmed reads.
 *
 * The outbox stores one row per NFT transfer and one per trade (a sale, a paid mint or a return). A
 * transfer's row gives up to three events: the transfer, then the sender's units going down and the
 * recipient's going up (none for a burn address, which holds nothing, nor for a transfer to oneself).
 * A wash rule that a later block makes fire on a stored trade gives a verdict row, at the verdict's
 * block, after the block's other rows: one verdict event. A rollback stores one retraction row per
 * row of the orphaned blocks, a copy of it that names the row it takes back: it gives one
 * retraction per event of that row.
 *
 * A row's id counts the chain's rows from 1 without gaps, in commit order. An event's cursor is its
 * row id times 4 plus its position in the row (0 the transfer or the trade, 1 the sender's side,
 * 2 the recipient's), so cursors increase in commit order too, and a read can stop inside a row.
 */

import { isBurnAddress } from "./burn.ts";
import type { Address, Hex } from "./hex.ts";
import { type TradeFacts, type TransferLabel, transferLabels } from "./transfer-labels.ts";

/** The kinds of event a consumer can ask for. */
export const STREAM_EVENT_KINDS = ["transfer", "sale", "ownership"] as const;
export type StreamEventKind = (typeof STREAM_EVENT_KINDS)[number];

/** Events per row: the cursor of position `p` in row `id` is `id * 4 + p`. */
const SLOTS = 4n;

/** What every event says of where it happened. */
export interface EventPlace {
  cursor: bigint;
  blockNumber: number;
  logIndex: number;
  /** Position inside a multi-token event (see `NftTransfer.seq`). */
  seq: number;
  txHash: Hex;
  blockTime: Date;
  contract: Address;
  tokenId: bigint;
}

export interface TransferEvent extends EventPlace {
  kind: "transfer";
  from: Address;
  to: Address;
  amount: bigint;
  /** The event standard the transfer was decoded from (`erc721`, `erc1155`, `legacy`, `punks`, `erc2309`). */
  standard: string;
}

/** A holder's units of a token going down (`delta` < 0) or up (`delta` > 0). */
export interface OwnershipEvent extends EventPlace {
  kind: "ownership";
  holder: Address;
  delta: bigint;
}

/** A payment of a trade, in base units of `token`, and its value in the native coin when known. */
export interface TradePayment {
  token: Address;
  amount: bigint;
  nativeValue: bigint | undefined;
}

/** A trade: a sale, a paid mint or a return, priced as the transfers list prices it. */
export interface SaleEvent extends EventPlace {
  kind: "sale";
  trade: "sale" | "mint" | "return";
  seller: Address;
  buyer: Address;
  quantity: bigint;
  /** Wei paid in the native coin, and the ERC-20 part converted to wei at the block's rates. */
  nativePaid: bigint;
  fungiblePaid: bigint;
  totalNative: bigint;
  /** Decimal dollars, absent when the chain had no dollar rate. */
  totalUsd: string | undefined;
  attributedBy: string;
  /** The market whose event the transaction logged; "" when none. */
  market: string;
  flags: readonly string[];
  /** The buyer got other NFTs in sales of the same transaction. */
  bundled: boolean;
  payments: readonly TradePayment[];
  labels: readonly TransferLabel[];
}

/** A trade as a verdict on it gives it: its sale event without a cursor of its own. */
export type SaleContent = Omit<SaleEvent, "cursor">;

/**
 * A wash rule that fired on a trade already sent, when a later block completed the pattern: the
 * trade's flags gain `rule`, and `sale` is the trade with it. `blockNumber` and `blockTime` are the
 * verdict's block: a rollback to before it takes the verdict back.
 */
export interface VerdictEvent {
  kind: "verdict";
  cursor: bigint;
  blockNumber: number;
  blockTime: Date;
  rule: string;
  sale: SaleContent;
}

/** An event as it was first sent. */
export type OriginalEvent = TransferEvent | OwnershipEvent | SaleEvent | VerdictEvent;

/**
 * An event of blocks a reorganisation took away, taken back: `retracted` is the event as it was
 * sent, with its own cursor. A consumer that applied it undoes it; one that never did ignores this.
 */
export interface RetractionEvent {
  kind: "retraction";
  cursor: bigint;
  retracted: OriginalEvent;
}

export type StreamEvent = OriginalEvent | RetractionEvent;

/** A trade's content as the outbox stores it (JSON: amounts as decimal strings). */
export interface StoredTrade {
  kind: "sale" | "mint" | "return";
  market: string;
  flags: string[];
  bundled: boolean;
  attributedBy: string;
  nativePaid: string;
  fungiblePaid: string;
  totalNative: string;
  totalUsd: string | null;
  payments: { token: Address; amount: string; nativeValue: string | null }[];
  /**
   * On a verdict's row: the rule, and the block and time (unix seconds) of the trade it names; the
   * row's own block and time are the verdict's, and `flags` the trade's with the rule.
   */
  verdict?: { rule: string; saleBlock: number; saleTime: number };
}

/** One row of the outbox. */
export interface StreamRow {
  id: bigint;
  blockNumber: number;
  logIndex: number;
  seq: number;
  contract: Address;
  tokenId: bigint;
  /** The sender, or a trade's seller. */
  from: Address;
  /** The recipient, or a trade's buyer. */
  to: Address;
  /** Units moved, or a trade's quantity. */
  amount: bigint;
  txHash: Hex;
  blockTime: Date;
  /** A transfer's standard; undefined for a trade. */
  standard: string | undefined;
  /** A trade's content; undefined for a transfer. */
  trade: StoredTrade | undefined;
  /** A retraction row: the id of the row it takes back. */
  retracts: bigint | undefined;
  /**
   * The highest block the chain had been indexed to when this row's rollback happened: on a row that
   * was taken back, and on a retraction. Undefined on a row still standing.
   */
  rollbackPeak: number | undefined;
  /**
   * A trade's collection is judged spam when the row is read (not when it was written: a verdict
   * comes later), so its events carry `LABEL_SPAM` as the transfers list's rows do.
   */
  spam?: boolean;
}

export function cursorOf(id: bigint, position: number): bigint {
  return id * SLOTS + BigInt(position);
}

/** The row a cursor points into. */
export function rowOfCursor(cursor: bigint): bigint {
  return cursor / SLOTS;
}

/** The cursor after every event of row `id`. */
export function endOfRow(id: bigint): bigint {
  return id * SLOTS + SLOTS - 1n;
}

/** The events a row stood for when it was written, with the cursors it gave them (row `id`). */
export function originalEvents(row: StreamRow, id: bigint = row.id): OriginalEvent[] {
  const place = (position: number): EventPlace => ({
    cursor: cursorOf(id, position),
    blockNumber: row.blockNumber,
    logIndex: row.logIndex,
    seq: row.seq,
    txHash: row.txHash,
    blockTime: row.blockTime,
    contract: row.contract,
    tokenId: row.tokenId,
  });
  const trade = row.trade;
  if (trade?.verdict) {
    const { cursor: _, ...sale } = saleEvent(
      {
        ...place(0),
        blockNumber: trade.verdict.saleBlock,
        blockTime: new Date(trade.verdict.saleTime * 1000),
      },
      row,
      trade,
    );
    return [
      {
        kind: "verdict",
        cursor: cursorOf(id, 0),
        blockNumber: row.blockNumber,
        blockTime: row.blockTime,
        rule: trade.verdict.rule,
        sale,
      },
    ];
  }
  if (trade) return [saleEvent(place(0), row, trade)];
  const events: OriginalEvent[] = [
    {
      ...place(0),
      kind: "transfer",
      from: row.from,
      to: row.to,
      amount: row.amount,
      standard: row.standard ?? "",
    },
  ];
  // A transfer to oneself changes no one's units.
  if (row.from === row.to) return events;
  if (!isBurnAddress(row.from)) {
    events.push({ ...place(1), kind: "ownership", holder: row.from, delta: -row.amount });
  }
  if (!isBurnAddress(row.to)) {
    events.push({ ...place(2), kind: "ownership", holder: row.to, delta: row.amount });
  }
  return events;
}

function saleEvent(place: EventPlace, row: StreamRow, trade: StoredTrade): SaleEvent {
  const facts: TradeFacts = {
    kind: trade.kind,
    market: trade.market,
    flags: trade.flags,
    bundled: trade.bundled,
  };
  return {
    ...place,
    kind: "sale",
    trade: trade.kind,
    seller: row.from,
    buyer: row.to,
    quantity: row.amount,
    nativePaid: BigInt(trade.nativePaid),
    fungiblePaid: BigInt(trade.fungiblePaid),
    totalNative: BigInt(trade.totalNative),
    totalUsd: trade.totalUsd ?? undefined,
    attributedBy: trade.attributedBy,
    market: trade.market,
    flags: trade.flags,
    bundled: trade.bundled,
    payments: trade.payments.map((p) => ({
      token: p.token,
      amount: BigInt(p.amount),
      nativeValue: p.nativeValue === null ? undefined : BigInt(p.nativeValue),
    })),
    labels: transferLabels({ from: row.from, to: row.to, trades: [facts], spam: row.spam === true }),
  };
}

/** The events of a row: its own, or for a retraction row the retraction of each event of the row it copies. */
export function rowEvents(row: StreamRow): StreamEvent[] {
  if (row.retracts === undefined) return originalEvents(row);
  const retractions: StreamEvent[] = [];
  for (const retracted of originalEvents(row, row.retracts)) {
    const position = Number(retracted.cursor - row.retracts * SLOTS);
    retractions.push({ kind: "retraction", cursor: cursorOf(row.id, position), retracted });
  }
  return retractions;
}

/** What a consumer asks for; an empty or absent list asks for everything. */
export interface StreamFilter {
  kinds?: readonly StreamEventKind[];
  contracts?: readonly Address[];
  /** Senders, recipients, holders, buyers and sellers. */
  addresses?: readonly Address[];
  /**
   * Leave out the events of collections judged spam when read. Applied by the store's read, which
   * knows the verdicts; `matches` does not see it.
   */
  excludeSpam?: boolean;
}

/** Whether an event is asked for; a retraction is when the event it takes back is. */
export function matches(event: StreamEvent, filter: StreamFilter): boolean {
  if (event.kind === "retraction") return matches(event.retracted, filter);
  // A verdict is asked for with the trades it changes.
  if (event.kind === "verdict") return matches({ ...event.sale, cursor: event.cursor }, filter);
  if (filter.kinds?.length && !filter.kinds.includes(event.kind)) return false;
  if (filter.contracts?.length && !filter.contracts.includes(event.contract)) return false;
  if (filter.addresses?.length) {
    const parties =
      event.kind === "transfer"
        ? [event.from, event.to]
        : event.kind === "ownership"
          ? [event.holder]
          : [event.seller, event.buyer];
    if (!parties.some((p) => filter.addresses?.includes(p))) return false;
  }
  return true;
}

/**
 * In confirmed mode, what becomes of a row: `send` its events, `skip` them for good, or `wait`: the
 * row stands less than `confirmations` blocks below the indexed head, and so does every standing
 * row after it (standing rows are in block order: a row written at block b was written once every
 * standing row above b had been taken back).
 *
 * A row taken back, and its retraction, are sent only when the rollback reached `confirmations`
 * blocks or more below the highest block indexed until then (`rollbackPeak`): that is exactly when a
 * confirmed consumer may have been sent the row while it stood, since it is sent a row only once it
 * stands that deep. A consumer gets both or neither.
 */
export function confirmedFate(row: StreamRow, head: number, confirmations: number): "send" | "skip" | "wait" {
  if (row.rollbackPeak !== undefined) {
    return row.blockNumber <= row.rollbackPeak - confirmations ? "send" : "skip";
  }
  return row.blockNumber <= head - confirmations ? "send" : "wait";
}

export interface SelectOptions {
  /** Events with cursors after this one. */
  after: bigint;
  filter: StreamFilter;
  /** Confirmed mode: the indexed head and the depth below it. */
  confirmed?: { head: number; confirmations: number };
  limit: number;
  /**
   * The last row id the rows given cover: every row up to it that the filter could ask for is among
   * them. The next cursor moves past it when nothing stops the read before.
   */
  coveredThrough: bigint;
}

/**
 * The events of rows (in id order) after a cursor, filtered, at most `limit`, and the cursor to read
 * on from: after the last event given when the limit cut the read, before the first row to wait for
 * in confirmed mode, else at the end of what the rows cover.
 */
export function selectEvents(
  rows: readonly StreamRow[],
  options: SelectOptions,
): {
  events: StreamEvent[];
  next: bigint;
} {
  const { after, filter, confirmed, limit } = options;
  const events: StreamEvent[] = [];
  for (const row of rows) {
    if (confirmed) {
      const fate = confirmedFate(row, confirmed.head, confirmed.confirmations);
      if (fate === "wait") return { events, next: max(after, cursorOf(row.id, 0) - 1n) };
      if (fate === "skip") continue;
    }
    for (const event of rowEvents(row)) {
      if (event.cursor <= after || !matches(event, filter)) continue;
      if (events.length === limit) return { events, next: (events.at(-1) as StreamEvent).cursor };
      events.push(event);
    }
  }
  return { events, next: max(after, endOfRow(options.coveredThrough)) };
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
