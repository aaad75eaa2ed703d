/**
 * Page tokens: where a page of a list ended, so that the next request goes on from there.
 *
 * A token holds the sort key of the page's last row (a keyset: typed values, each checked when the
 * token is read back) and the fingerprint of the query it came from (the operation, the chain and
 * every parameter but the page size). The next page is then one index range after that key,
 * whatever the depth, and a token presented with another query is refused rather than read as a
 * position in a list it does not belong to.
 *
 * On the wire a token is base64url of a small JSON array, `[version, fingerprint, ...key]`: opaque to
 * clients, but neither secret nor signed. A made-up token can only start a list at a position of the
 * client's choosing, which any client may ask for anyway, so every value is checked for its type
 * and range and nothing else is needed.
 */
import { createHash } from "node:crypto";
import type { Address } from "../core/hex.ts";
import { InvalidArgumentError } from "./errors.ts";

/** The layout of tokens written now; a later layout gets a new number, and this one is still read or refused clearly. */
const VERSION = 1;

/**
 * Longer than any token this module writes (the longest holds a trait's name and value, up to 1,280
 * characters, each at most six in JSON); anything longer is refused before it is decoded.
 */
const MAX_TOKEN_LENGTH = 12_288;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** One typed value of a keyset: how it is written into a token's JSON, and read back and checked. */
export interface KeyPart<T> {
  write(value: T): string | null;
  /** The value, or `undefined` when the JSON is not one. */
  read(json: unknown): T | undefined;
}

/** A 20-byte address, lowercase `0x` hex. */
export const addressPart: KeyPart<Address> = {
  write: (value) => value,
  read: (json) => (typeof json === "string" && /^0x[0-9a-f]{40}$/.test(json) ? (json as Address) : undefined),
};

/** A non-negative integer (a count, units held) of at most 100 digits. */
export const naturalPart: KeyPart<bigint> = {
  write: (value) => value.toString(),
  read: (json) =>
    typeof json === "string" && /^(0|[1-9][0-9]{0,99})$/.test(json) ? BigInt(json) : undefined,
};

/**
 * A non-negative decimal as PostgreSQL writes a numeric (a ranking's average price, to 18 decimals
 * of a wei), kept as its text so that nothing is rounded on the way back.
 */
export const decimalPart: KeyPart<string> = {
  write: (value) => value,
  read: (json) =>
    typeof json === "string" && /^(0|[1-9][0-9]{0,99})(\.[0-9]{1,40})?$/.test(json) ? json : undefined,
};

/** Microseconds since 1970-01-01T00:00:00Z (PostgreSQL's precision), within years 0001 to 9999. */
export const microsPart: KeyPart<bigint> = {
  write: (value) => value.toString(),
  read: (json) => {
    if (typeof json !== "string" || !/^-?(0|[1-9][0-9]{0,17})$/.test(json)) return undefined;
    const micros = BigInt(json);
    return micros >= MIN_MICROS && micros <= MAX_MICROS ? micros : undefined;
  },
};
const MIN_MICROS = -62_135_596_800_000_000n;
const MAX_MICROS = 253_402_300_799_999_999n;

/** Text of at most `max` UTF-16 code units (a trait's name or value). */
export function textPart(max: number): KeyPart<string> {
  return {
    write: (value) => value,
    read: (json) => (typeof json === "string" && json.length <= max ? json : undefined),
  };
}

/** A value that may be absent (a contract's unknown mint time), written as JSON `null`. */
export function nullable<T>(part: KeyPart<T>): KeyPart<T | null> {
  return {
    write: (value) => (value === null ? null : part.write(value)),
    read: (json) => (json === null ? null : part.read(json)),
  };
}

/** The query a token belongs to, as a short digest. */
export type QueryFingerprint = string & { readonly __fingerprint: unique symbol };

type ParameterValue = string | number | bigint | boolean | null | undefined | readonly string[];

/**
 * The fingerprint of an operation's query: the operation and every parameter that decides which
 * rows the list holds and in which order (never the page size, which may change from page to page).
 * Parameters are given after parsing, so that two spellings of one request have one fingerprint.
 */
export function queryFingerprint(
  operation: string,
  parameters: Readonly<Record<string, ParameterValue>>,
): QueryFingerprint {
  const canonical = Object.keys(parameters)
    .sort()
    .map((name) => {
      const value = parameters[name];
      return [name, typeof value === "bigint" ? value.toString() : (value ?? null)];
    });
  const digest = createHash("sha256")
    .update(JSON.stringify([operation, canonical]))
    .digest("base64url");
  // 96 bits: a token is never presented with another query by chance.
  return digest.slice(0, 16) as QueryFingerprint;
}

type Values<P extends readonly KeyPart<unknown>[]> = {
  [I in keyof P]: P[I] extends KeyPart<infer T> ? T : never;
};

/** Tokens of one list: the sort key of its rows as typed parts, in the order of the sort. */
export interface PageTokens<V extends readonly unknown[]> {
  /** The token of a page whose last row has the sort key `key`, in the list `query`. */
  write(query: QueryFingerprint, key: V): string;
  /**
   * The sort key a token holds. A malformed token, or one of another query, is an INVALID_ARGUMENT
   * naming `field`.
   */
  read(token: string, query: QueryFingerprint, field?: string): V;
}

export function pageTokens<const P extends readonly KeyPart<unknown>[]>(...parts: P): PageTokens<Values<P>> {
  return {
    write(query, key) {
      const values = parts.map((part, i) => part.write(key[i]));
      return Buffer.from(JSON.stringify([VERSION, query, ...values])).toString("base64url");
    },
    read(token, query, field = "page_token") {
      const malformed = () =>
        new InvalidArgumentError(
          field,
          "not a page token: pass back the nextPageToken of the previous page, unchanged",
        );
      if (token.length > MAX_TOKEN_LENGTH || !BASE64URL.test(token)) throw malformed();
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
      } catch {
        throw malformed();
      }
      if (!Array.isArray(decoded) || decoded[0] !== VERSION || typeof decoded[1] !== "string")
        throw malformed();
      if (decoded[1] !== query) {
        throw new InvalidArgumentError(
          field,
          "the token continues another list: send it with the same parameters as the request that returned it (only limit may change)",
        );
      }
      const json = decoded.slice(2);
      if (json.length !== parts.length) throw malformed();
      const key = parts.map((part, i) => part.read(json[i]));
      if (key.some((value) => value === undefined)) throw malformed();
      return key as Values<P>;
    },
  };
}
