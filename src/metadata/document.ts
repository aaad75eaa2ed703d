/**
 * A fetched body (not media) as the document to store, or why it is not kept. PostgreSQL's text
 * holds valid UTF-8 without NUL, and the API serves the document as a string, so:
 *
 * - a body that is not valid UTF-8, or holds control characters other than whitespace and NUL,
 *   is binary (a ZIP, a PDF, a WAV…): not a document, not stored;
 * - NUL bytes at the end are dropped (the padding of a string built from bytes32); a NUL inside
 *   becomes U+FFFD, the replacement character. JSON's `\u0000` escape is six ASCII characters and
 *   stays as written;
 * - a JSON document holding more than `maxValues` values or nesting deeper than `maxDepth` is
 *   refused before it is parsed: what parsing it would build is what bounds a worker's memory.
 *
 * Pure.
 */
import { scanJson } from "./json-scan.ts";

export interface DocumentLimits {
  /** JSON values of every kind, containers included. */
  maxValues: number;
  maxDepth: number;
}

export const DOCUMENT_LIMITS: DocumentLimits = { maxValues: 100_000, maxDepth: 64 };

export type ReadDocument = { text: string } | { refused: string };

/** A C0 control byte but tab, line feed, vertical tab, form feed, carriage return and NUL (dealt with apart). */
function hasControls(body: Uint8Array): boolean {
  for (const b of body) if (b !== 0 && b < 0x20 && (b < 0x09 || b > 0x0d)) return true;
  return false;
}

/** The document `body` holds, or why it is not kept; `mimeType` is its sniffed media type. */
export function readDocument(
  body: Uint8Array,
  mimeType: string,
  limits: DocumentLimits = DOCUMENT_LIMITS,
): ReadDocument {
  const binary = { refused: `not a text document (${mimeType}, ${body.length} bytes)` };
  let text: string;
  try {
    // The byte-order mark is kept: the document is stored as received.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return binary;
  }
  // Byte by byte: in UTF-8 no byte of another character is below 0x80.
  if (hasControls(body)) return binary;
  if (text.includes("\0")) text = text.replace(/\0+$/, "").replaceAll("\0", "\uFFFD");
  // Measured whatever the media type: normalising parses any text that is JSON.
  const shape = scanJson(text);
  if (shape !== undefined && shape.values > limits.maxValues)
    return { refused: `a JSON document of more than ${limits.maxValues} values (${shape.values})` };
  if (shape !== undefined && shape.depth > limits.maxDepth)
    return { refused: `a JSON document nested deeper than ${limits.maxDepth} (${shape.depth})` };
  return { text };
}
