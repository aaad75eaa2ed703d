import type { Address, Hex } from "../core/hex.ts";
import type { FungibleTransfer, NativeTransfer, NftTransfer } from "../core/types.ts";
import type { MarketEvent, SaleTransaction } from "./types.ts";

/** A transaction's sender, recipient and value, as its top-level call or the node's transaction record gives them. */
export interface TransactionInfo {
  from: Address;
  to: Address | null;
  value: bigint;
}

export interface SaleInputs {
  nft: readonly NftTransfer[];
  fungible: readonly FungibleTransfer[];
  /** Native movements of the batch from call traces; undefined when the node has none. */
  native: readonly NativeTransfer[] | undefined;
  /** Marketplace events, each with the hash of its transaction. */
  markets: readonly (MarketEvent & { txHash: Hex })[];
  transactions: ReadonlyMap<Hex, TransactionInfo>;
}

/**
 * Gathers, for each transaction that moved an NFT, everything attribution reads about it, in
 * chain order. Movements of other transactions are left out.
 */
export function saleTransactions(inputs: SaleInputs): SaleTransaction[] {
  const byTx = new Map<Hex, SaleTransaction & { nft: NftTransfer[] }>();
  for (const t of inputs.nft) {
    let tx = byTx.get(t.txHash);
    if (!tx) {
      const info = inputs.transactions.get(t.txHash);
      if (!info) throw new Error(`no sender and value known for transaction ${t.txHash}`);
      tx = {
        txHash: t.txHash,
        txIndex: t.txIndex,
        blockNumber: t.blockNumber,
        from: info.from,
        to: info.to,
        value: info.value,
        nft: [],
        fungible: [],
        native: inputs.native === undefined ? undefined : [],
        markets: [],
      };
      byTx.set(t.txHash, tx);
    }
    tx.nft.push(t);
  }
  for (const f of inputs.fungible) (byTx.get(f.txHash)?.fungible as FungibleTransfer[] | undefined)?.push(f);
  if (inputs.native) {
    for (const n of inputs.native) (byTx.get(n.txHash)?.native as NativeTransfer[] | undefined)?.push(n);
  }
  for (const m of inputs.markets) {
    const { txHash, ...event } = m;
    (byTx.get(txHash)?.markets as MarketEvent[] | undefined)?.push(event);
  }
  return [...byTx.values()].sort((a, b) => a.blockNumber - b.blockNumber || a.txIndex - b.txIndex);
}
