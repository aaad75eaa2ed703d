import { wordToAddress } from "../../core/hex.ts";
import type { ChainLog, NftTransfer } from "../../core/types.ts";
import { nftTransfer } from "./records.ts";
import { dataLengthOf, uintWord } from "./words.ts";

/**
 * Most token ids one ERC-2309 event may cover. The standard sets no limit, but the event costs the
 * emitter the same gas whatever its range, so a huge one is almost always spam meant to flood
 * indexers; OpenZeppelin's implementation caps a batch at 5,000. Larger ranges are malformed.
 */
export const MAX_CONSECUTIVE_RANGE = 50_000;

const ONE_WORD = dataLengthOf(1);

/**
 * ERC-2309 `ConsecutiveTransfer(fromTokenId indexed, toTokenId, fromAddress indexed, toAddress indexed)`:
 * one transfer per id of the inclusive range, `seq` being the id's offset in it. Undefined when
 * malformed, reversed or wider than MAX_CONSECUTIVE_RANGE.
 */
export function decodeConsecutiveTransfer(log: ChainLog): NftTransfer[] | undefined {
  const { topics, data } = log;
  const firstTopic = topics[1];
  const fromTopic = topics[2];
  const toTopic = topics[3];
  if (topics.length !== 4 || firstTopic === undefined || fromTopic === undefined || toTopic === undefined) {
    return undefined;
  }
  if (data.length !== ONE_WORD) return undefined;
  const first = BigInt(firstTopic);
  const last = uintWord(data, 0);
  if (last < first || last - first >= BigInt(MAX_CONSECUTIVE_RANGE)) return undefined;
  const count = Number(last - first) + 1;
  const from = wordToAddress(fromTopic);
  const to = wordToAddress(toTopic);
  const transfers = new Array<NftTransfer>(count);
  for (let i = 0; i < count; i++) {
    transfers[i] = nftTransfer(log, "erc2309", first + BigInt(i), from, to, 1n, i);
  }
  return transfers;
}
