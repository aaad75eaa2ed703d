import type { Address } from "../core/hex.ts";
import { saleClass, WASH_RULES } from "../core/sale-classes.ts";
import type { SaleVerdict } from "../core/types.ts";
import { addSaleToBucket, type SaleBucketDelta } from "../rollups/sale-buckets.ts";
import { attributeTransaction, type BidLookup } from "../sales/attribute.ts";
import { type PriceContext, priceTrade } from "../sales/price.ts";
import { saleTransactions } from "../sales/transactions.ts";
import { CYCLE_LOOKBACK, cycleLegs, type FundingFlows, type PastSale, washRules } from "../sales/wash.ts";
import { type OpenBid, punkKey, type SaleRow, tokenKey } from "../store/tables/sales.ts";
import type { FetchedBatch } from "./batch.ts";

/** How a chain's payments are valued, at a block. */
export type PricesAt = (blockNumber: number) => PriceContext;

export interface BatchTrades {
  rows: SaleRow[];
  buckets: SaleBucketDelta[];
  /** The recent sales of each token sold in the batch, oldest first: what the next batch starts from. */
  lastSalesAfter: Map<string, PastSale[]>;
  /** The earlier legs of the cycles the batch's sales closed, stored or in the batch: flagged after the fact. */
  verdicts: SaleVerdict[];
}

/**
 * The trades of a batch, priced at their blocks, flagged by the wash rules (src/sales/wash.ts), and
 * summed into buckets by class: organic, flagged or unpriced. `recentSales` gives each token's
 * recent sales before this batch, oldest first; `deployerOf` who deployed an account that is a
 * contract; `funding` the value flows of transactions that moved no NFT, up to the batch's end.
 */
export function tradesOfBatch(
  batch: FetchedBatch,
  pricesAt: PricesAt,
  recentSales: (key: string) => readonly PastSale[],
  bidBefore: (key: string) => OpenBid | undefined,
  deployerOf: (account: Address) => Address | undefined = () => undefined,
  funding?: FundingFlows,
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
  const latest = new Map<string, PastSale[]>();
  const rows: SaleRow[] = [];
  const buckets = new Map<string, SaleBucketDelta>();
  const verdicts: SaleVerdict[] = [];
  for (const tx of transactions) {
    const prices = pricesAt(tx.blockNumber);
    bidsUpTo(tx.blockNumber, tx.nft[0]?.logIndex ?? 0);
    for (const trade of attributeTransaction(tx, lookup)) {
      const priced = priceTrade(trade, prices);
      const time = timeOf(trade.blockNumber);
      if (trade.kind === "sale") {
        const key = tokenKey(trade.contract, trade.tokenId);
        const history = latest.get(key) ?? recentSales(key);
        for (const leg of cycleLegs({ buyer: trade.buyer, time, history })) {
          const { blockNumber, logIndex, seq, seller } = leg;
          verdicts.push({
            sale: { contract: trade.contract, blockNumber, logIndex, seq, seller, time: leg.time },
            rule: WASH_RULES.cycle,
            blockNumber: trade.blockNumber,
            txIndex: trade.txIndex,
          });
        }
        priced.flags.push(
          ...washRules({
            seller: trade.seller,
            buyer: trade.buyer,
            time,
            blockNumber: trade.blockNumber,
            txIndex: trade.txIndex,
            history,
            deployerOf,
            ...(funding ? { funding } : {}),
          }),
        );
        latest.set(
          key,
          [
            ...history,
            {
              seller: trade.seller,
              buyer: trade.buyer,
              time,
              blockNumber: trade.blockNumber,
              logIndex: trade.logIndex,
              seq: trade.seq,
            },
          ].slice(-CYCLE_LOOKBACK.sales),
        );
        addSaleToBucket(buckets, {
          contract: trade.contract,
          quantity: trade.quantity,
          totalNative: priced.totalNative,
          time,
          class: saleClass(priced.flags),
        });
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
  return { rows, buckets: [...buckets.values()], lastSalesAfter: latest, verdicts };
}
