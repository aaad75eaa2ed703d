/**
 * The mainnet-like market of the scale benchmark, sized from its number of NFT transfers: at
 * 100,000,000 transfers, 50,000 collections (40,000 traded, 10,000 spam), 10,000,000 tokens,
 * 5,000,000 sales and 2,000,000 wallets over two years. Of the transfers, 5% are sales, 10% mints,
 * 25% airdropped spam and the rest gifts and wallet moves, skewed over the collections: a few huge
 * ones, a long tail, and airdrops that come and go in a few days. The busiest wallet also holds a
 * vault of 100,000 NFTs (a thousandth of the transfers), and the second most traded collection has
 * CryptoPunks-style public offers.
 */
import { DAY, type Market, planMarket } from "../bench-api/market.ts";

export const SCALE_DAYS = 730;

export interface ScaleShape {
  transfers: number;
  sales: number;
  collections: number;
  spamCollections: number;
  tokens: number;
  wallets: number;
  airdrops: number;
  plainTransfers: number;
  /** NFTs in the collector's vault; unset in a store built before the vault existed. */
  collectorNfts?: number;
  /** Whether a collection has punk offers; unset in a store built before them. */
  punkOffers?: boolean;
}

/** Zipf exponent of the plain transfers over the traded collections. */
const TRANSFER_SKEW = 1.1;

export function scaleShape(transfers: number): ScaleShape {
  const collections = Math.max(10, Math.round(transfers / 2000));
  const spamCollections = Math.round(collections / 5);
  const sales = Math.round(transfers / 20);
  const tokens = Math.max((collections - spamCollections) * 20, Math.round(transfers / 10));
  const airdrops = Math.round(transfers / 4);
  const burns = Math.round(tokens / 100);
  const collectorNfts = Math.round(transfers / 1000);
  return {
    transfers,
    sales,
    collections,
    spamCollections,
    tokens,
    wallets: Math.max(200, Math.round(transfers / 50)),
    airdrops,
    plainTransfers: Math.max(0, transfers - sales - tokens - airdrops - burns - collectorNfts),
    collectorNfts,
    punkOffers: true,
  };
}

/** The market whose history ends at `end` (Unix seconds); its chain may be continued past it. */
export function scaleMarket(shape: ScaleShape, seed: string, end: number): Market {
  return planMarket(shape.sales, seed, end, {
    days: SCALE_DAYS,
    collections: shape.collections - shape.spamCollections,
    tokens: shape.tokens,
    wallets: shape.wallets,
    plainTransfers: shape.plainTransfers,
    transferSkew: TRANSFER_SKEW,
    spamCollections: shape.spamCollections,
    airdrops: shape.airdrops,
    collectorNfts: shape.collectorNfts,
    punkOffers: shape.punkOffers,
  });
}

export { DAY };
