import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Address } from "../../src/core/hex.ts";
import type { ValueFlow } from "../../src/core/types.ts";
import {
  MAX_READBACK_BLOCKS,
  READBACK_CHUNK_BLOCKS,
  readFlowsBefore,
} from "../../src/indexer/flow-readback.ts";

const A = `0x${"a1".repeat(20)}` as Address;
const B = `0x${"b0".repeat(20)}` as Address;

/** A chain with one flow per block, `seconds` apart, and the ranges asked of it. */
function chainOf(seconds: number) {
  const timeOf = (block: number) => 1_700_000_000 + Math.floor(block * seconds);
  const asked: [number, number][] = [];
  const flow = (block: number): ValueFlow => ({
    from: A,
    to: B,
    token: null,
    value: 1n,
    blockNumber: block,
    txIndex: 0,
    time: timeOf(block),
  });
  const read = async (from: number, to: number) => {
    asked.push([from, to]);
    return {
      flows: Array.from({ length: to - from + 1 }, (_, i) => flow(from + i)),
      firstBlockTime: timeOf(from),
      lastBlockTime: timeOf(to),
    };
  };
  return { read, asked, timeOf };
}

describe("reading value flows back on a resume", () => {
  test("property: every block of the lookback is read, in chain order, within the cap and above block 0", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20_000 }),
        fc.constantFrom(0.25, 1, 2, 12, 13.7),
        fc.constantFrom(3_600, 7_200),
        async (next, seconds, lookback) => {
          const { read, asked, timeOf } = chainOf(seconds);
          const got = await readFlowsBefore(read, next, lookback);
          assert.ok(got);
          const blocks = got.flows.map((f) => f.blockNumber);
          const first = blocks[0] as number;
          assert.deepEqual(
            blocks,
            Array.from({ length: next - first }, (_, i) => first + i),
            "contiguous, up to next - 1",
          );
          assert.ok(first >= Math.max(0, next - MAX_READBACK_BLOCKS));
          assert.equal(got.firstBlock, first, "the first block read is told");
          const newest = timeOf(next - 1);
          assert.equal(got.lastBlockTime, newest);
          // Stopped only because the lookback was passed, the cap reached or block 0 read.
          assert.ok(first === 0 || first === next - MAX_READBACK_BLOCKS || timeOf(first) < newest - lookback);
          for (const [from, to] of asked) assert.ok(from <= to && to - from < READBACK_CHUNK_BLOCKS);
        },
      ),
      { numRuns: 60 },
    );
  });

  test("nothing before block 0", async () => {
    const { read, asked } = chainOf(12);
    assert.equal(await readFlowsBefore(read, 0, 3_600), undefined);
    assert.deepEqual(asked, []);
  });
});
