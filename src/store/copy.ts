import type { Writable } from "node:stream";
import { finished } from "node:stream/promises";

/** A bytea value in COPY's text format (the backslash itself escaped). */
export function copyBytea(hex: string): string {
  return `\\\\x${hex.slice(2)}`;
}

/** A block time in COPY's text format, formatted once per block rather than once per row. */
export function copyTimeOf(timeOf: (blockNumber: number) => number): (blockNumber: number) => string {
  const cache = new Map<number, string>();
  return (blockNumber) => {
    let text = cache.get(blockNumber);
    if (text === undefined) {
      text = new Date(timeOf(blockNumber) * 1000).toISOString();
      cache.set(blockNumber, text);
    }
    return text;
  };
}

/**
 * Streams rows into a COPY ... FROM STDIN writable in chunks, so that a large batch never
 * builds one giant string and the socket's back-pressure is respected.
 */
export async function writeCopyRows<T>(
  stream: Writable,
  rows: readonly T[],
  line: (row: T) => string,
): Promise<void> {
  const CHUNK = 2000;
  for (let i = 0; i < rows.length; i += CHUNK) {
    let text = "";
    const end = Math.min(rows.length, i + CHUNK);
    for (let j = i; j < end; j++) text += `${line(rows[j] as T)}\n`;
    if (!stream.write(text)) await new Promise<void>((resolve) => stream.once("drain", () => resolve()));
  }
  stream.end();
  await finished(stream);
}
