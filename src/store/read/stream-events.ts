/**
 * Reading the live event stream: the one function every transport (a gRPC stream, Server-Sent
 * Events, webhooks) reads it with. A call is one statement: the chain's indexed head, its retention
 * record and one range of the outbox's key, `(chain, id)`, at most `SCAN_ROWS` ids long, with the
 * filters checked on the rows of the range. A consumer polling in a tight loop at the head reads the
 * key's last leaf page and little else.
 */
import type { Address } from "../../core/hex.ts";
import {
  endOfRow,
  rowOfCursor,
  type StreamEvent,
  type StreamEventKind,
  type StreamFilter,
  selectEvents,
} from "../../core/stream-events.ts";
import { bare, type Queryable } from "../pg/database.ts";
import { rowKindsOf, STREAM_COLUMNS, type StoredStreamRow, streamRowOf } from "../tables/stream-events.ts";

/** Ids a call reads at most: with narrow filters it may return no event and a next cursor further on. */
export const SCAN_ROWS = 10_000;
/** Most events a call returns. */
export const MAX_STREAM_LIMIT = 1_000;

export interface StreamQuery extends StreamFilter {
  /** Events after this cursor (0: from the oldest kept), or "now": none, only the cursor of the newest. */
  after: bigint | "now";
  /**
   * Confirmed mode: only events at least this many blocks below the indexed head, and no retractions
   * but those of a reorganisation at least that deep (see `confirmedFate`).
   */
  confirmations?: number;
  limit: number;
}

export interface StreamPage {
  events: StreamEvent[];
  /** The cursor to read on from; equal to the one given when nothing new was found. */
  next: bigint;
  /** The highest block indexed. */
  head: number;
}

/**
 * The cursor asked for cannot be read from: the events after it were pruned by retention (resume
 * from `oldestCursor`, missing what was pruned, or start again from a snapshot of the store), or it
 * is past the newest event (a cursor of another store, or of this one before a restore).
 */
export class StreamCursorError extends Error {
  override readonly name = "StreamCursorError";
  constructor(
    readonly reason: "pruned" | "ahead",
    readonly cursor: bigint,
    /** The oldest cursor a read may start after. */
    readonly oldestCursor: bigint,
    /** Events of blocks before this time may have been pruned; undefined when nothing was. */
    readonly prunedBefore: Date | undefined,
    readonly latestCursor: bigint,
  ) {
    super(
      reason === "pruned"
        ? `the events after cursor ${cursor} are no longer kept: the oldest cursor to resume from is ${oldestCursor}${prunedBefore ? ` (events before ${prunedBefore.toISOString()} are pruned)` : ""}`
        : `cursor ${cursor} is past the newest event of this store (cursor ${latestCursor})`,
    );
  }
}

const bytes = (address: Address) => Buffer.from(bare(address), "hex");

interface Bounds {
  head: string | null;
  pruned_through: string | null;
  pruned_before: Date | null;
  max_id: string | null;
}

interface Checked {
  after: bigint | undefined;
  from: bigint;
  to: bigint;
}

function check(query: StreamQuery): Checked {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_STREAM_LIMIT) {
    throw new RangeError(`limit must be 1 to ${MAX_STREAM_LIMIT}, not ${query.limit}`);
  }
  const confirmations = query.confirmations;
  if (confirmations !== undefined && (!Number.isInteger(confirmations) || confirmations < 0)) {
    throw new RangeError(`confirmations must be a whole number, not ${confirmations}`);
  }
  const after = query.after === "now" ? undefined : query.after;
  if (after !== undefined && after < 0n) throw new RangeError(`a cursor is never negative: ${after}`);
  const from = after === undefined ? 0n : rowOfCursor(after);
  return { after, from, to: from + BigInt(SCAN_ROWS) };
}

/**
 * The statement of a read, unsent: `readStreamEvents` runs it, and a test can ask PostgreSQL for its
 * plan. The head, the retention record and the newest id are one row each, by key; the rows are one
 * range of the key, at most `SCAN_ROWS` ids long, cut at `limit` rows.
 */
export function streamEventsQuery(sql: Queryable, chainId: number, query: StreamQuery) {
  const { after, from, to } = check(query);
  const confirmations = query.confirmations;
  const conditions = [];
  const rowKinds = rowKindsOf(query.kinds ?? []);
  if (rowKinds.length < rowKindsOf([]).length) conditions.push(sql`AND e.kind IN ${sql(rowKinds)}`);
  if (query.contracts?.length) conditions.push(sql`AND e.contract IN ${sql(query.contracts.map(bytes))}`);
  if (query.addresses?.length) {
    const parties = query.addresses.map(bytes);
    conditions.push(sql`AND (e.from_address IN ${sql(parties)} OR e.to_address IN ${sql(parties)})`);
  }
  // A collection as the transfers list judges it now: an operator's override, else the computed
  // verdict, else not spam.
  const spam = sql`COALESCE(
    (SELECT o.is_spam FROM spam_overrides o WHERE o.chain_id = ${chainId} AND o.contract = e.contract),
    (SELECT v.is_spam FROM spam_verdicts v WHERE v.chain_id = ${chainId} AND v.contract = e.contract),
    false)`;
  if (query.excludeSpam) conditions.push(sql`AND NOT ${spam}`);
  const filtered = conditions.length === 0 ? sql`` : sql`${conditions}`;
  // In confirmed mode the first standing row too shallow stops the read, whatever the filters say.
  const match =
    confirmations === undefined
      ? sql`${filtered}`
      : sql`AND ((true ${filtered}) OR (e.rollback_peak IS NULL AND e.retracts IS NULL
                                        AND e.block_number > h.head - ${confirmations}))`;
  const range =
    after === undefined
      ? sql``
      : sql`
      LEFT JOIN LATERAL (
        SELECT ${sql.unsafe(
          STREAM_COLUMNS.split(", ")
            .map((c) => `e.${c}`)
            .join(", "),
        )},
               -- For a trade's labels; looked up for the rows sent alone.
               CASE WHEN e.trade IS NOT NULL THEN ${spam} END AS spam
        FROM stream_events e
        WHERE e.chain_id = ${chainId} AND e.id BETWEEN ${from.toString()}::bigint AND ${to.toString()}::bigint ${match}
        ORDER BY e.id LIMIT ${query.limit}) e ON true`;
  return sql<(Bounds & Partial<StoredStreamRow>)[]>`
    SELECT h.head, st.pruned_through, st.pruned_before,
           (SELECT max(id) FROM stream_events WHERE chain_id = ${chainId}) AS max_id
           ${after === undefined ? sql`` : sql`, e.*`}
    FROM (SELECT next_block - 1 AS head FROM chains WHERE chain_id = ${chainId}) h
    LEFT JOIN stream_state st ON st.chain_id = ${chainId}
    ${range}`;
}

/**
 * The events after a cursor, filtered, with the cursor to read on from. Throws `StreamCursorError`
 * when the cursor was pruned or is past the newest event, and an error when the chain is unknown.
 */
export async function readStreamEvents(
  sql: Queryable,
  chainId: number,
  query: StreamQuery,
): Promise<StreamPage> {
  const rows = await streamEventsQuery(sql, chainId, query);
  const { after, from, to } = check(query);
  const confirmations = query.confirmations;
  const first = rows[0];
  if (!first) throw new Error(`chain ${chainId} is not indexed in this store`);
  const head = Number(first.head);
  const bounds = cursorBounds(first);
  if (after === undefined) return { events: [], next: bounds.latest, head };
  if (after < bounds.oldest) {
    throw new StreamCursorError(
      "pruned",
      after,
      bounds.oldest,
      first.pruned_before ?? undefined,
      bounds.latest,
    );
  }
  if (after > bounds.latest) {
    throw new StreamCursorError(
      "ahead",
      after,
      bounds.oldest,
      first.pruned_before ?? undefined,
      bounds.latest,
    );
  }
  const stored = rows.flatMap((r) =>
    r.id === null || r.id === undefined ? [] : [streamRowOf(r as StoredStreamRow)],
  );
  const maxId = BigInt(first.max_id ?? first.pruned_through ?? 0);
  // A full page covers up to its last row; a short one, the whole range up to the newest row.
  const coveredThrough =
    stored.length === query.limit ? (stored.at(-1)?.id ?? from) : maxId < to ? maxId : to;
  const page = selectEvents(stored, {
    after,
    filter: query,
    ...(confirmations === undefined ? {} : { confirmed: { head, confirmations } }),
    limit: query.limit,
    coveredThrough,
  });
  return { events: page.events, next: page.next, head };
}

function cursorBounds(b: Bounds): { oldest: bigint; latest: bigint } {
  const pruned = b.pruned_through === null ? undefined : BigInt(b.pruned_through);
  const oldest = pruned === undefined ? 0n : endOfRow(pruned);
  const maxId = b.max_id === null ? pruned : BigInt(b.max_id);
  // An empty outbox's newest cursor is that of a row 0 that never exists.
  return { oldest, latest: endOfRow(maxId ?? 0n) };
}

/** The newest cursor of a chain's stream: a read after it waits for events still to come. */
export async function latestCursor(sql: Queryable, chainId: number): Promise<bigint> {
  return (await readStreamEvents(sql, chainId, { after: "now", limit: 1 })).next;
}

/**
 * The oldest cursor a read may start after, and the time before which events may have been pruned
 * (undefined when none were).
 */
export async function oldestCursor(
  sql: Queryable,
  chainId: number,
): Promise<{ cursor: bigint; prunedBefore: Date | undefined }> {
  const [row] = await sql<{ pruned_through: string | null; pruned_before: Date | null }[]>`
    SELECT pruned_through, pruned_before FROM stream_state WHERE chain_id = ${chainId}`;
  if (!row || row.pruned_through === null) return { cursor: 0n, prunedBefore: undefined };
  return { cursor: endOfRow(BigInt(row.pruned_through)), prunedBefore: row.pruned_before ?? undefined };
}

export type { StreamEvent, StreamEventKind };
