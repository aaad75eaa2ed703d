/**
 * Splits `total` into parts proportional to `weights`, exactly: the parts sum to `total`. Each part
 * is the floor of its exact share, and the units left over go one each to the largest remainders
 * (ties to the earlier weight), so no part is ever more than one unit from its exact share.
 * All weights zero (or none positive): split evenly by count the same way.
 */
export function splitProportionally(total: bigint, weights: readonly bigint[]): bigint[] {
  if (weights.length === 0) return [];
  let sum = 0n;
  for (const w of weights) {
    if (w < 0n) throw new RangeError("a weight is negative");
    sum += w;
  }
  const effective = sum === 0n ? weights.map(() => 1n) : weights;
  const divisor = sum === 0n ? BigInt(weights.length) : sum;
  const parts = effective.map((w) => (total * w) / divisor);
  const remainders = effective.map((w, i) => ({ i, r: (total * w) % divisor }));
  let left = total - parts.reduce((a, b) => a + b, 0n);
  remainders.sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  for (const { i } of remainders) {
    if (left <= 0n) break;
    parts[i] = (parts[i] ?? 0n) + 1n;
    left--;
  }
  return parts;
}
