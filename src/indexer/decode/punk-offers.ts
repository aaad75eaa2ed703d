import { type Address, type Hex, wordToAddress, ZERO_ADDRESS } from "../../core/hex.ts";
import type { ChainLog, NftTransfer } from "../../core/types.ts";
import { dataLengthOf, uintWord } from "./words.ts";

/*
 * The CryptoPunks market holds at most one offer per punk, and its events say every change of it:
 *   PunkOffered(uint256 indexed punkIndex, uint256 minValue, address indexed toAddress)
 *   PunkNoLongerForSale(uint256 indexed punkIndex)
 * An offer to one address (toAddress not zero) replaces the public one, so it ends it as far as
 * anyone else can buy. A move of the punk ends it too: acceptBidForPunk clears the offer without
 * logging PunkNoLongerForSale, and an offer whose seller no longer owns the punk cannot be taken.
 */

/** CryptoPunks `PunkOffered(uint256 indexed,uint256,address indexed)`. */
export const PUNK_OFFERED: Hex = "0x3c7b682d5da98001a9b8cbda6c647d2c63d698a4184fd1d55e2ce7b66f5d21eb";
/** CryptoPunks `PunkNoLongerForSale(uint256 indexed)`. */
export const PUNK_NO_LONGER_FOR_SALE: Hex =
  "0xb0e0a660b4e50f26f0b7ce75c24655fc76cc66e3334a54ff410277229fa10bd4";

/** Topic0 of the offer events decodePunkOffer reads. */
export const PUNK_OFFER_TOPICS: readonly Hex[] = [PUNK_OFFERED, PUNK_NO_LONGER_FOR_SALE];

/** A change of a punk's public offer: its new minimum price in wei, or null when none is open after it. */
export interface PunkOfferEvent {
  contract: Address;
  punkIndex: bigint;
  minValue: bigint | null;
  blockNumber: number;
  logIndex: number;
}

const ONE_WORD = dataLengthOf(1);
const TOPIC = /^0x[0-9a-fA-F]{64}$/;

/** A `PunkOffered` or `PunkNoLongerForSale`, or undefined for any other or malformed log. */
export function decodePunkOffer(log: ChainLog): PunkOfferEvent | undefined {
  const topic0 = log.topics[0]?.toLowerCase();
  const index = log.topics[1];
  if (index === undefined || !log.topics.every((t) => TOPIC.test(t))) return undefined;
  const at = {
    contract: log.address,
    punkIndex: BigInt(index),
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
  };
  if (topic0 === PUNK_NO_LONGER_FOR_SALE) {
    return log.topics.length === 2 && log.data === "0x" ? { ...at, minValue: null } : undefined;
  }
  if (topic0 !== PUNK_OFFERED) return undefined;
  const to = log.topics[2];
  if (
    log.topics.length !== 3 ||
    to === undefined ||
    log.data.length !== ONE_WORD ||
    !/^0x[0-9a-fA-F]*$/.test(log.data)
  )
    return undefined;
  return { ...at, minValue: wordToAddress(to) === ZERO_ADDRESS ? uintWord(log.data, 0) : null };
}

/**
 * The offer changes of a batch in chain order: its offer events, and an end for every punk moved
 * other than by its first assignment (no offer can precede that).
 */
export function punkOfferChanges(
  offers: readonly PunkOfferEvent[],
  nft: readonly NftTransfer[],
): PunkOfferEvent[] {
  const moved: PunkOfferEvent[] = [];
  for (const t of nft) {
    if (t.standard !== "punks" || t.from === ZERO_ADDRESS) continue;
    moved.push({
      contract: t.contract,
      punkIndex: t.tokenId,
      minValue: null,
      blockNumber: t.blockNumber,
      logIndex: t.logIndex,
    });
  }
  return [...offers, ...moved].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}
