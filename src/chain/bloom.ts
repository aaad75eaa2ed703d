import { keccak256 } from "viem";
import type { Hex } from "../core/hex.ts";

/**
 * A block's logsBloom (yellow paper §4.3.1, M3:2048; EIP-2159 leaves it unchanged): 2048 bits, 256 bytes
 * big-endian, bit 0 the least significant bit of the last byte. Each log sets three bits for its address
 * and three for each of its topics: the low 11 bits of each of the first three byte pairs of the value's
 * keccak256. It cannot tell which log a value came from, nor whether a topic came first: a value it holds
 * may be absent (a false positive), a value it lacks is absent for sure.
 */

/** The three bits a value sets in a bloom. */
export type BloomBits = readonly [number, number, number];

export function bloomBits(value: Hex): BloomBits {
  const hash = keccak256(value);
  const pair = (i: number) => Number.parseInt(hash.slice(2 + 4 * i, 6 + 4 * i), 16) & 2047;
  return [pair(0), pair(1), pair(2)];
}

/** Bit `bit` of a 0x-prefixed 512-digit bloom. */
function isSet(bloom: string, bit: number): boolean {
  // Byte 255 - bit/8 holds it; its high digit carries bits 4-7, its low digit bits 0-3.
  const byte = 255 - (bit >> 3);
  const c = bloom.charCodeAt(2 + 2 * byte + ((bit & 7) < 4 ? 1 : 0));
  const digit = c <= 57 ? c - 48 : (c | 32) - 87;
  return ((digit >> (bit & 3)) & 1) === 1;
}

/** Whether a log with this value (as address or topic) may be in the block. */
export function bloomMayHold(bloom: Hex, bits: BloomBits): boolean {
  return isSet(bloom, bits[0]) && isSet(bloom, bits[1]) && isSet(bloom, bits[2]);
}
