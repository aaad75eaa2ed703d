import type { OriginalEvent, StreamEvent } from "../../src/core/stream-events.ts";

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

  /** Each trade held as `kind:totalNative`, keyed as the trades are: to compare with the store's. */
  tradeSummary(): Map<string, string> {
    return new Map(
      [...this.trades].map(([key, e]) => [key, e.kind === "sale" ? `${e.trade}:${e.totalNative}` : ""]),
    );
  }

  private change(event: OriginalEvent, sign: bigint): void {
    if (event.kind === "ownership") {
      const key = `${event.contract}:${event.tokenId}:${event.holder}`;
      const units = (this.units.get(key) ?? 0n) + sign * event.delta;
      if (units === 0n) this.units.delete(key);
      else this.units.set(key, units);
    } else if (event.kind === "sale") {
      const key = `${event.contract}:${event.tokenId}:${event.blockNumber}:${event.logIndex}:${event.seq}:${event.seller}`;
      if (sign > 0n) {
        if (this.trades.has(key)) throw new Error(`trade ${key} applied twice`);
        this.trades.set(key, event);
      } else if (!this.trades.delete(key)) throw new Error(`trade ${key} retracted but not held`);
    }
  }
}
