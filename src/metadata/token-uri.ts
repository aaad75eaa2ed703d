/**
 * A token's URI, asked of its contract: `tokenURI(uint256)` for ERC-721 and its forerunners,
 * `uri(uint256)` for ERC-1155, at the latest block. Contracts revert, return nothing, or return
 * their string without ABI encoding; each is an answer, not an error to retry.
 */
import type { ChainClient } from "../chain/rpc-types.ts";
import type { Address, Hex } from "../core/hex.ts";
import type { ContractType } from "../core/types.ts";

const TOKEN_URI = "0xc87b56dd"; // tokenURI(uint256)
const URI = "0x0e89341c"; // uri(uint256)

export type TokenUri = { uri: string } | { none: string };

/**
 * A string as a contract's bytes32 conversion leaves it: NUL bytes padding either end dropped, and
 * cut at a NUL left inside (what follows is the rest of the word, not text; a URI cannot hold a
 * NUL, nor can the store).
 */
function withoutNuls(text: string): string {
  const trimmed = text.replace(/^\0+|\0+$/g, "");
  const nul = trimmed.indexOf("\0");
  return nul < 0 ? trimmed : trimmed.slice(0, nul);
}

/**
 * The text of an `eth_call` answer meant to be a string: ABI-encoded, else the bytes themselves as
 * UTF-8; without NULs either way (`withoutNuls`). Undefined when nothing is left.
 */
export function decodeStringResult(data: Hex): string | undefined {
  const hex = data.slice(2);
  if (hex.length === 0) return undefined;
  const bytes = Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, "hex");
  if (bytes.length >= 64) {
    const offset = bytes.readBigUInt64BE(24);
    const high = bytes.subarray(0, 24).every((b) => b === 0);
    if (high && offset + 32n <= BigInt(bytes.length)) {
      const at = Number(offset);
      const lengthWord = bytes.subarray(at, at + 32);
      const length = lengthWord.subarray(0, 24).every((b) => b === 0) ? lengthWord.readBigUInt64BE(24) : -1n;
      if (length >= 0n && BigInt(at + 32) + length <= BigInt(bytes.length)) {
        const text = withoutNuls(bytes.subarray(at + 32, at + 32 + Number(length)).toString("utf8"));
        return text === "" ? undefined : text;
      }
    }
  }
  // Not ABI-encoded: the string's bytes as they are, without the padding.
  const text = withoutNuls(bytes.toString("utf8"));
  return text === "" ? undefined : text;
}

/** Which call names a token's URI, by the standards its contract implements; undefined when none does. */
export function uriSelector(types: readonly ContractType[]): Hex | undefined {
  if (types.includes("TYPE_ERC1155")) return URI;
  if (types.includes("TYPE_ERC721") || types.includes("TYPE_ERC721_LEGACY")) return TOKEN_URI;
  return undefined;
}

export async function readTokenUri(
  client: Pick<ChainClient, "call">,
  contract: Address,
  tokenId: bigint,
  types: readonly ContractType[],
): Promise<TokenUri> {
  const selector = uriSelector(types);
  if (selector === undefined)
    return { none: `a ${types.join(", ") || "contract of no known type"} has no token URI` };
  const data = `${selector}${tokenId.toString(16).padStart(64, "0")}` as Hex;
  let answer = await client.call(contract, data);
  // Some pre-standard and hybrid contracts answer only the other name.
  if (answer === undefined || answer === "0x")
    answer = await client.call(contract, `${selector === URI ? TOKEN_URI : URI}${data.slice(10)}` as Hex);
  if (answer === undefined) return { none: "the contract reverts when asked for the token URI" };
  const uri = decodeStringResult(answer);
  return uri === undefined ? { none: "the contract returns no token URI" } : { uri };
}
