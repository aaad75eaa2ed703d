import { type Address, wordToAddress, ZERO_ADDRESS } from "../../core/hex.ts";
import type { ChainLog, NftTransfer } from "../../core/types.ts";
import { nftTransfer } from "./records.ts";
import { dataLengthOf, uintWord } from "./words.ts";

/*
 * CryptoPunks predates ERC-721 and logs its own events:
 *   Assign(address indexed to, uint256 punkIndex)                       a punk handed out: its mint
 *   PunkTransfer(address indexed from, address indexed to, uint256 punkIndex)
 *   PunkBought(uint256 indexed punkIndex, uint256 value, address indexed fromAddress, address indexed toAddress)
 * Right before each PunkTransfer and PunkBought the contract also emits an ERC-20-shaped
 * `Transfer(from, to, 1)` (its "balance" moving), which names no punk. That shadow is paired with
 * the punk event and consumed, so each move counts once. The pairing also repairs a bug of the
 * original contract: acceptBidForPunk clears the bid before logging it, so its PunkBought says
 * value 0 and toAddress 0x0; the bidder is then the shadow's recipient.
 */

const ONE_WORD = dataLengthOf(1);

interface Shadow {
  log: ChainLog;
  from: Address;
  to: Address;
}

/**
 * Decodes the punk events of one batch of logs, which must come in (block, log index) order as
 * eth_getLogs returns them. Each decoding method returns undefined for a malformed log.
 */
export class PunkDecoder {
  /** Shadows waiting for their punk event, by transaction and contract. */
  readonly #pending = new Map<string, Shadow[]>();

  /** Holds a `Transfer(from, to, 1)` of a punks contract for the punk event that follows it. */
  shadow(log: ChainLog): boolean {
    const { topics, data } = log;
    const from = topics[1];
    const to = topics[2];
    if (topics.length !== 3 || from === undefined || to === undefined || data.length !== ONE_WORD)
      return false;
    const key = pairKey(log);
    const shadow: Shadow = { log, from: wordToAddress(from), to: wordToAddress(to) };
    const waiting = this.#pending.get(key);
    if (waiting === undefined) this.#pending.set(key, [shadow]);
    else waiting.push(shadow);
    return true;
  }

  assign(log: ChainLog): NftTransfer | undefined {
    const { topics, data } = log;
    const to = topics[1];
    if (topics.length !== 2 || to === undefined || data.length !== ONE_WORD) return undefined;
    return nftTransfer(log, "punks", uintWord(data, 0), ZERO_ADDRESS, wordToAddress(to), 1n, 0);
  }

  transfer(log: ChainLog): NftTransfer | undefined {
    const { topics, data } = log;
    const fromTopic = topics[1];
    const toTopic = topics[2];
    if (topics.length !== 3 || fromTopic === undefined || toTopic === undefined || data.length !== ONE_WORD) {
      return undefined;
    }
    const punkIndex = uintWord(data, 0);
    const from = wordToAddress(fromTopic);
    this.#take(log, from);
    return nftTransfer(log, "punks", punkIndex, from, wordToAddress(toTopic), 1n, 0);
  }

  bought(log: ChainLog): NftTransfer | undefined {
    const { topics, data } = log;
    const punkTopic = topics[1];
    const fromTopic = topics[2];
    const toTopic = topics[3];
    if (
      topics.length !== 4 ||
      punkTopic === undefined ||
      fromTopic === undefined ||
      toTopic === undefined ||
      data.length !== ONE_WORD
    ) {
      return undefined;
    }
    const punkIndex = BigInt(punkTopic);
    const from = wordToAddress(fromTopic);
    let to = wordToAddress(toTopic);
    const shadow = this.#take(log, from);
    if (to === ZERO_ADDRESS) {
      // acceptBidForPunk's event: without its shadow the buyer is unknown.
      if (shadow === undefined) return undefined;
      to = shadow.to;
    }
    return nftTransfer(log, "punks", punkIndex, from, to, 1n, 0);
  }

  /** Shadows no punk event claimed: the contract never emits those, so they are malformed. */
  unpaired(): ChainLog[] {
    const logs: ChainLog[] = [];
    for (const waiting of this.#pending.values()) for (const shadow of waiting) logs.push(shadow.log);
    return logs;
  }

  /**
   * The shadow emitted just before `log` (the latest one still waiting in the same transaction)
   * when it moves the punk from the same owner; a shadow from someone else belongs to another move.
   */
  #take(log: ChainLog, from: Address): Shadow | undefined {
    const waiting = this.#pending.get(pairKey(log));
    const last = waiting?.at(-1);
    if (waiting === undefined || last === undefined || last.from !== from) return undefined;
    if (last.log.blockNumber !== log.blockNumber || last.log.logIndex >= log.logIndex) return undefined;
    waiting.pop();
    return last;
  }
}

function pairKey(log: ChainLog): string {
  return `${log.transactionHash}:${log.address}`;
}
