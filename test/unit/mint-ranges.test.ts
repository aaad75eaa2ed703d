import assert from "node:assert/strict";
import { test } from "node:test";
import { mintRanges } from "../../src/store/tables/tokens.ts";

/** Every block of `blocks` is in exactly one range, ranges are in order and never share a block. */
function assertCovers(blocks: number[], ranges: { first: number; last: number }[], perRange: number) {
  for (const [i, r] of ranges.entries()) {
    assert.ok(r.first <= r.last);
    const previous = ranges[i - 1];
    if (previous) assert.ok(previous.last < r.first, "ranges are ordered and disjoint");
    const held = blocks.filter((b) => b >= r.first && b <= r.last);
    assert.ok(held.length > 0, "no range is empty");
    assert.ok(held.length <= perRange || new Set(held).size === 1, "at most perRange mints, or one block");
  }
  for (const b of blocks)
    assert.equal(ranges.filter((r) => b >= r.first && b <= r.last).length, 1, `block ${b} in one range`);
}

test("mints in few blocks make one range; none make none", () => {
  assert.deepEqual(mintRanges([]), []);
  assert.deepEqual(mintRanges([5, 5, 7, 9], 10), [{ first: 5, last: 9 }]);
});

test("a range closes at a block boundary before it would hold more than its share", () => {
  assert.deepEqual(mintRanges([1, 1, 2, 2, 3, 4, 4, 4], 4), [
    { first: 1, last: 2 },
    { first: 3, last: 4 },
  ]);
  assert.deepEqual(mintRanges([1, 1, 2, 2, 3, 3, 4], 4), [
    { first: 1, last: 2 },
    { first: 3, last: 4 },
  ]);
  // One block with more mints than a range holds is a range of its own.
  assert.deepEqual(mintRanges([1, 2, 2, 2, 2, 2, 3], 3), [
    { first: 1, last: 1 },
    { first: 2, last: 2 },
    { first: 3, last: 3 },
  ]);
});

test("ranges cover every mint's block once, whatever the shape of the batch", () => {
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let round = 0; round < 200; round++) {
    const blocks: number[] = [];
    let block = Math.floor(random() * 100);
    const count = Math.floor(random() * 60);
    for (let i = 0; i < count; i++) {
      if (random() < 0.4) block += 1 + Math.floor(random() * 3);
      blocks.push(block);
    }
    const perRange = 1 + Math.floor(random() * 8);
    assertCovers(blocks, mintRanges(blocks, perRange), perRange);
  }
});
