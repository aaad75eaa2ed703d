import type { Rate } from "../core/types.ts";

/** Exact rationals for exchange rates. */
export type { Rate };

export const ONE: Rate = Object.freeze({ num: 1n, den: 1n });

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/**
 * `num / den` in lowest terms, frozen. Reduced so that equal rates compare equal field by field,
 * and so that a product of rates stays as small as its value allows.
 */
export function ratio(num: bigint, den: bigint): Rate {
  if (den === 0n) throw new RangeError("a rate's denominator must not be zero");
  const sign = den < 0n ? -1n : 1n;
  const divisor = gcd(num, den) || 1n;
  return Object.freeze({ num: (sign * num) / divisor, den: (sign * den) / divisor });
}

/**
 * `rate / divisor` in lowest terms, for a small divisor (a power of ten): only the divisor's
 * common factor with the numerator is looked for, not one of the large numbers.
 */
export function divide(rate: Rate, divisor: bigint): Rate {
  if (divisor <= 0n) throw new RangeError("a divisor must be positive");
  const common = gcd(rate.num % divisor, divisor) || divisor;
  return Object.freeze({ num: rate.num / common, den: rate.den * (divisor / common) });
}

export function multiply(a: Rate, b: Rate): Rate {
  return ratio(a.num * b.num, a.den * b.den);
}

/** The rate the other way round; undefined for a zero rate, which has no inverse. */
export function invert(rate: Rate): Rate | undefined {
  return rate.num === 0n ? undefined : ratio(rate.den, rate.num);
}

export function compare(a: Rate, b: Rate): number {
  const left = a.num * b.den;
  const right = b.num * a.den;
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * The middle rate, the lower of the two middles for an even count: exact (no averaging), never
 * above what most sources say, and one source off the market cannot move it past its neighbours.
 */
export function median(rates: readonly Rate[]): Rate | undefined {
  if (rates.length === 0) return undefined;
  const sorted = [...rates].sort(compare);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
