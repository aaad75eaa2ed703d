import { wordToAddress } from "../../core/hex.ts";
import type { ChainLog, NftTransfer } from "../../core/types.ts";
import { nftTransfer } from "./records.ts";
import { dataLengthOf, uintWord } from "./words.ts";

/*
 * ERC-2309 `ConsecutiveTransfer(fromTokenId indexed, toTokenId, fromAddress indexed, toAddress indexed)`
 *   topics: [topic0, fromTokenId, fromAddress, toAddress]   data: [toTokenId]
 * One event moves every id of the inclusive range, and costs its emitter the same gas whatever the
 * range: a few hundred maximal events fit in a block and would expand into billions of rows. The
 * range is read first, so that the caller can weigh it against a budget before expanding it.
 */

/**
 * Most tokens ERC-2309 events may expand into per (contract, block). OpenZeppelin's implementation
 * caps one event at 5,000 and real collections mint at most tens of thousands at once; an emitter
 * past this is flooding indexers, and its events beyond the budget are recorded as spam.
 */
export const CONSECUTIVE_BUDGET_PER_CONTRACT_BLOCK = 100_000n;

/** Most tokens ERC-2309 events may expand into per block, across contracts (many flooding contracts in one block). */
export const CONSECUTIVE_BUDGET_PER_BLOCK = 500_000n;

const ONE_WORD = dataLengthOf(1);

export interface ConsecutiveRange {
  first: bigint;
  /** Ids in the range (last - first + 1): at least 1. */
  count: bigint;
}

/** The range a ConsecutiveTransfer claims; undefined when malformed or reversed. */
export function consecutiveRange(log: ChainLog): ConsecutiveRange | undefined {
  const { topics, data } = log;
  const firstTopic = topics[1];
  if (topics.length !== 4 || firstTopic === undefined || data.length !== ONE_WORD) return undefined;
  const first = BigInt(firstTopic);
  const last = uintWord(data, 0);
  if (last < first) return undefined;
  return { first, count: last - first + 1n };
}

/** One transfer per id of the range, `seq` being the id's offset in it. The caller bounds the range. */
export function expandConsecutive(log: ChainLog, range: ConsecutiveRange): NftTransfer[] {
  const from = wordToAddress(log.topics[2] as string);
  const to = wordToAddress(log.topics[3] as string);
  const count = Number(range.count);
  const transfers = new Array<NftTransfer>(count);
  for (let i = 0; i < count; i++) {
    transfers[i] = nftTransfer(log, "erc2309", range.first + BigInt(i), from, to, 1n, i);
  }
  return transfers;
}
