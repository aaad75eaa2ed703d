import type { Address, Hex } from "../core/hex.ts";
import { MalformedAnswerError } from "./errors.ts";

/**
 * Readers for the fields of raw JSON-RPC answers. Each checks the shape it relies on and throws
 * MalformedAnswerError naming the field, so a bad answer is retried rather than stored.
 */

export type RawObject = Record<string, unknown>;

export function bad(what: string, value: unknown): MalformedAnswerError {
  const shown = typeof value === "string" ? value.slice(0, 80) : JSON.stringify(value)?.slice(0, 80);
  return new MalformedAnswerError(`malformed answer: ${what} is ${shown}`);
}

export function object(value: unknown, what: string): RawObject {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw bad(what, value);
  return value as RawObject;
}

export function array(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw bad(what, value);
  return value;
}

const QUANTITY_RE = /^0x[0-9a-fA-F]{0,14}$/;

/** A hex quantity (JSON numbers too: parity-style traces send blockNumber as one) as a safe integer. */
export function quantity(value: unknown, what: string): number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value !== "string" || !QUANTITY_RE.test(value)) throw bad(what, value);
  const n = value.length === 2 ? 0 : Number.parseInt(value, 16);
  if (!Number.isSafeInteger(n)) throw bad(what, value);
  return n;
}

/** A hex uint256 (a value in wei); absent, null or "0x" is zero, as nodes write an empty value. */
export function uint256(value: unknown, what: string): bigint {
  if (value === undefined || value === null || value === "0x") return 0n;
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(value)) throw bad(what, value);
  return BigInt(value);
}

/** 1 for the code units of 0-9, a-f and A-F: one load per character, cheaper here than range tests. */
const HEX_DIGIT = new Uint8Array(65536);
for (const digit of "0123456789abcdefABCDEF") HEX_DIGIT[digit.charCodeAt(0)] = 1;

/**
 * Whether `text` is 0x followed by exactly `digits` hex digits. Addresses and hashes reach SQL as
 * decode(x, 'hex'), so a stray character must be refused here, where the answer is asked again, rather
 * than fail a batch's transaction. A charCode loop, not a regex: this runs on several fields of every log
 * of a backfill.
 */
export function isHexOfLength(text: string, digits: number): boolean {
  if (text.length !== digits + 2 || text.charCodeAt(0) !== 48 || text.charCodeAt(1) !== 120) return false;
  for (let i = 2; i < text.length; i++) if (HEX_DIGIT[text.charCodeAt(i)] !== 1) return false;
  return true;
}

export function address(value: unknown, what: string): Address {
  if (typeof value !== "string" || !isHexOfLength(value, 40)) throw bad(what, value);
  return value.toLowerCase() as Address;
}

export function optionalAddress(value: unknown, what: string): Address | undefined {
  return value === null || value === undefined ? undefined : address(value, what);
}

export function hash(value: unknown, what: string): Hex {
  if (typeof value !== "string" || !isHexOfLength(value, 64)) throw bad(what, value);
  return value.toLowerCase() as Hex;
}

/** A 2048-bit logs bloom. */
export function bloom(value: unknown, what: string): Hex {
  if (typeof value !== "string" || !isHexOfLength(value, 512)) throw bad(what, value);
  return value.toLowerCase() as Hex;
}

export function hexData(value: unknown, what: string): Hex {
  if (typeof value !== "string" || !value.startsWith("0x") || value.length % 2 !== 0) throw bad(what, value);
  return value as Hex;
}

export function checkBlockRange(from: number, to: number): void {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
    throw new RangeError(`invalid block range [${from}, ${to}]`);
  }
}
