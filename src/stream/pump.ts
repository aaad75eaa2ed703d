/**
 * One open stream, whatever carries it: reads the consumer's pages through the chain's follower
 * when its transport has room, hands them to the transport, sends a heartbeat when nothing was sent
 * for a while, and ends when the consumer leaves, when the transport stays full too long (a
 * consumer that stopped reading), on shutdown, or when the store fails. The transports (gRPC, SSE)
 * only frame what it hands them.
 */
import type { StreamFilter } from "../core/stream-events.ts";
import type { StreamPage } from "../store/read/stream-events.ts";
import type { StreamFollower } from "./follower.ts";

/** Where a transport sends a stream's messages. */
export interface StreamSink {
  /**
   * Sends a page (events, or none: a heartbeat) and returns the bytes it wrote and whether the
   * transport has room for more (false: its buffer is full; what was sent is queued all the same).
   */
  send(page: StreamPage): { bytes: number; room: boolean };
  /** Resolves when the transport's buffer has room again. */
  drained(): Promise<void>;
}

/** What a stream's events cost the caller's key: waited for before a batch, charged after it. */
export interface StreamPayer {
  /** Resolves once the key may send a batch (a point taken), or when `signal` aborts. */
  acquire(signal: AbortSignal): Promise<void>;
  /** Charges the key for a batch of `bytes`, beyond the point `acquire` took. */
  charge(bytes: number): void;
}

export interface StreamRun {
  follower: StreamFollower;
  filter: StreamFilter;
  /** Confirmed mode's depth; undefined: events at the head, with retractions. */
  confirmations?: number | undefined;
  /** The first page, read before the stream opened (so a bad cursor is refused before anything is sent). */
  first: StreamPage;
  /** The cursor `first` was read after. */
  after: bigint;
  sink: StreamSink;
  payer: StreamPayer;
  /** Events per batch, at most 1,000. */
  limit: number;
  /** Ms without a message after which an empty one is sent. */
  heartbeatMs: number;
  /** Ms the transport may stay full before the stream is ended. */
  stallMs: number;
  /** The consumer went away. */
  cancelled: AbortSignal;
  /** The server is shutting down. */
  shutdown: AbortSignal;
}

/** Why a stream ended, and for those that end with a message, the cursor to resume from. */
export type StreamEnd =
  | { reason: "cancelled" }
  | { reason: "stalled" | "shutdown"; resumeCursor: bigint }
  | { reason: "failed"; error: unknown; resumeCursor: bigint };

/** How long a transport that stays full may hold the stream, by default, in ms. */
export const DEFAULT_STALL_MS = 30_000;
/** How often an idle stream says it is alive, by default, in ms. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/** Runs a stream until it ends; never rejects. */
export async function runStream(run: StreamRun): Promise<StreamEnd> {
  const { follower, sink, payer, cancelled, shutdown } = run;
  // Either ends the stream's waits; which one did decides how it ends.
  const stop = AbortSignal.any([cancelled, shutdown]);
  /** After the last event handed to the transport: where the consumer resumes. */
  let cursor = run.after;
  let room = true;
  let lastSent = Number.NEGATIVE_INFINITY;
  let page: StreamPage | undefined = run.first;

  const ended = (): StreamEnd | undefined => {
    if (cancelled.aborted) return { reason: "cancelled" };
    if (shutdown.aborted) return { reason: "shutdown", resumeCursor: cursor };
    return undefined;
  };

  try {
    for (;;) {
      const end = ended();
      if (end) return end;
      if (!room) {
        // Pull-based: nothing is read for a consumer whose transport is full.
        const drained = await Promise.race([
          sink.drained().then(() => true),
          sleep(run.stallMs, stop).then(() => false),
        ]);
        const stopped = ended();
        if (stopped) return stopped;
        if (!drained) return { reason: "stalled", resumeCursor: cursor };
        room = true;
      }
      if (page === undefined) {
        page = await follower.read({
          ...run.filter,
          after: cursor,
          limit: run.limit,
          ...(run.confirmations === undefined ? {} : { confirmations: run.confirmations }),
        });
      }
      const read: StreamPage = page;
      page = undefined;
      const moved = read.next !== cursor;
      if (read.events.length > 0) {
        await payer.acquire(stop);
        const stopped = ended();
        if (stopped) return stopped;
        const sent = sink.send(read);
        payer.charge(sent.bytes);
        room = sent.room;
        cursor = read.next;
        lastSent = Date.now();
        continue;
      }
      if (Date.now() - lastSent >= run.heartbeatMs) {
        // Also the first message of a stream with nothing to send: the consumer learns its cursor.
        room = sink.send({ events: [], next: read.next, head: read.head }).room;
        cursor = read.next;
        lastSent = Date.now();
        continue;
      }
      // Filters left out what was read: read on at once, the heartbeat carries the cursor.
      if (moved) {
        cursor = read.next;
        continue;
      }
      const head = read.head;
      const ready =
        run.confirmations === undefined
          ? (tip: { latest: bigint }) => tip.latest > cursor
          : // A confirmed read waits for the head to move: the rows it stopped at get deeper.
            (tip: { head: number }) => tip.head !== head;
      await follower.wait(ready, Math.max(1, run.heartbeatMs - (Date.now() - lastSent)), stop);
    }
  } catch (error) {
    return ended() ?? { reason: "failed", error, resumeCursor: cursor };
  }
}
