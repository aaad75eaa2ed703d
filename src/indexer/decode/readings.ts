import type { Address } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";

/** The types a contract was classified with; undefined while it has not been classified. */
export type TypesOf = (address: Address) => ReadonlySet<ContractType> | undefined;

/**
 * How a `Transfer` with from and to indexed and one data word is read, given its emitter's types:
 * - "punks": the ERC-20-shaped shadow CryptoPunks emits beside each PunkTransfer and PunkBought;
 * - "legacy": a pre-standard NFT whose data word is the token id (only when the contract is not
 *   also an ERC-20, since ERC-20/ERC-721 hybrids log their fungible side this way);
 * - "fungible": an ERC-20 amount;
 * - "unknown": the types give no reading, so the contract must be classified (again) with this
 *   log as evidence. Classification with it always yields one of the others.
 */
export type ValueTransferReading = "punks" | "legacy" | "fungible" | "unknown";

export function readValueTransfer(types: ReadonlySet<ContractType> | undefined): ValueTransferReading {
  if (types === undefined) return "unknown";
  if (types.has("TYPE_CRYPTOPUNKS")) return "punks";
  const erc20 = types.has("TYPE_ERC20");
  if (types.has("TYPE_ERC721_LEGACY") && !erc20) return "legacy";
  return erc20 ? "fungible" : "unknown";
}

/**
 * An ERC-20 and nothing else. Such a contract's `Transfer` is an amount whatever its layout: a few
 * tokens index the value (four topics) and early ones index nothing (one topic), layouts that
 * otherwise mean an NFT.
 */
export function isFungibleOnly(types: ReadonlySet<ContractType> | undefined): boolean {
  if (types === undefined) return false;
  return (
    types.has("TYPE_ERC20") &&
    !types.has("TYPE_ERC721") &&
    !types.has("TYPE_ERC721_LEGACY") &&
    !types.has("TYPE_ERC1155") &&
    !types.has("TYPE_CRYPTOPUNKS")
  );
}
