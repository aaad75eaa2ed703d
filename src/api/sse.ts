/**
 * The live event stream as Server-Sent Events: one message per event (`id` its cursor, `event` its
 * kind, `data` its proto3 JSON on one line), a heartbeat that moves `Last-Event-ID` past what the
 * filters left out, and a last message saying why the stream ended and where to resume. Pure.
 */
import type { StreamPage } from "../store/read/stream-events.ts";
import { streamEventJson } from "../stream/wire.ts";

/** The messages of a page: its events, or a heartbeat when it has none. */
export function sseMessages(page: StreamPage): string {
  if (page.events.length === 0) {
    const data = JSON.stringify({
      nextCursor: page.next.toString(),
      headBlock: String(Math.max(page.head, 0)),
    });
    return `id: ${page.next}\nevent: heartbeat\ndata: ${data}\n\n`;
  }
  let text = "";
  for (const event of page.events) {
    // JSON.stringify escapes line breaks inside strings: the data is one line.
    text += `id: ${event.cursor}\nevent: ${event.kind}\ndata: ${JSON.stringify(streamEventJson(event))}\n\n`;
  }
  return text;
}

/** Why a stream ended, as its last message; `id` is where to resume, so a reconnecting client does. */
export function sseEnd(end: {
  reason: string;
  resumeCursor: bigint;
  code?: number;
  message: string;
}): string {
  const data = JSON.stringify({
    reason: end.reason,
    resumeCursor: end.resumeCursor.toString(),
    ...(end.code === undefined ? {} : { code: end.code }),
    message: end.message,
  });
  return `id: ${end.resumeCursor}\nevent: end\ndata: ${data}\n\n`;
}
