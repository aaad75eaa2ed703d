import { isDeepStrictEqual } from "node:util";
import type { Address } from "../../src/core/hex.ts";
import type { OriginalEvent, SaleEvent, StreamEvent } from "../../src/core/stream-events.ts";
import type { Queryable } from "../../src/store/pg/database.ts";
import { readStreamEvents, type StreamQuery } from "../../src/store/read/stream-events.ts";

/**
 * A consumer of the live event stream as docs/stream.md asks one to be: it applies events in cursor
 * order, and undoes an event on its retraction if it had applied it (and ignores the retraction
 * otherwise). It holds each holder's units of each token and each trade.
 */
export class StreamConsumer {
  /** Units by `contract:tokenId:holder`, zero entries removed. */
  readonly units = new Map<string, bigint>();
  /** Trades by `contract:tokenId:block:logIndex:seq:seller`. */
  readonly trades = new Map<string, OriginalEvent>();
  readonly applied = new Map<bigint, OriginalEvent>();
  /** Every event seen, in the order seen. */
  readonly seen: StreamEvent[] = [];
  /** Retractions of events this consumer never applied. */
  ignored = 0;
  last = -1n;

  apply(events: readonly StreamEvent[]): void {
    for (const event of events) {
      if (event.cursor <= this.last)
        throw new Error(`cursor ${event.cursor} after ${this.last}: out of order`);
      this.last = event.cursor;
      this.seen.push(event);
      if (event.kind === "retraction") {
        if (!this.applied.has(event.retracted.cursor)) {
          this.ignored++;
          continue;
        }
        this.applied.delete(event.retracted.cursor);
        this.change(event.retracted, -1n);
      } else {
        if (this.applied.has(event.cursor)) throw new Error(`cursor ${event.cursor} applied twice`);
        this.applied.set(event.cursor, event);
        this.change(event, 1n);
      }
    }
  }

  /** Each trade held as `kind:totalNative:flags`, keyed as the trades are: to compare with the store's. */
  tradeSummary(): Map<string, string> {
    return new Map(
      [...this.trades].map(([key, e]) => [
        key,
        e.kind === "sale" ? `${e.trade}:${e.totalNative}:${e.flags.join(",")}` : "",
      ]),
    );
  }

  private change(event: OriginalEvent, sign: bigint): void {
    if (event.kind === "verdict") {
      const key = tradeKey(event.sale);
      const held = this.trades.get(key);
      if (held?.kind !== "sale") throw new Error(`verdict on trade ${key}, which is not held`);
      if (sign > 0n) {
        if (held.flags.includes(event.rule)) throw new Error(`verdict ${event.rule} on ${key} given twice`);
        // The verdict's trade is the held one but for its flags and labels.
        const { flags: _f, labels: _l, ...rest } = held;
        const { flags: _vf, labels: _vl, ...given } = event.sale;
        if (!isDeepStrictEqual(rest, { ...given, cursor: held.cursor })) {
          throw new Error(`verdict on ${key} gives another trade`);
        }
        this.trades.set(key, { ...event.sale, cursor: held.cursor });
      } else {
        if (!held.flags.includes(event.rule)) throw new Error(`verdict ${event.rule} retracted but not held`);
        this.trades.set(key, { ...held, flags: held.flags.filter((f) => f !== event.rule) });
      }
      return;
    }
    if (event.kind === "ownership") {
      const key = `${event.contract}:${event.tokenId}:${event.holder}`;
      const units = (this.units.get(key) ?? 0n) + sign * event.delta;
      if (units === 0n) this.units.delete(key);
      else this.units.set(key, units);
    } else if (event.kind === "sale") {
      const key = tradeKey(event);
      if (sign > 0n) {
        if (this.trades.has(key)) throw new Error(`trade ${key} applied twice`);
        this.trades.set(key, event);
      } else if (!this.trades.delete(key)) throw new Error(`trade ${key} retracted but not held`);
    }
  }
}

function tradeKey(sale: Omit<SaleEvent, "cursor">): string {
  return `${sale.contract}:${sale.tokenId}:${sale.blockNumber}:${sale.logIndex}:${sale.seq}:${sale.seller}`;
}

/** The collection an event is about: a retraction's is that of the event it takes back, a verdict's its trade's. */
export function contractOf(event: StreamEvent): Address {
  if (event.kind === "retraction") return contractOf(event.retracted);
  return event.kind === "verdict" ? event.sale.contract : event.contract;
}

/** Every event a chain's stream holds after `from` with the query's filters, read page by page as a consumer would. */
export async function readWholeStream(
  sql: Queryable,
  chainId: number,
  query: Omit<StreamQuery, "after" | "limit"> & { limit?: number } = {},
  from = 0n,
): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  let cursor = from;
  // Bounded: a stream whose cursor never stops moving fails the test rather than hanging it.
  for (let calls = 0; calls < 10_000; calls++) {
    const page = await readStreamEvents(sql, chainId, { limit: 1000, ...query, after: cursor });
    events.push(...page.events);
    if (page.next === cursor) return events;
    cursor = page.next;
  }
  throw new Error("the stream did not end");
}
