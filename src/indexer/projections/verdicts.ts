/**
 * Wash rules that fired on sales already seen (src/store/tables/verdicts.ts), and what they move in
 * the rollups: the sale figures of each bucket holding such a sale are worked out again from its
 * sales, then its day, then the ranked windows that hold it, for its collection. Listed after the
 * rollups, whose batch deltas counted the batch's own sales by the flags they were seen with; its
 * inverse runs after theirs too, and does the same for the sales whose verdicts it takes back.
 */
import { bucketStart } from "../../core/periods.ts";
import type { SaleKey } from "../../core/types.ts";
import { type BucketRef, saleRecountStatements } from "../../rollups/buckets.ts";
import { dayStatements, touchedDays } from "../../rollups/days.ts";
import { bucketRecountStatements, storedWindowEnd } from "../../rollups/rankings.ts";
import type { Queryable } from "../../store/pg/database.ts";
import { runInOrder, type Statement } from "../../store/pg/session.ts";
import { encodeVerdicts, revokeVerdictsAfter, verdictStatements } from "../../store/tables/verdicts.ts";
import { defineProjection, need } from "./projection.ts";

function bucketsOf(sales: readonly SaleKey[]): BucketRef[] {
  const seen = new Map<string, BucketRef>();
  for (const s of sales) {
    const start = bucketStart(s.time);
    seen.set(`${s.contract}${start}`, { contract: s.contract, start });
  }
  return [...seen.values()];
}

function recount(
  sql: Queryable,
  chainId: number,
  buckets: readonly BucketRef[],
  end: number | undefined,
): Statement[] {
  if (buckets.length === 0) return [];
  return [
    ...saleRecountStatements(sql, chainId, buckets),
    ...dayStatements(sql, chainId, touchedDays(buckets)),
    ...(end === undefined ? [] : bucketRecountStatements(sql, chainId, end, buckets)),
  ];
}

export const verdictsProjection = defineProjection({
  name: "verdicts",
  tables: [{ name: "sale_verdicts", order: "chain_id, block_number, log_index, seq, seller, rule" }],
  resume: async () => undefined,
  async prepare({ facts }) {
    const verdicts = need(facts, "verdicts", "verdicts");
    return {
      prepared: {
        encoded: encodeVerdicts(verdicts),
        buckets: bucketsOf(verdicts.map((v) => v.sale)),
        windowEnd: facts.windowEnd,
      },
      carry: undefined,
    };
  },
  statements: (tx, { chainId }, { encoded, buckets, windowEnd }) =>
    encoded.count === 0
      ? []
      : [...verdictStatements(tx, chainId, encoded), ...recount(tx, chainId, buckets, windowEnd)],
  async undo(tx, { chainId, ancestor }) {
    const changed = await revokeVerdictsAfter(tx, chainId, ancestor);
    if (changed.length === 0) return;
    await runInOrder(recount(tx, chainId, bucketsOf(changed), await storedWindowEnd(tx, chainId)));
  },
});
