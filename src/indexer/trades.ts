import type { Address } from "../core/hex.ts";
import { attributeTransaction, type BidLookup } from "../sales/attribute.ts";
import { type PriceContext, type PricedTrade, priceTrade } from "../sales/price.ts";
import { saleTransactions } from "../sales/transactions.ts";
import type { MarketEvent } from "../sales/types.ts";
import { type LastSales, type SaleBucketDelta, type SaleRow, tokenKey } from "../store/sales.ts";
import type { FetchedBatch } from "./batch.ts";
import { bucketStart } from "./effects.ts";

/** How a chain's payments are valued, at a block. */
export type PricesAt = (blockNumber: number) => PriceContext;

export interface BatchTrades {
  rows: SaleRow[];
  buckets: SaleBucketDelta[];
  /** The parties of the latest sale of each token sold in the batch: what the next batch starts from. */
  lastSalesAfter: Map<string, { seller: Address; buyer: Address }>;
}

/**
 * The trades of a batch, priced at their blocks, flagged, and summed into buckets. A sale whose
 * buyer sold the same NFT to its seller in the NFT's previous sale is flagged `wash` (the pair is
 * recorded, and counted: both payments happened). `lastSale` gives each token's previous sale
 * before this batch.
 */
export function tradesOfBatch(
  batch: FetchedBatch,
  pricesAt: PricesAt,
  lastSale: (key: string) => { seller: Address; buyer: Address } | undefined,
  bids: BidLookup = () => undefined,
  markets: readonly (MarketEvent & { txHash: `0x${string}` })[] = [],
): BatchTrades {
  const transactions = saleTransactions({
    nft: batch.nft,
    fungible: batch.fungible,
    native: batch.native,
    markets,
    transactions: batch.calls,
  });
  const timeOf = (block: number) => {
    const header = batch.headers[block - batch.from];
    if (!header) throw new RangeError(`block ${block} is outside the batch starting at ${batch.from}`);
    return header.timestamp;
  };
  const latest = new Map<string, { seller: Address; buyer: Address }>();
  const rows: SaleRow[] = [];
  const buckets = new Map<string, SaleBucketDelta>();
  for (const tx of transactions) {
    const prices = pricesAt(tx.blockNumber);
    for (const trade of attributeTransaction(tx, bids)) {
      const priced: PricedTrade = priceTrade(trade, prices);
      const time = timeOf(trade.blockNumber);
      if (trade.kind === "sale") {
        const key = tokenKey(trade.contract, trade.tokenId);
        const previous = latest.get(key) ?? lastSale(key);
        if (previous && previous.seller === trade.buyer && previous.buyer === trade.seller) {
          priced.flags.push("wash");
        }
        latest.set(key, { seller: trade.seller, buyer: trade.buyer });
        addToBucket(buckets, priced, time);
      }
      rows.push({
        contract: trade.contract,
        tokenId: trade.tokenId,
        blockNumber: trade.blockNumber,
        logIndex: trade.logIndex,
        seq: trade.seq,
        seller: trade.seller,
        buyer: trade.buyer,
        txHash: trade.txHash,
        txIndex: trade.txIndex,
        time,
        kind: trade.kind,
        quantity: trade.quantity,
        nativePaid: trade.native,
        fungiblePaid: priced.fungiblePaid,
        totalNative: priced.totalNative,
        totalUsd: priced.totalUsd,
        attributedBy: trade.attributedBy,
        market: trade.market,
        flags: priced.flags,
        payments: priced.payments,
      });
    }
  }
  return { rows, buckets: [...buckets.values()], lastSalesAfter: latest };
}

function addToBucket(buckets: Map<string, SaleBucketDelta>, sale: PricedTrade, time: number): void {
  const start = bucketStart(time);
  const key = `${sale.contract}${start}`;
  // Per unit, rounded down to the wei, as the store's rollback works it out again.
  const unit = sale.quantity > 0n ? sale.totalNative / sale.quantity : sale.totalNative;
  const bucket = buckets.get(key);
  if (!bucket) {
    buckets.set(key, {
      contract: sale.contract,
      start,
      sales: 1,
      units: sale.quantity,
      volume: sale.totalNative,
      minUnitPrice: unit,
      maxUnitPrice: unit,
    });
    return;
  }
  bucket.sales++;
  bucket.units += sale.quantity;
  bucket.volume += sale.totalNative;
  if (unit < bucket.minUnitPrice) bucket.minUnitPrice = unit;
  if (unit > bucket.maxUnitPrice) bucket.maxUnitPrice = unit;
}

export type { LastSales };
