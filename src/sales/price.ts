import type { Address } from "../core/hex.ts";
import type { Trade } from "./types.ts";

/** An exact exchange rate: `num / den` of the target unit per base unit of the source. */
export interface Rate {
  num: bigint;
  den: bigint;
}

/** What a chain's prices are converted with, at one block. */
export interface PriceContext {
  /** Wei per base unit of an ERC-20 at that block; undefined when no rate is known for it. */
  toNative(token: Address): Rate | undefined;
  /** USD per wei at that block, undefined when the chain has no USD rate yet. */
  usdPerWei: Rate | undefined;
}

export interface PricedPayment {
  token: Address;
  amount: bigint;
  /** What it was worth in wei, undefined when the token has no known rate. */
  nativeValue: bigint | undefined;
}

export interface PricedTrade extends Trade {
  payments: PricedPayment[];
  /** The ERC-20 part in wei: the payments that have a rate. */
  fungiblePaid: bigint;
  /** native + fungiblePaid. */
  totalNative: bigint;
  /** USD value of totalNative as a decimal string (18 fractional digits at most), or undefined. */
  totalUsd: string | undefined;
  flags: string[];
}

/** Digits kept after the point of a USD value: far below a cent, exact to what a rate can say. */
const USD_DECIMALS = 18n;

/**
 * Converts a trade's payment to wei and USD. Conversions round down to the wei (and to 10^-18 USD):
 * a price is never overstated. A token without a rate is kept with its amount, counted as nothing
 * in the totals, and the trade is flagged `unpriced`, so a missing rate never passes for zero.
 */
export function priceTrade(trade: Trade, prices: PriceContext): PricedTrade {
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
    return { token: p.token, amount: p.amount, nativeValue };
  });
  if (trade.priceFromTransactionValue) flags.push("tx_value");
  const totalNative = trade.native + fungiblePaid;
  const usd = prices.usdPerWei;
  const totalUsd =
    usd === undefined
      ? undefined
      : formatScaled((totalNative * usd.num * 10n ** USD_DECIMALS) / usd.den, USD_DECIMALS);
  return { ...trade, payments, fungiblePaid, totalNative, totalUsd, flags };
}

/** `scaled / 10^decimals` as a plain decimal string without trailing zeros. */
export function formatScaled(scaled: bigint, decimals: bigint): string {
  const negative = scaled < 0n;
  const abs = negative ? -scaled : scaled;
  const unit = 10n ** decimals;
  const whole = abs / unit;
  const fraction = (abs % unit).toString().padStart(Number(decimals), "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

const ONE: Rate = { num: 1n, den: 1n };

/**
 * Prices from the tokens worth exactly the native coin alone (the wrapped coin, Blur's pool
 * token): each counts 1:1, every other token is unpriced, and there is no USD rate.
 */
export function peggedPrices(pegged: Iterable<Address>): PriceContext {
  const tokens = new Set(pegged);
  return { toNative: (token) => (tokens.has(token) ? ONE : undefined), usdPerWei: undefined };
}
