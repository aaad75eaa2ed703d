import type { ChainLog, FungibleTransfer, NftTransfer } from "../../core/types.ts";
import { decodeTransferBatch, decodeTransferSingle } from "./erc1155.ts";
import {
  CONSECUTIVE_BUDGET_PER_BLOCK,
  CONSECUTIVE_BUDGET_PER_CONTRACT_BLOCK,
  consecutiveRange,
  expandConsecutive,
} from "./erc2309.ts";
import { PunkDecoder } from "./punks.ts";
import type { TypesOf } from "./readings.ts";
import type { DecodeSink, SpamLog } from "./records.ts";
import {
  CONSECUTIVE_TRANSFER_TOPIC,
  PUNK_ASSIGN_TOPIC,
  PUNK_BOUGHT_TOPIC,
  PUNK_TRANSFER_TOPIC,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
  TRANSFER_TOPICS,
} from "./topics.ts";
import { decodeTransfer } from "./transfer.ts";

const _TRANSFER_EVENT_TOPICS: ReadonlySet<string> = new Set(TRANSFER_TOPICS);

export interface DecodedLogs {
  /** NFT movements, in log order; multi-token events expand in place, in `seq` order. */
  nft: NftTransfer[];
  /** ERC-20 movements of the transactions that also move an NFT: the candidate payments. */
  fungible: FungibleTransfer[];
  /** Transfer events whose layout does not match their declaration, or that contradict themselves. */
  malformed: ChainLog[];
  /**
   * Logs the emitter's types give no reading of (the contract is unclassified, or was classified
   * before it emitted this kind of log). Classify their emitters, then decode these again.
   */
  unclassified: ChainLog[];
  /** ERC-2309 events past the expansion budget of their (contract, block) or block: not expanded. */
  spam: SpamLog[];
}

/**
 * Turns one batch of logs, in (block, log index) order, into transfers. Pure and total: a log it
 * cannot read lands in `malformed` or `unclassified`, and nothing throws.
 *
 * ERC-1155 and ERC-2309 events are read from their layout alone. A `Transfer` with the token id
 * indexed, or with nothing indexed, is an NFT move unless its emitter is an ERC-20 and nothing
 * else (isFungibleOnly); the ERC-20-shaped one needs the emitter's types (ValueTransferReading),
 * and so do the CryptoPunks events. Logs of other events, and punk events of contracts not typed
 * TYPE_CRYPTOPUNKS, are ignored.
 */
export function decodeLogs(logs: readonly ChainLog[], typesOf: TypesOf): DecodedLogs {
  const sink: DecodeSink = { nft: [], fungible: [], malformed: [], unclassified: [], spam: [] };
  const punks = new PunkDecoder();
  const budget = new ExpansionBudget();
  for (const log of logs) {
    try {
      decodeLog(log, typesOf, punks, budget, sink);
    } catch {
      // Only a non-hex character in a node's answer gets here (BigInt rejects it).
      sink.malformed.push(log);
    }
  }
  for (const log of punks.unpaired()) sink.malformed.push(log);
  if (sink.malformed.length > 1) sink.malformed.sort(byPosition);

  const nftTransactions = new Set<string>();
  for (const transfer of sink.nft) nftTransactions.add(transfer.txHash);
  const fungible = sink.fungible.filter((transfer) => nftTransactions.has(transfer.txHash));
  return {
    nft: sink.nft,
    fungible,
    malformed: sink.malformed,
    unclassified: sink.unclassified,
    spam: sink.spam,
  };
}

/**
 * What ERC-2309 events have expanded into so far, per (contract, block) and per block. Logs come in
 * block order, so the per-block tallies restart at each new block.
 */
class ExpansionBudget {
  private block = -1;
  private blockTotal = 0n;
  private readonly perContract = new Map<string, bigint>();

  /** Takes `count` tokens from the budget of the log's contract and block, if both have room. */
  take(log: ChainLog, count: bigint): boolean {
    if (log.blockNumber !== this.block) {
      this.block = log.blockNumber;
      this.blockTotal = 0n;
      this.perContract.clear();
    }
    const used = this.perContract.get(log.address) ?? 0n;
    if (used + count > CONSECUTIVE_BUDGET_PER_CONTRACT_BLOCK) return false;
    if (this.blockTotal + count > CONSECUTIVE_BUDGET_PER_BLOCK) return false;
    this.perContract.set(log.address, used + count);
    this.blockTotal += count;
    return true;
  }
}

function decodeLog(
  log: ChainLog,
  typesOf: TypesOf,
  punks: PunkDecoder,
  budget: ExpansionBudget,
  sink: DecodeSink,
): void {
  switch (log.topics[0]) {
    case TRANSFER_TOPIC:
      decodeTransfer(log, typesOf(log.address), punks, sink);
      return;
    case TRANSFER_SINGLE_TOPIC: {
      const transfer = decodeTransferSingle(log);
      if (transfer === undefined) sink.malformed.push(log);
      else if (transfer !== null) sink.nft.push(transfer);
      return;
    }
    case TRANSFER_BATCH_TOPIC:
      pushAll(sink, log, decodeTransferBatch(log));
      return;
    case CONSECUTIVE_TRANSFER_TOPIC: {
      const range = consecutiveRange(log);
      if (range === undefined) sink.malformed.push(log);
      else if (!budget.take(log, range.count)) sink.spam.push({ log, tokens: range.count });
      else for (const transfer of expandConsecutive(log, range)) sink.nft.push(transfer);
      return;
    }
    case PUNK_ASSIGN_TOPIC:
    case PUNK_TRANSFER_TOPIC:
    case PUNK_BOUGHT_TOPIC: {
      const types = typesOf(log.address);
      if (types === undefined) {
        sink.unclassified.push(log);
        return;
      }
      // Other contracts may declare an event of the same signature; only a punks contract's count.
      if (!types.has("TYPE_CRYPTOPUNKS")) return;
      const transfer =
        log.topics[0] === PUNK_ASSIGN_TOPIC
          ? punks.assign(log)
          : log.topics[0] === PUNK_TRANSFER_TOPIC
            ? punks.transfer(log)
            : punks.bought(log);
      if (transfer === undefined) sink.malformed.push(log);
      else sink.nft.push(transfer);
      return;
    }
  }
}

function pushAll(sink: DecodeSink, log: ChainLog, transfers: NftTransfer[] | undefined): void {
  if (transfers === undefined) sink.malformed.push(log);
  else for (const transfer of transfers) sink.nft.push(transfer);
}

function byPosition(a: ChainLog, b: ChainLog): number {
  return a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
}
