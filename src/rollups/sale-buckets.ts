import type { Address } from "../core/hex.ts";
import { bucketStart } from "../core/periods.ts";
import type { SaleClass } from "../core/sale-classes.ts";

/** Sales of one class in a bucket; unit prices in wei, rounded down, null without such sales. */
export interface PricedFigures {
  sales: number;
  units: bigint;
  volume: bigint;
  minUnitPrice: bigint | null;
  maxUnitPrice: bigint | null;
}

/**
 * Sales in one fifteen-minute bucket of one collection: the organic ones, the flagged ones (kept
 * apart so that answers can leave them out), and the unpriced ones, which have no price to count.
 */
export interface SaleBucketDelta {
  contract: Address;
  start: number;
  organic: PricedFigures;
  flagged: PricedFigures;
  unpriced: { sales: number; units: bigint };
}

export function noFigures(): PricedFigures {
  return { sales: 0, units: 0n, volume: 0n, minUnitPrice: null, maxUnitPrice: null };
}

/** Adds one sale of `quantity` units, of its class, to its collection's bucket. */
export function addSaleToBucket(
  buckets: Map<string, SaleBucketDelta>,
  sale: { contract: Address; quantity: bigint; totalNative: bigint; time: number; class: SaleClass },
): void {
  const start = bucketStart(sale.time);
  const key = `${sale.contract}${start}`;
  let bucket = buckets.get(key);
  if (!bucket) {
    bucket = {
      contract: sale.contract,
      start,
      organic: noFigures(),
      flagged: noFigures(),
      unpriced: { sales: 0, units: 0n },
    };
    buckets.set(key, bucket);
  }
  if (sale.class === "unpriced") {
    bucket.unpriced.sales++;
    bucket.unpriced.units += sale.quantity;
    return;
  }
  // Per unit, rounded down to the wei, as the store's rollback works it out again.
  const unit = sale.quantity > 0n ? sale.totalNative / sale.quantity : sale.totalNative;
  const f = sale.class === "organic" ? bucket.organic : bucket.flagged;
  f.sales++;
  f.units += sale.quantity;
  f.volume += sale.totalNative;
  if (f.minUnitPrice === null || unit < f.minUnitPrice) f.minUnitPrice = unit;
  if (f.maxUnitPrice === null || unit > f.maxUnitPrice) f.maxUnitPrice = unit;
}
