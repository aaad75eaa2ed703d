import type { ValueFlow } from "../core/types.ts";
import { FUNDING_LOOKBACK } from "../sales/wash.ts";

/** Value flows of blocks [from, to] read from the node, with the times of the range's first and last blocks. */
export interface ReadFlows {
  flows: ValueFlow[];
  firstBlockTime: number;
  lastBlockTime: number;
}

export type FlowReader = (from: number, to: number) => Promise<ReadFlows>;

/** Blocks read back per request: a small range, since traced blocks are read one by one. */
export const READBACK_CHUNK_BLOCKS = 100;
/**
 * Most blocks read back on a resume: the funding lookback on a chain with blocks of 0.72 s or more.
 * On faster chains a sale in the first hour after a restart sees the funding of these blocks only.
 */
export const MAX_READBACK_BLOCKS = 5_000;

/**
 * The value flows over the funding lookback before block `next`, in chain order, read backwards a
 * range at a time until one starts before the lookback (or the cap, or block 0, is reached). The
 * lookback is measured from block `next - 1`'s time, exactly as the batch that ended there prunes.
 */
export async function readFlowsBefore(read: FlowReader, next: number): Promise<ReadFlows | undefined> {
  const lowest = Math.max(0, next - MAX_READBACK_BLOCKS);
  const ranges: ValueFlow[][] = [];
  let to = next - 1;
  let newest: number | undefined;
  let oldest = 0;
  while (to >= lowest) {
    const from = Math.max(lowest, to - READBACK_CHUNK_BLOCKS + 1);
    const got = await read(from, to);
    newest ??= got.lastBlockTime;
    oldest = got.firstBlockTime;
    ranges.unshift(got.flows);
    if (got.firstBlockTime < newest - FUNDING_LOOKBACK.seconds) break;
    to = from - 1;
  }
  if (newest === undefined) return undefined;
  return { flows: ranges.flat(), firstBlockTime: oldest, lastBlockTime: newest };
}
