/**
 * The block an answer reflects, as both protocols show it, and the `minBlock` a request may ask
 * for. A client that sends back the highest block it has seen as `minBlock` never reads older
 * data than it has already read, whichever server behind a balancer answers: a server whose data
 * is older waits for it a bounded time, then refuses.
 */
import type { IndexedBlock } from "../store/read/version.ts";
import { BehindError, InvalidArgumentError } from "./errors.ts";
import { single } from "./params.ts";

/** The REST response headers of an answer's block (gRPC: the same names in lower case, as metadata). */
export const BLOCK_HEADER = {
  number: "Mintlens-Block",
  hash: "Mintlens-Block-Hash",
  time: "Mintlens-Block-Time",
} as const;

/** The query parameter names of `minBlock` (JSON style and `.proto` style, as every field takes). */
export const MIN_BLOCK_QUERY = ["minBlock", "min_block"] as const;
/** The gRPC request metadata key of `minBlock`. */
export const MIN_BLOCK_METADATA = "mintlens-min-block";
/** The field an invalid `minBlock` is reported as, in snake_case like every field. */
export const MIN_BLOCK_FIELD = "min_block";

/** Seconds a client refused for data behind its `minBlock` is told to wait before it asks again. */
export const BEHIND_RETRY_AFTER_SECONDS = 1;

const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL = /^[0-9]{1,19}$/;

/** `YYYY-MM-DDTHH:MM:SSZ`: block times are whole seconds. */
function blockTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The headers (or, lower-cased, the gRPC metadata) that tag an answer with its block. */
export function blockTags(block: IndexedBlock): [name: string, value: string][] {
  return [
    [BLOCK_HEADER.number, block.number.toString()],
    [BLOCK_HEADER.hash, block.hash],
    [BLOCK_HEADER.time, blockTime(block.time)],
  ];
}

/**
 * A request's `minBlock`: a block number in decimal, 0 to 2^63-1, given once (or repeated with the
 * same value); absent or empty is none. Anything else is INVALID_ARGUMENT naming `min_block`.
 */
export function parseMinBlock(raw: string | readonly string[] | undefined): bigint | undefined {
  const text = single(MIN_BLOCK_FIELD, raw);
  if (text === undefined || text === "") return undefined;
  if (!DECIMAL.test(text) || BigInt(text) > INT64_MAX) {
    throw new InvalidArgumentError(
      MIN_BLOCK_FIELD,
      "must be a block number, a whole number from 0 to 2^63-1",
    );
  }
  return BigInt(text);
}

/**
 * The refusal of a request whose `minBlock` this server's data has not reached within the wait:
 * UNAVAILABLE, saying how far behind the data is, with a retry hint.
 */
export function behindError(minBlock: bigint, head: IndexedBlock | undefined, waitedMs: number): BehindError {
  const where =
    head === undefined
      ? "this server has no block of the chain indexed yet"
      : `this server's data reaches block ${head.number}, ${minBlock - head.number} short of min_block ${minBlock}`;
  return new BehindError(
    `${where} after waiting ${waitedMs} ms: retry later, or on another server`,
    BEHIND_RETRY_AFTER_SECONDS,
  );
}
