import type { Address } from "../core/hex.ts";
import { median, multiply, type Rate } from "./rational.ts";

/** A token's price in another token that is not native-pegged, from one pool. */
export interface Quote {
  token: Address;
  through: Address;
  /** Base units of `through` per base unit of `token`. */
  rate: Rate;
}

/** Below this many direct pools, a token's rate also counts the routes through other tokens. */
export const DIRECT_POOLS_ENOUGH = 3;

/**
 * Each token's rate in wei. `direct` holds, per token, what each of its pools against a
 * native-pegged token says. A token with at least three of them takes their median: most of its
 * pools must be moved at once to move it. With fewer, one pool would be enough (or two, since the
 * median of two is the lower one), so the median is taken over every route: the direct pools and
 * each pool against an intermediate token that has a direct rate of its own (one hop).
 */
export function routeRates(
  direct: ReadonlyMap<Address, Rate[]>,
  quotes: readonly Quote[],
): Map<Address, Rate> {
  const directRate = new Map<Address, Rate>();
  for (const [token, rates] of direct) {
    const rate = median(rates);
    if (rate) directRate.set(token, rate);
  }
  const routes = new Map<Address, Rate[]>();
  for (const [token, rates] of direct) routes.set(token, [...rates]);
  for (const { token, through, rate } of quotes) {
    if ((direct.get(token)?.length ?? 0) >= DIRECT_POOLS_ENOUGH) continue;
    const onward = directRate.get(through);
    if (!onward) continue;
    const list = routes.get(token);
    if (list) list.push(multiply(rate, onward));
    else routes.set(token, [multiply(rate, onward)]);
  }
  const rates = new Map<Address, Rate>();
  for (const [token, candidates] of routes) {
    const rate = median(candidates);
    if (rate) rates.set(token, rate);
  }
  return rates;
}
