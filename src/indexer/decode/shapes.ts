import type { Address } from "../../core/hex.ts";
import type { ChainLog } from "../../core/types.ts";
import {
  CONSECUTIVE_TRANSFER_TOPIC,
  PUNK_ASSIGN_TOPIC,
  PUNK_BOUGHT_TOPIC,
  PUNK_TRANSFER_TOPIC,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
} from "./topics.ts";
import { dataLengthOf } from "./words.ts";

/**
 * The well-formed layouts of the transfer events, as evidence for classifying their emitter.
 * `Transfer` comes in three layouts, and which ones a contract emits says much about what it is.
 */
export type EventShape =
  /** `Transfer` with from, to and the token id indexed: ERC-721. */
  | "erc721-transfer"
  /** `Transfer` with from and to indexed and one data word: ERC-20, or a pre-standard NFT. */
  | "erc20-transfer"
  /** `Transfer` with nothing indexed and three data words: CryptoKitties and its contemporaries. */
  | "unindexed-transfer"
  /** ERC-1155 `TransferSingle` or `TransferBatch`. */
  | "erc1155-transfer"
  /** ERC-2309 `ConsecutiveTransfer`. */
  | "consecutive-transfer"
  /** CryptoPunks `Assign`. */
  | "punk-assign"
  /** CryptoPunks `PunkTransfer` or `PunkBought`. */
  | "punk-transfer";

/** Which shapes a contract was seen emitting. */
export type EmittedShapes = ReadonlySet<EventShape>;

const ONE_WORD = dataLengthOf(1);
const TWO_WORDS = dataLengthOf(2);
const THREE_WORDS = dataLengthOf(3);
const FOUR_WORDS = dataLengthOf(4);

/** The shape of a log, or undefined when it is none of them (another event, or a malformed one). */
export function eventShape(log: ChainLog): EventShape | undefined {
  const { topics, data } = log;
  switch (topics[0]) {
    case TRANSFER_TOPIC:
      if (topics.length === 4) return data.length === 2 ? "erc721-transfer" : undefined;
      if (topics.length === 3) return data.length === ONE_WORD ? "erc20-transfer" : undefined;
      if (topics.length === 1) return data.length === THREE_WORDS ? "unindexed-transfer" : undefined;
      return undefined;
    case TRANSFER_SINGLE_TOPIC:
      return topics.length === 4 && data.length === TWO_WORDS ? "erc1155-transfer" : undefined;
    case TRANSFER_BATCH_TOPIC:
      // Two arrays: at least two offsets and two lengths.
      return topics.length === 4 && data.length >= FOUR_WORDS ? "erc1155-transfer" : undefined;
    case CONSECUTIVE_TRANSFER_TOPIC:
      return topics.length === 4 && data.length === ONE_WORD ? "consecutive-transfer" : undefined;
    case PUNK_ASSIGN_TOPIC:
      return topics.length === 2 && data.length === ONE_WORD ? "punk-assign" : undefined;
    case PUNK_TRANSFER_TOPIC:
      return topics.length === 3 && data.length === ONE_WORD ? "punk-transfer" : undefined;
    case PUNK_BOUGHT_TOPIC:
      return topics.length === 4 && data.length === ONE_WORD ? "punk-transfer" : undefined;
    default:
      return undefined;
  }
}

/** The shapes each contract emitted among `logs`, for classifying it. */
export function emittedShapes(logs: readonly ChainLog[]): Map<Address, Set<EventShape>> {
  const byContract = new Map<Address, Set<EventShape>>();
  for (const log of logs) {
    const shape = eventShape(log);
    if (shape === undefined) continue;
    let shapes = byContract.get(log.address);
    if (shapes === undefined) {
      shapes = new Set();
      byContract.set(log.address, shapes);
    }
    shapes.add(shape);
  }
  return byContract;
}
