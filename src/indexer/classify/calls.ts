import type { Hex } from "../../core/hex.ts";
import { codeBytes } from "./bytecode.ts";
import { INTERFACE_IDS, SELECTORS } from "./selectors.ts";

/*
 * The eth_call inputs classification makes, and decoders for their results that accept whatever
 * a contract returns: these functions are optional, old tokens return them in pre-ABI forms,
 * and anybody can deploy a contract returning garbage. A decoder answers undefined rather than
 * throwing.
 */

export const NAME_CALLDATA: Hex = SELECTORS.name;
export const SYMBOL_CALLDATA: Hex = SELECTORS.symbol;
export const DECIMALS_CALLDATA: Hex = SELECTORS.decimals;

/** `supportsInterface(bytes4)` calldata; bytes4 is left-aligned in its word. */
export function supportsInterfaceCalldata(interfaceId: string): Hex {
  const id = interfaceId.replace(/^0x/i, "").toLowerCase();
  if (!/^[0-9a-f]{8}$/.test(id)) throw new RangeError(`not a 4-byte interface id: ${interfaceId}`);
  return `${SELECTORS.supportsInterface}${id}${"0".repeat(56)}`;
}

/** The supportsInterface probes classification needs, EIP-165's own two first. */
export const SUPPORTS_INTERFACE_CALLDATA = {
  erc165: supportsInterfaceCalldata(INTERFACE_IDS.erc165),
  invalid: supportsInterfaceCalldata(INTERFACE_IDS.invalid),
  erc721: supportsInterfaceCalldata(INTERFACE_IDS.erc721),
  erc1155: supportsInterfaceCalldata(INTERFACE_IDS.erc1155),
  erc721Draft: supportsInterfaceCalldata(INTERFACE_IDS.erc721Draft),
} as const;

/** Longest name or symbol kept, in characters; longer ones are cut. */
export const MAX_STRING_LENGTH = 256;
/** Bytes of a string result decoded at most (4 per character) so that a huge answer costs nothing. */
const MAX_STRING_BYTES = MAX_STRING_LENGTH * 4;

/** The word at `offset` as a small integer, or -1 when out of range (bigger than any result). */
function smallWord(bytes: Uint8Array, offset: number): number {
  if (offset + 32 > bytes.length) return -1;
  for (let i = offset; i < offset + 26; i++) if (bytes[i] !== 0) return -1;
  let value = 0;
  for (let i = offset + 26; i < offset + 32; i++) value = value * 256 + (bytes[i] ?? 0);
  return value;
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

/**
 * Characters a token name must not carry: C0 and C1 controls (NUL padding among them), the
 * replacement character left by invalid UTF-8, and the bidirectional controls that make text
 * display as something else than it is.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNWANTED = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffd]/g;

function cleanString(raw: Uint8Array): string | undefined {
  const text = utf8.decode(raw.subarray(0, MAX_STRING_BYTES)).replace(UNWANTED, "").trim();
  if (text === "") return undefined;
  const chars = Array.from(text);
  return chars.length > MAX_STRING_LENGTH ? chars.slice(0, MAX_STRING_LENGTH).join("").trimEnd() : text;
}

/**
 * A `string` result: ABI-encoded (offset, length, bytes), or a `bytes32` right-padded with NULs as
 * MKR and SAI return. Undefined for an empty answer, a revert, or bytes that are neither.
 */
export function decodeStringResult(result: Hex | undefined): string | undefined {
  if (result === undefined) return undefined;
  const bytes = codeBytes(result);
  if (bytes.length === 32) {
    const end = bytes.indexOf(0);
    return cleanString(bytes.subarray(0, end < 0 ? 32 : end));
  }
  const offset = smallWord(bytes, 0);
  if (offset < 0) return undefined;
  const length = smallWord(bytes, offset);
  if (length < 0 || offset + 32 + length > bytes.length) return undefined;
  return cleanString(bytes.subarray(offset + 32, offset + 32 + length));
}

/** A `bool` result; undefined unless the first word is exactly 0 or 1. */
export function decodeBoolResult(result: Hex | undefined): boolean | undefined {
  if (result === undefined) return undefined;
  const value = smallWord(codeBytes(result), 0);
  return value === 0 ? false : value === 1 ? true : undefined;
}

/** A `uint8` result (decimals); undefined unless the first word is at most 255. */
export function decodeUint8Result(result: Hex | undefined): number | undefined {
  if (result === undefined) return undefined;
  const value = smallWord(codeBytes(result), 0);
  return value >= 0 && value <= 255 ? value : undefined;
}
