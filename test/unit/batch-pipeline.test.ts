import assert from "node:assert/strict";
import { test } from "node:test";
import { createBatchPipeline } from "../../src/indexer/commit.ts";
import { type AnyProjection, defineProjection } from "../../src/indexer/projections/projection.ts";
import type { Sql } from "../../src/store/pg/database.ts";

/** A projection whose carry counts how many times it was resumed, at which block. */
function counting(name: string, resumed: string[]): AnyProjection {
  return defineProjection({
    name,
    tables: [],
    resume: async ({ next }) => {
      resumed.push(`${name}@${next}`);
      return `${name} from ${next}`;
    },
    prepare: async (_context, carry: string) => ({ prepared: undefined, carry }),
    statements: () => [],
    undo: async () => {},
  });
}

test("a refresh resumes only the projections named, and keeps the others' carries as they were", async () => {
  const resumed: string[] = [];
  const pipeline = createBatchPipeline({
    sql: {} as Sql,
    chainId: 1,
    projections: ["transfers", "ownership", "sales"].map((name) => counting(name, resumed)),
  });
  const carries = await pipeline.resume(10);
  assert.deepEqual(carries, ["transfers from 10", "ownership from 10", "sales from 10"]);
  const refreshed = await pipeline.refresh(12, carries, ["ownership"]);
  assert.deepEqual(refreshed, ["transfers from 10", "ownership from 12", "sales from 10"]);
  assert.deepEqual(resumed, ["transfers@10", "ownership@10", "sales@10", "ownership@12"]);
  await assert.rejects(pipeline.refresh(12, carries, ["owners"]), /no projection named owners/);
});
