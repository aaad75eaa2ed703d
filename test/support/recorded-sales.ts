/**
 * Turns recorded mainnet data (receipt logs, parity traces, transactions) into what sale
 * attribution reads, through the product's own decoders: decodeLogs for transfers,
 * parseParityBlockTraceData for native movements, decodeMarketEvent for markets, and
 * saleTransactions to gather them per transaction.
 */

import { parseParityBlockTraceData } from "../../src/chain/traces.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ChainLog, ContractType, NativeTransfer } from "../../src/core/types.ts";
import { decodeLogs } from "../../src/indexer/decode/decode-logs.ts";
import type { TypesOf } from "../../src/indexer/decode/readings.ts";
import {
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
} from "../../src/indexer/decode/topics.ts";
import { decodeMarketEvent } from "../../src/sales/markets.ts";
import { saleTransactions, type TransactionInfo } from "../../src/sales/transactions.ts";
import type { MarketEvent, SaleTransaction } from "../../src/sales/types.ts";

export interface RecordedTransaction extends TransactionInfo {
  hash: Hex;
}

export interface RecordedSales {
  sales: SaleTransaction[];
  /** Transfer logs the decoder could not read: a recording that needs them is incomplete. */
  unread: ChainLog[];
}

/**
 * The contract types a recording shows for each emitter. The indexer classifies contracts from
 * their code; a recording has no code, so each emitter is typed from the layout of what it logged,
 * the way the standards tell them apart: a `Transfer` with four topics is ERC-721, with three
 * topics and one data word ERC-20, and TransferSingle/TransferBatch are ERC-1155.
 */
export function typesFromShapes(logs: readonly ChainLog[]): TypesOf {
  const types = new Map<Address, Set<ContractType>>();
  const add = (address: Address, type: ContractType) => {
    const set = types.get(address) ?? new Set<ContractType>();
    set.add(type);
    types.set(address, set);
  };
  for (const log of logs) {
    const topic0 = log.topics[0];
    if (topic0 === TRANSFER_TOPIC && log.topics.length === 4) add(log.address, "TYPE_ERC721");
    else if (topic0 === TRANSFER_TOPIC && log.topics.length === 3 && log.data.length === 66)
      add(log.address, "TYPE_ERC20");
    else if (topic0 === TRANSFER_SINGLE_TOPIC || topic0 === TRANSFER_BATCH_TOPIC)
      add(log.address, "TYPE_ERC1155");
  }
  return (address) => types.get(address);
}

/**
 * The SaleTransactions of a recording. `native` undefined means no traces were recorded: the
 * transactions' own values are then all that is known to have moved. `markets` adds marketplace
 * events known without their logs.
 */
export function recordedSales(input: {
  logs: readonly ChainLog[];
  native: readonly NativeTransfer[] | undefined;
  transactions: readonly RecordedTransaction[];
  markets?: readonly (MarketEvent & { txHash: Hex })[];
}): RecordedSales {
  const decoded = decodeLogs(input.logs, typesFromShapes(input.logs));
  const markets: (MarketEvent & { txHash: Hex })[] = [...(input.markets ?? [])];
  for (const log of input.logs) {
    const event = decodeMarketEvent(log);
    if (event) markets.push({ ...event, txHash: log.transactionHash });
  }
  const sales = saleTransactions({
    nft: decoded.nft,
    fungible: decoded.fungible,
    native: input.native,
    markets,
    transactions: new Map(input.transactions.map((t) => [t.hash, t])),
  });
  return { sales, unread: [...decoded.malformed, ...decoded.unclassified] };
}

/** Native movements of parity frames of one block (trace_transaction frames have trace_block's fields). */
export function nativeFromParity(frames: readonly unknown[], blockNumber: number): NativeTransfer[] {
  return parseParityBlockTraceData(frames, blockNumber).native;
}

/** A receipt log as eth_getTransactionReceipt returns it, as the chain layer hands logs on. */
export function rpcLog(raw: {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  logIndex: string;
  transactionHash: string;
  transactionIndex: string;
}): ChainLog {
  return {
    address: raw.address.toLowerCase() as Address,
    topics: raw.topics.map((t) => t.toLowerCase() as Hex),
    data: raw.data.toLowerCase() as Hex,
    blockNumber: Number(raw.blockNumber),
    blockHash: raw.blockHash.toLowerCase() as Hex,
    logIndex: Number(raw.logIndex),
    transactionHash: raw.transactionHash.toLowerCase() as Hex,
    transactionIndex: Number(raw.transactionIndex),
  };
}

/** A parity frame recorded with snake_case keys (mev-inspect-py), in the node's camelCase form. */
export function camelCaseFrame(frame: Record<string, unknown>): Record<string, unknown> {
  return {
    action: frame.action,
    result: frame.result,
    error: frame.error,
    subtraces: frame.subtraces,
    type: frame.type,
    traceAddress: frame.trace_address,
    transactionHash: frame.transaction_hash,
    transactionPosition: frame.transaction_position,
    blockHash: frame.block_hash,
    blockNumber: frame.block_number,
  };
}

const word = (value: bigint | number | string) => `0x${BigInt(value).toString(16).padStart(64, "0")}` as Hex;

/** An ERC-721 `Transfer` or ERC-1155 `TransferSingle` log, for recordings that list movements, not logs. */
export function transferLog(
  at: { blockNumber: number; txHash: Hex; txIndex: number; logIndex: number },
  contract: Address,
  from: Address,
  to: Address,
  tokenId: bigint,
  amount?: bigint,
): ChainLog {
  const base = {
    address: contract,
    blockNumber: at.blockNumber,
    blockHash: word(at.blockNumber),
    logIndex: at.logIndex,
    transactionHash: at.txHash,
    transactionIndex: at.txIndex,
  };
  if (amount === undefined) {
    return { ...base, topics: [TRANSFER_TOPIC, word(from), word(to), word(tokenId)], data: "0x" };
  }
  return {
    ...base,
    topics: [TRANSFER_SINGLE_TOPIC, word(from), word(from), word(to)],
    data: `0x${word(tokenId).slice(2)}${word(amount).slice(2)}`,
  };
}

const NFT_TRANSFER_CALLS = new Set(["0x23b872dd", "0x42842e0e", "0xb88d4fde"]);
const ERC1155_SAFE_TRANSFER = "0xf242432a";

/**
 * The NFT `Transfer` logs a block's successful calls must have produced, for recordings of traces
 * without logs. `transferFrom`/`safeTransferFrom` share a selector with ERC-20's `transferFrom`; an
 * ERC-721 returns nothing, an ERC-20 a boolean, so a call with empty output is read as ERC-721
 * (an ERC-20 that returns nothing, like USDT, is misread as an NFT moved for no payment, which
 * attribution drops). Log indexes follow execution order within the block.
 */
export function nftLogsFromCalls(frames: readonly Record<string, unknown>[]): ChainLog[] {
  const failed = new Set<string>();
  for (const f of frames) {
    if (f.error !== null && f.error !== undefined)
      failed.add(`${f.transactionHash}:${(f.traceAddress as number[]).join(",")}`);
  }
  const logs: ChainLog[] = [];
  for (const f of frames) {
    if (f.type !== "call" || typeof f.transactionHash !== "string") continue;
    const action = f.action as Record<string, string>;
    const input = action.input ?? "";
    const selector = input.slice(0, 10);
    if (action.callType !== "call") continue;
    const output = (f.result as Record<string, string> | null)?.output;
    const path = f.traceAddress as number[];
    const reverted = path.some((_, depth) =>
      failed.has(`${f.transactionHash}:${path.slice(0, depth + 1).join(",")}`),
    );
    if (reverted || failed.has(`${f.transactionHash}:`)) continue;
    const arg = (i: number) => `0x${input.slice(10 + i * 64, 74 + i * 64)}`;
    const at = {
      blockNumber: f.blockNumber as number,
      txHash: f.transactionHash as Hex,
      txIndex: f.transactionPosition as number,
      logIndex: logs.length,
    };
    const address = (i: number) => `0x${arg(i).slice(-40)}` as Address;
    const contract = action.to as Address;
    if (NFT_TRANSFER_CALLS.has(selector) && output === "0x") {
      logs.push(transferLog(at, contract, address(0), address(1), BigInt(arg(2))));
    } else if (selector === ERC1155_SAFE_TRANSFER) {
      logs.push(transferLog(at, contract, address(0), address(1), BigInt(arg(2)), BigInt(arg(3))));
    }
  }
  return logs;
}
