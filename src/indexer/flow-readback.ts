import type { ValueFlow } from "../core/types.ts";

/** Value flows of blocks [from, to] read from the node, with the times of the range's first and last blocks. */
export interface ReadFlows {
  flows: ValueFlow[];
  firstBlockTime: number;
  lastBlockTime: number;
}

/** What a read-back gives: the flows, and the first block read. */
export interface ReadBack extends ReadFlows {
  firstBlock: number;
}

export type FlowReader = (from: number, to: number) => Promise<ReadFlows>;

/** Blocks read back per request: a small range, since traced blocks are read one by one. */
export const READBACK_CHUNK_BLOCKS = 100;
/**
 * Most blocks read back on a resume: two hours (a deal's hour after and its funding's hour before)
 * on a chain with blocks of 0.72 s or more. On faster chains a sale near a restart sees the flows of
 * these blocks only.
 */
export const MAX_READBACK_BLOCKS = 10_000;

/**
 * The value flows over `seconds` before block `next`, in chain order, read backwards a range at a
 * time until one starts before that time (or the cap, or block 0, is reached). The time is
 * measured from block `next - 1`'s, exactly as the batch that ended there prunes.
 */
export async function readFlowsBefore(
  read: FlowReader,
  next: number,
  seconds: number,
): Promise<ReadBack | undefined> {
  const lowest = Math.max(0, next - MAX_READBACK_BLOCKS);
  const ranges: ValueFlow[][] = [];
  let to = next - 1;
  let newest: number | undefined;
  let oldest = 0;
  let first = next;
  while (to >= lowest) {
    const from = Math.max(lowest, to - READBACK_CHUNK_BLOCKS + 1);
    const got = await read(from, to);
    newest ??= got.lastBlockTime;
    oldest = got.firstBlockTime;
    ranges.unshift(got.flows);
    first = from;
    if (got.firstBlockTime < newest - seconds) break;
    to = from - 1;
  }
  if (newest === undefined) return undefined;
  return { flows: ranges.flat(), firstBlock: first, firstBlockTime: oldest, lastBlockTime: newest };
}
