import type { Address, Hex } from "./hex.ts";

/** Contract type identifiers, as the API names them. A contract may have several. */
export const CONTRACT_TYPES = [
  "TYPE_ERC20",
  "TYPE_ERC721",
  "TYPE_ERC1155",
  "TYPE_ERC721_LEGACY",
  "TYPE_CRYPTOPUNKS",
] as const;
export type ContractType = (typeof CONTRACT_TYPES)[number];

/** The event standard a transfer was decoded from. */
export type TransferStandard = "erc721" | "erc1155" | "legacy" | "punks" | "erc2309";

/** A log as the chain layer hands it on: numbers parsed, addresses lower-case, validated against its block. */
export interface ChainLog {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
  blockNumber: number;
  blockHash: Hex;
  logIndex: number;
  transactionHash: Hex;
  transactionIndex: number;
}

export interface BlockHeader {
  number: number;
  hash: Hex;
  parentHash: Hex;
  /** Unix seconds. */
  timestamp: number;
  /** 2048-bit bloom of every log's address and topics: what the block may hold, to check an empty answer against. */
  logsBloom: Hex;
}

/** A contract created in a block, seen in call traces or receipts. */
export interface ContractCreation {
  address: Address;
  /** The account whose CREATE/CREATE2 made it (a factory, or the sender for a direct deployment). */
  creator: Address;
  /** The transaction's sender. */
  txFrom: Address;
  txHash: Hex;
  blockNumber: number;
  /** The hash of the block the trace or receipt was of: it must be the header's, or the two are of different forks. */
  blockHash: Hex;
}

/** One unit-level movement of an NFT. Multi-token events expand into several, told apart by `seq`. */
export interface NftTransfer {
  contract: Address;
  tokenId: bigint;
  from: Address;
  to: Address;
  amount: bigint;
  blockNumber: number;
  logIndex: number;
  /** Position inside a multi-token event (TransferBatch, ConsecutiveTransfer); 0 otherwise. */
  seq: number;
  txHash: Hex;
  txIndex: number;
  standard: TransferStandard;
}

/** An ERC-20 movement, kept for the transactions that also move NFTs (they are the payments). */
export interface FungibleTransfer {
  contract: Address;
  from: Address;
  to: Address;
  amount: bigint;
  blockNumber: number;
  logIndex: number;
  txHash: Hex;
  txIndex: number;
}

/**
 * Native coin moved between two accounts inside a transaction: a call frame carrying value, a
 * contract created with an endowment, or a self-destruct sending its balance. Only movements whose
 * frame and every frame above it succeeded: a reverted frame moved nothing.
 */
export interface NativeTransfer {
  txHash: Hex;
  from: Address;
  to: Address;
  value: bigint;
  /** Where the transaction stands in the chain: funding is read strictly before a sale's position. */
  blockNumber: number;
  txIndex: number;
}

/**
 * Value sent in a transaction that moved no NFT: native coin (`token` null) or a native-pegged
 * ERC-20, with the transaction's position and its block's time (unix seconds).
 */
export interface ValueFlow {
  from: Address;
  to: Address;
  token: Address | null;
  value: bigint;
  blockNumber: number;
  txIndex: number;
  time: number;
  /**
   * Moved in a transaction that moved an NFT: part of a trade, so never funding; read only for
   * proceeds forwarded within a sale's own transaction.
   */
  inTrade?: true;
}

/** A transaction's sender, recipient (null for a deployment) and the value it sent. */
export interface TransactionCall {
  txHash: Hex;
  from: Address;
  to: Address | null;
  value: bigint;
}

/** What a block's call traces tell: its contract creations, every movement of the native coin, and each transaction's call. */
export interface BlockTraces {
  creations: ContractCreation[];
  native: NativeTransfer[];
  calls: TransactionCall[];
  /** The hash of each traced block that had a transaction: it must be the header's. */
  tracedBlocks: { number: number; hash: Hex }[];
}

/**
 * A liquidity pool's state after one of its logs: one pool_states row. V2 states carry both
 * reserves, V3 states the price and the in-range liquidity (a V3 pool's token balances say
 * nothing of its price).
 */
export interface PoolState {
  pool: Address;
  blockNumber: number;
  logIndex: number;
  /** Unix seconds of the state's block; absent in rows stored before block times were kept. */
  blockTime?: number;
  reserve0?: bigint;
  reserve1?: bigint;
  sqrtPriceX96?: bigint;
  /** V3: the in-range liquidity after the log (0 at `Initialize`); absent in older rows. */
  liquidity?: bigint;
}

/** An exact exchange rate: `num / den` of the target unit per base unit of the source. */
export interface Rate {
  readonly num: bigint;
  readonly den: bigint;
}

/** What a chain's prices are converted with, at one block. */
export interface PriceContext {
  /** Wei per base unit of an ERC-20 at that block; undefined when no rate is known for it. */
  toNative(token: Address): Rate | undefined;
  /** USD per wei at that block; undefined when the chain has no USD rate yet. */
  usdPerWei: Rate | undefined;
  /**
   * Whether a token's rate at that block moved past the configured bound from the rate of the
   * window before it; absent where rates have no history to be judged against.
   */
  isOutlier?(token: Address): boolean;
}

/** Tokens `fromTokenId`..`toTokenId` (inclusive) of `contract` whose metadata is to be fetched again (EIP-4906). */
export interface MetadataUpdate {
  contract: Address;
  fromTokenId: bigint;
  toTokenId: bigint;
}

/** A stored sale by its key (the chain aside), with its collection and time: where the rollups count it. */
export interface SaleKey {
  contract: Address;
  blockNumber: number;
  logIndex: number;
  seq: number;
  seller: Address;
  /** Unix seconds of its block. */
  time: number;
}

/**
 * A wash rule that fired on a sale after the sale itself was seen: by a later sale that closed a
 * cycle it was a leg of, or by a later payment that handed its proceeds back. `blockNumber` and
 * `txIndex` are those of the transaction that gave the verdict.
 */
export interface SaleVerdict {
  sale: SaleKey;
  rule: string;
  blockNumber: number;
  txIndex: number;
}

/** A token's sale before the one being flagged, as the cycle rule reads it, with its key in the store. */
export interface PastSale {
  seller: Address;
  buyer: Address;
  /** Unix seconds of its block. */
  time: number;
  blockNumber: number;
  logIndex: number;
  seq: number;
}
