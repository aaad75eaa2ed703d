import type { Address, Hex } from "../core/hex.ts";
import type {
  BlockHeader,
  ContractCreation,
  FungibleTransfer,
  MetadataUpdate,
  NativeTransfer,
  NftTransfer,
  TransactionCall,
  ValueFlow,
} from "../core/types.ts";
import type { PoolState } from "../rates/events.ts";
import type { PunkBidEvent } from "../sales/markets.ts";
import type { MarketEvent } from "../sales/types.ts";
import type { SkippedLog } from "../store/tables/skipped-logs.ts";
import type { PunkOfferEvent } from "./decode/punk-offers.ts";

/** Where a contract was first seen, when its deployment was not observed. */
export interface FirstSeen {
  txHash: Hex;
  blockNumber: number;
  minter: Address;
}

/** Everything read from the node for blocks [from, to], validated and decoded, ready to commit. */
export interface FetchedBatch {
  from: number;
  to: number;
  /** The end asked for: a batch whose expansion is too large ends before it. */
  requestedTo: number;
  /** Every header of the range, in order. */
  headers: BlockHeader[];
  nft: NftTransfer[];
  fungible: FungibleTransfer[];
  creations: ContractCreation[];
  /** How the creations were observed. */
  creationSource: "trace" | "receipt";
  /** Contracts inspected for this batch and not stored yet: the batch commits them. */
  contracts: Address[];
  /** Where those of them whose deployment is not stored were first seen. */
  firstSeen: Map<Address, FirstSeen>;
  logCount: number;
  /** Transfer-topic logs read but not indexed, with the reason. */
  skipped: SkippedLog[];
  /** The sender, recipient and value of each transaction that moved an NFT. */
  calls: Map<Hex, TransactionCall>;
  /** Native-coin movements of those transactions, from call traces; absent without them. */
  native?: NativeTransfer[];
  /** Marketplace events of those transactions. */
  markets: (MarketEvent & { txHash: Hex })[];
  /** CryptoPunks bids entered and withdrawn, in chain order. */
  punkBids: PunkBidEvent[];
  /** CryptoPunks offers made and ended, in chain order (offers to one address end the public one). */
  punkOffers: PunkOfferEvent[];
  /** Every change of the followed liquidity pools, in chain order. */
  poolStates: PoolState[];
  /** Tokens whose metadata an EIP-4906 event said changed. */
  metadataUpdates: MetadataUpdate[];
  /**
   * Value sent in the transactions that moved no NFT (native coin from the traces, native-pegged
   * tokens from the logs), in chain order, for the funder rule; absent when the batch was not read
   * from a node (tests, benchmarks).
   */
  flows?: ValueFlow[];
}

export function timeOfBatch(batch: Pick<FetchedBatch, "from" | "headers">): (blockNumber: number) => number {
  return (blockNumber) => {
    const header = batch.headers[blockNumber - batch.from];
    if (!header) throw new RangeError(`block ${blockNumber} is outside the batch starting at ${batch.from}`);
    return header.timestamp;
  };
}
