import { type Address, wordToAddress } from "../../core/hex.ts";

/**
 * Reading ABI words straight out of a log's `0x`-prefixed data string: slicing hex is cheaper than
 * converting to bytes first, and the decoder runs on every log of the chain.
 */

/** Hex characters in one 32-byte word. */
export const WORD_HEX = 64;

/** `data` length, in hex characters including `0x`, of exactly `words` words. */
export function dataLengthOf(words: number): number {
  return 2 + WORD_HEX * words;
}

/** The word at byte offset `byteOffset` of `data` as an unsigned integer. */
export function uintAt(data: string, byteOffset: number): bigint {
  const start = 2 + byteOffset * 2;
  return BigInt(`0x${data.slice(start, start + WORD_HEX)}`);
}

/** The `index`-th word of `data` as an unsigned integer. */
export function uintWord(data: string, index: number): bigint {
  return uintAt(data, index * 32);
}

/** The `index`-th word of `data` as an address (its low 20 bytes). */
export function addressWord(data: string, index: number): Address {
  const start = 2 + index * WORD_HEX;
  return wordToAddress(data.slice(start, start + WORD_HEX));
}

const HIGH_ZEROS = "0".repeat(WORD_HEX - 12);

/**
 * The word at byte offset `byteOffset` as a small integer (an ABI offset or array length), or -1
 * when it does not fit in 48 bits or is not hex. Anything that large is out of any log's bounds,
 * so the caller's bounds check rejects it either way.
 */
export function smallUintAt(data: string, byteOffset: number): number {
  const start = 2 + byteOffset * 2;
  if (!data.startsWith(HIGH_ZEROS, start)) return -1;
  // Number() rather than parseInt: it rejects a non-hex character instead of stopping at it.
  const value = Number(`0x${data.slice(start + HIGH_ZEROS.length, start + WORD_HEX)}`);
  return Number.isNaN(value) ? -1 : value;
}

/** Whole bytes in `data`, or -1 when it has an odd number of hex digits. */
export function dataByteLength(data: string): number {
  const digits = data.length - 2;
  return digits % 2 === 0 ? digits / 2 : -1;
}
