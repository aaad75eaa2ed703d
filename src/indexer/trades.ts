import type { Address } from "../core/hex.ts";
import { attributeTransaction, type BidLookup } from "../sales/attribute.ts";
import { type PriceContext, priceTrade, type TradePrice } from "../sales/price.ts";
import { saleTransactions } from "../sales/transactions.ts";
import type { Trade } from "../sales/types.ts";
import {
  type OpenBid,
  punkKey,
  type SaleBucketDelta,
  type SaleRow,
  tokenKey,
} from "../store/tables/sales.ts";
import type { FetchedBatch } from "./batch.ts";
import { bucketStart } from "./effects.ts";

/** How a chain's payments are valued, at a block. */
export type PricesAt = (blockNumber: number) => PriceContext;

export interface BatchTrades {
  rows: SaleRow[];
  buckets: SaleBucketDelta[];
  /** The parties of the latest sale of each token sold in the batch: what the next batch starts from. */
  lastSalesAfter: Map<string, { seller: Address; buyer: Address }>;
  /** The latest bid of each punk the batch's bid events touched. */
  bidsAfter: Map<string, OpenBid>;
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
  bidBefore: (key: string) => OpenBid | undefined,
): BatchTrades {
  const transactions = saleTransactions({
    nft: batch.nft,
    fungible: batch.fungible,
    native: batch.native,
    markets: batch.markets,
    transactions: batch.calls,
  });
  // The open bid of each punk as the batch's transactions reach it: bid events are applied in
  // chain order up to each transaction.
  const bids = new Map<string, OpenBid>();
  let nextBid = 0;
  const bidsUpTo = (block: number, logIndex: number) => {
    for (; nextBid < batch.punkBids.length; nextBid++) {
      const e = batch.punkBids[nextBid] as (typeof batch.punkBids)[number];
      if (e.blockNumber > block || (e.blockNumber === block && e.logIndex >= logIndex)) break;
      bids.set(punkKey(e.contract, e.punkIndex), { bidder: e.bidder, value: e.value });
    }
  };
  const lookup: BidLookup = (contract, punkIndex, bidder) => {
    const key = punkKey(contract, punkIndex);
    const open = bids.get(key) ?? bidBefore(key);
    return open && open.bidder === bidder && open.value > 0n
      ? { contract, punkIndex, bidder, value: open.value }
      : undefined;
  };
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
    bidsUpTo(tx.blockNumber, tx.nft[0]?.logIndex ?? 0);
    for (const trade of attributeTransaction(tx, lookup)) {
      const priced = priceTrade(trade, prices);
      const time = timeOf(trade.blockNumber);
      if (trade.kind === "sale") {
        const key = tokenKey(trade.contract, trade.tokenId);
        const previous = latest.get(key) ?? lastSale(key);
        if (previous && previous.seller === trade.buyer && previous.buyer === trade.seller) {
          priced.flags.push("wash");
        }
        latest.set(key, { seller: trade.seller, buyer: trade.buyer });
        addToBucket(buckets, trade, priced, time);
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
  bidsUpTo(Number.POSITIVE_INFINITY, 0);
  return { rows, buckets: [...buckets.values()], lastSalesAfter: latest, bidsAfter: bids };
}

function addToBucket(
  buckets: Map<string, SaleBucketDelta>,
  sale: Trade,
  price: TradePrice,
  time: number,
): void {
  const start = bucketStart(time);
  const key = `${sale.contract}${start}`;
  // Per unit, rounded down to the wei, as the store's rollback works it out again.
  const unit = sale.quantity > 0n ? price.totalNative / sale.quantity : price.totalNative;
  const bucket = buckets.get(key);
  if (!bucket) {
    buckets.set(key, {
      contract: sale.contract,
      start,
      sales: 1,
      units: sale.quantity,
      volume: price.totalNative,
      minUnitPrice: unit,
      maxUnitPrice: unit,
    });
    return;
  }
  bucket.sales++;
  bucket.units += sale.quantity;
  bucket.volume += price.totalNative;
  if (unit < bucket.minUnitPrice) bucket.minUnitPrice = unit;
  if (unit > bucket.maxUnitPrice) bucket.maxUnitPrice = unit;
}
