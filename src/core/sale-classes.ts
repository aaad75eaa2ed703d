/**
 * What a stored trade counts as in the rollups, from its kind and flags. Rankings and series count
 * organic sales by default; flagged sales (a wash rule fired, or a currency's rate jumped out of its
 * recent range) are kept apart and counted only on request; unpriced sales (paid, wholly or in part,
 * in a token without a rate) have no price to count and are counted on their own.
 *
 * The store's `mintlens_sale_class(kind, flags)` (migration 0012) is this function in SQL: a
 * rollback works extreme prices out again from the sales of each class with it.
 */

/** The wash rules: each names why a sale is not taken as a trade between independent parties. */
export const WASH_RULES = {
  /** The buyer sold the token within its recent sales: it came back to a recent holder. */
  cycle: "wash_cycle",
  /** Buyer and seller were one: the seller paid for the purchase, or created the buying contract. */
  self: "wash_self",
  /** The seller funded the buyer, or one account that funds few others funded both, shortly before. */
  funder: "wash_funder",
  /** The seller handed at least half the price back to the buyer, or to its funder, within the hour after. */
  returned: "wash_returned",
} as const;

export type WashRule = (typeof WASH_RULES)[keyof typeof WASH_RULES];

/** A rate used to price the sale moved beyond its bound from the rate's recent history. */
export const RATE_OUTLIER = "rate_outlier";
/** Part of the payment is in a token without a known rate. */
export const UNPRICED = "unpriced";

export type SaleClass = "organic" | "flagged" | "unpriced";

/** Any flag naming a wash rule, or a rate outlier, takes a sale out of the organic figures. */
export function isFlagging(flag: string): boolean {
  return flag.startsWith("wash") || flag === RATE_OUTLIER;
}

/** The class of a trade of kind `sale`; other kinds (mints, returns) are never counted as sales. */
export function saleClass(flags: readonly string[]): SaleClass {
  if (flags.includes(UNPRICED)) return "unpriced";
  return flags.some(isFlagging) ? "flagged" : "organic";
}
