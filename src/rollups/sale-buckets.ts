import type { Address } from "../core/hex.ts";
import { bucketStart } from "../core/periods.ts";

/** Sales in one fifteen-minute bucket of one collection; unit prices in wei, rounded down. */
export interface SaleBucketDelta {
  contract: Address;
  start: number;
  sales: number;
  units: bigint;
  volume: bigint;
  minUnitPrice: bigint;
  maxUnitPrice: bigint;
}

/** Adds one priced sale of `quantity` units to its collection's bucket. */
export function addSaleToBucket(
  buckets: Map<string, SaleBucketDelta>,
  sale: { contract: Address; quantity: bigint; totalNative: bigint; time: number },
): void {
  const start = bucketStart(sale.time);
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
