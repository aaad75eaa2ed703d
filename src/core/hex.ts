/** Lower-case, 0x-prefixed 20-byte address. Everything past the chain boundary uses this form. */
export type Address = `0x${string}`;
/** 0x-prefixed hex string (hashes, calldata, byte-code). */
export type Hex = `0x${string}`;

export const ZERO_ADDRESS: Address = "0x0000000000000000000000000000000000000000";

/** The low 20 bytes of a 32-byte topic or word, as an address. */
export function wordToAddress(word: string): Address {
  return `0x${word.slice(word.length - 40).toLowerCase()}`;
}

/** Parses a 0x-prefixed quantity; `0x` alone is zero, as some nodes send it. */
export function hexToBigInt(hex: string): bigint {
  return hex.length <= 2 ? 0n : BigInt(hex);
}

export function hexToNumber(hex: string): number {
  const n = Number.parseInt(hex, 16);
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer quantity: ${hex}`);
  return n;
}

export function numberToHex(n: number | bigint): Hex {
  return `0x${n.toString(16)}`;
}

/** Bytes (an address, a hash, as the store keeps them) as lowercase 0x hex, read in place. */
export function toHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;
}
