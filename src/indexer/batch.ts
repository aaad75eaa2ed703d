import type { Address, Hex } from "../core/hex.ts";
import type { BlockHeader, ContractCreation, FungibleTransfer, NftTransfer } from "../core/types.ts";

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
  /** Every header of the range, in order. */
  headers: BlockHeader[];
  nft: NftTransfer[];
  fungible: FungibleTransfer[];
  creations: ContractCreation[];
  /** How the creations were observed. */
  creationSource: "trace" | "receipt";
  /** Contracts the batch involves (emitters of decoded transfers, created contracts). */
  referenced: Address[];
  /** For involved contracts not stored when the batch was fetched. */
  firstSeen: Map<Address, FirstSeen>;
  logCount: number;
  malformed: number;
}

export function timeOfBatch(batch: Pick<FetchedBatch, "from" | "headers">): (blockNumber: number) => number {
  return (blockNumber) => {
    const header = batch.headers[blockNumber - batch.from];
    if (!header) throw new RangeError(`block ${blockNumber} is outside the batch starting at ${batch.from}`);
    return header.timestamp;
  };
}
