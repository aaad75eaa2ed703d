import { type Address, ZERO_ADDRESS } from "./hex.ts";

/**
 * Addresses nobody controls. Tokens sent here are burned: they leave supply and their
 * holder is never counted as an owner.
 */
export const BURN_ADDRESSES: ReadonlySet<Address> = new Set<Address>([
  ZERO_ADDRESS,
  "0x000000000000000000000000000000000000dead",
  "0xdead000000000000000042069420694206942069",
]);

export function isBurnAddress(address: Address): boolean {
  return BURN_ADDRESSES.has(address);
}
