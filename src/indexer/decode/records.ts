import type { Address } from "../../core/hex.ts";
import type { ChainLog, FungibleTransfer, NftTransfer, TransferStandard } from "../../core/types.ts";

/** Where the per-event decoders put what they read. */
export interface DecodeSink {
  nft: NftTransfer[];
  /** ERC-20 transfers before the filter that keeps those of NFT transactions. */
  fungible: FungibleTransfer[];
  malformed: ChainLog[];
  unclassified: ChainLog[];
  spam: SpamLog[];
}

/** A log whose expansion was refused, with the number of tokens it claimed. */
export interface SpamLog {
  log: ChainLog;
  tokens: bigint;
}

export function nftTransfer(
  log: ChainLog,
  standard: TransferStandard,
  tokenId: bigint,
  from: Address,
  to: Address,
  amount: bigint,
  seq: number,
): NftTransfer {
  return {
    contract: log.address,
    tokenId,
    from,
    to,
    amount,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    seq,
    txHash: log.transactionHash,
    txIndex: log.transactionIndex,
    standard,
  };
}

export function fungibleTransfer(
  log: ChainLog,
  from: Address,
  to: Address,
  amount: bigint,
): FungibleTransfer {
  return {
    contract: log.address,
    from,
    to,
    amount,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    txHash: log.transactionHash,
    txIndex: log.transactionIndex,
  };
}
