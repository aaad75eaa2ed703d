/**
 * Dollar values as the API gives them: wei times a rate of dollars per wei, as an exact decimal of
 * at most 18 places. A sale is valued this way at its block's rate, a floor at the newest one.
 */
import type { Rate } from "./types.ts";

/** Digits kept after the point of a USD value: far below a cent, exact to what a rate can say. */
const USD_DECIMALS = 18n;
const USD_UNIT = 10n ** USD_DECIMALS;

/** `wei` in dollars at `usdPerWei`, rounded down to 18 decimals, without trailing zeros. */
export function usdValue(wei: bigint, usdPerWei: Rate): string {
  return formatScaled((wei * usdPerWei.num * USD_UNIT) / usdPerWei.den, USD_DECIMALS);
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
