import { isBurnAddress } from "../../core/burn.ts";
import { ZERO_ADDRESS } from "../../core/hex.ts";
import type { NftTransfer } from "../../core/types.ts";

/** A token created: every standard logs a mint as a transfer from the zero address. */
export function isMint(transfer: Pick<NftTransfer, "from">): boolean {
  return transfer.from === ZERO_ADDRESS;
}

/** A token destroyed: sent to the zero address, or to an address nobody controls (core/burn.ts). */
export function isBurn(transfer: Pick<NftTransfer, "to">): boolean {
  return isBurnAddress(transfer.to);
}
