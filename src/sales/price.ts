import type { Address } from "../core/hex.ts";
import type { PriceContext, Rate } from "../core/types.ts";
import { usdValue } from "../core/usd.ts";
import type { Trade } from "./types.ts";

export type { PriceContext, Rate };

export interface PricedPayment {
  token: Address;
  amount: bigint;
  /** What it was worth in wei, undefined when the token has no known rate. */
  nativeValue: bigint | undefined;
}

/** What a trade's payment came to. */
export interface TradePrice {
  payments: PricedPayment[];
  /** The ERC-20 part in wei: the payments that have a rate. */
  fungiblePaid: bigint;
  /** native + fungiblePaid. */
  totalNative: bigint;
  /** USD value of totalNative as a decimal string (18 fractional digits at most), or undefined. */
  totalUsd: string | undefined;
  flags: string[];
}

/**
 * Converts a trade's payment to wei and USD. Conversions round down to the wei (and to 10^-18 USD):
 * a price is never overstated. A token without a rate is kept with its amount, counted as nothing
 * in the totals, and the trade is flagged `unpriced`, so a missing rate never passes for zero.
 * A payment converted at a rate that jumped past its bound is flagged `rate_outlier`: the price is
 * kept, and the rollups leave such a sale out of what a bought rate could distort.
 */
export function priceTrade(trade: Trade, prices: PriceContext): TradePrice {
  const flags: string[] = [];
  let fungiblePaid = 0n;
  const payments = trade.fungible.map((p): PricedPayment => {
    const rate = prices.toNative(p.token);
    if (!rate) {
      if (!flags.includes("unpriced")) flags.push("unpriced");
      return { token: p.token, amount: p.amount, nativeValue: undefined };
    }
    const nativeValue = (p.amount * rate.num) / rate.den;
    fungiblePaid += nativeValue;
    if (prices.isOutlier?.(p.token) && !flags.includes("rate_outlier")) flags.push("rate_outlier");
    return { token: p.token, amount: p.amount, nativeValue };
  });
  if (trade.priceFromTransactionValue) flags.push("tx_value");
  const totalNative = trade.native + fungiblePaid;
  const usd = prices.usdPerWei;
  const totalUsd = usd === undefined ? undefined : usdValue(totalNative, usd);
  return { payments, fungiblePaid, totalNative, totalUsd, flags };
}
