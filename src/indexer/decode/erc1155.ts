import { wordToAddress } from "../../core/hex.ts";
import type { ChainLog, NftTransfer } from "../../core/types.ts";
import { nftTransfer } from "./records.ts";
import { dataByteLength, dataLengthOf, smallUintAt, uintAt, uintWord } from "./words.ts";

/*
 * ERC-1155 `TransferSingle(operator indexed, from indexed, to indexed, id, value)` and
 * `TransferBatch(operator indexed, from indexed, to indexed, ids[], values[])`.
 *
 * An entry of value 0 is dropped: it moves nothing, yet the standard allows emitting it, and
 * keeping it would create owners of zero tokens and mints that never happened. A batch keeps
 * each entry's position in `seq`, even around dropped entries, so that a transfer's identity
 * does not depend on its neighbours.
 */

const TWO_WORDS = dataLengthOf(2);

/** The transfer of a TransferSingle log, null for a zero value, undefined when malformed. */
export function decodeTransferSingle(log: ChainLog): NftTransfer | null | undefined {
  const { topics, data } = log;
  const from = topics[2];
  const to = topics[3];
  if (topics.length !== 4 || from === undefined || to === undefined || data.length !== TWO_WORDS)
    return undefined;
  const value = uintWord(data, 1);
  if (value === 0n) return null;
  return nftTransfer(log, "erc1155", uintWord(data, 0), wordToAddress(from), wordToAddress(to), value, 0);
}

/**
 * The dynamic `uint256[]` whose offset is in head word `headIndex`, or undefined when its offset or
 * length points outside the data. Checked by hand because the data is whatever the contract emitted.
 */
function uintArray(data: string, byteLength: number, headIndex: number): bigint[] | undefined {
  const offset = smallUintAt(data, headIndex * 32);
  if (offset < 0 || offset + 32 > byteLength) return undefined;
  const length = smallUintAt(data, offset);
  if (length < 0 || length > (byteLength - offset - 32) / 32) return undefined;
  const items = new Array<bigint>(length);
  for (let i = 0; i < length; i++) items[i] = uintAt(data, offset + 32 + i * 32);
  return items;
}

/** The transfers of a TransferBatch log, or undefined when it is malformed. */
export function decodeTransferBatch(log: ChainLog): NftTransfer[] | undefined {
  const { topics, data } = log;
  const fromTopic = topics[2];
  const toTopic = topics[3];
  if (topics.length !== 4 || fromTopic === undefined || toTopic === undefined) return undefined;
  const byteLength = dataByteLength(data);
  if (byteLength < 64) return undefined;
  const ids = uintArray(data, byteLength, 0);
  const values = uintArray(data, byteLength, 1);
  if (ids === undefined || values === undefined || ids.length !== values.length) return undefined;
  const from = wordToAddress(fromTopic);
  const to = wordToAddress(toTopic);
  const transfers: NftTransfer[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const value = values[i];
    if (id === undefined || value === undefined || value === 0n) continue;
    transfers.push(nftTransfer(log, "erc1155", id, from, to, value, i));
  }
  return transfers;
}
