import type { Address, Hex } from "../core/hex.ts";
import type { BlockHeader, BlockTraces, ChainLog, ContractCreation, TransactionCall } from "../core/types.ts";

/** Which trace API the node offers, probed once. */
export type TraceApi = "parity" | "geth" | "none";

export interface RpcOptions {
  url: string;
  /** Requests per JSON-RPC batch. */
  batchSize?: number;
  /** Per-request timeout in milliseconds. */
  timeoutMs?: number;
  /** Attempts for a transient fault before giving up with a clear message. */
  retries?: number;
  /** First backoff delay in milliseconds; doubles each attempt, with jitter. */
  retryBaseMs?: number;
  /** Most blocks asked of eth_getLogs at once; the range is split further when the node refuses. */
  maxLogRange?: number;
  /** Most HTTP requests under way at once (each may be a batch); further requests queue. */
  maxInFlight?: number;
  /** Most eth_getLogs sub-ranges fetched at once by one getLogs call. */
  logConcurrency?: number;
}

/**
 * Everything the indexer asks of a JSON-RPC node. Implementations retry transient faults,
 * split log ranges the node refuses, and validate what they return; callers trust the types.
 */
export interface ChainClient {
  readonly url: string;
  chainId(): Promise<number>;
  blockNumber(): Promise<number>;
  /** Logs of [from, to] whose first topic is one of `topic0`, ordered by (block, logIndex). */
  /** Logs of blocks [from, to] whose first topic is one of `topic0`, of the `addresses` only when given. */
  getLogs(from: number, to: number, topic0: readonly Hex[], addresses?: readonly Hex[]): Promise<ChainLog[]>;
  /**
   * Logs of the block with this hash (EIP-234) whose first topic is one of `topic0`. A node without that
   * exact block fails rather than answering nothing, so an empty answer can be trusted.
   */
  getBlockLogs(blockHash: Hex, blockNumber: number, topic0: readonly Hex[]): Promise<ChainLog[]>;
  /** Headers of the given blocks, in the order asked. */
  getHeaders(numbers: readonly number[]): Promise<BlockHeader[]>;
  getCode(address: Address, block?: number): Promise<Hex>;
  /** eth_call; undefined when the call reverts or the account has no code. */
  call(to: Address, data: Hex, block?: number): Promise<Hex | undefined>;
  /**
   * The sender of the transaction at `index` in block `blockHash`, which must be `hash`. Looked up by
   * block and position: nodes that prune their transaction index answer a lookup by hash with null.
   */
  getTransactionSender(tx: { blockHash: Hex; index: number; hash: Hex }): Promise<Address>;
  /** A transaction's sender, recipient and value, read by its block's hash and its index. */
  getTransaction(tx: { blockHash: Hex; index: number; hash: Hex }): Promise<TransactionCall>;
  /**
   * Which trace API the node offers, found once by tracing `probeBlock` (the head by default):
   * a node that cannot trace that block (no trace API, or a full node without its state) has none.
   */
  traceApi(probeBlock?: number): Promise<TraceApi>;
  /** Contracts created in [from, to], from call traces (every CREATE/CREATE2 that succeeded). */
  getTracedCreations(from: number, to: number): Promise<ContractCreation[]>;
  /** Creations and native-coin movements of blocks [from, to], from call traces. */
  getTraces(from: number, to: number): Promise<BlockTraces>;
  /** Contracts created by top-level deployments in [from, to], from receipts (no factories). */
  getReceiptCreations(from: number, to: number): Promise<ContractCreation[]>;
  close(): Promise<void>;
}
