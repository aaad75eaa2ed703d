/**
 * The markets' terms: the fee and the creators' royalty the escrow market is deployed with and
 * every Seaport order carries, and the addresses they are paid to.
 */
import { keccak256, stringToHex } from "viem";
import { wordToAddress } from "../../core/hex.ts";

/** The markets' fee and the creators' royalty, in basis points. */
export const MARKET_FEE_BPS = 250n;
export const ROYALTY_BPS = 500n;
/** Where the markets' fees and the collections' royalties go: addresses no one trades from. */
export const FEE_RECIPIENT = wordToAddress(keccak256(stringToHex("mintlens demo market fees")));
export const CREATOR = wordToAddress(keccak256(stringToHex("mintlens demo creator")));
