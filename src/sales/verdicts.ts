import type { SaleVerdict } from "../core/types.ts";

/**
 * A batch's verdicts in the order they were given (by the position of the transaction that gave
 * each), each rule once per sale: the first verdict stands. The same verdicts come out in the same
 * order whichever batches the blocks fall into.
 */
export function orderVerdicts(verdicts: readonly SaleVerdict[]): SaleVerdict[] {
  const sorted = [...verdicts].sort((a, b) => a.blockNumber - b.blockNumber || a.txIndex - b.txIndex);
  const seen = new Set<string>();
  return sorted.filter((v) => {
    const { blockNumber, logIndex, seq, seller } = v.sale;
    const key = `${blockNumber}:${logIndex}:${seq}:${seller}:${v.rule}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
