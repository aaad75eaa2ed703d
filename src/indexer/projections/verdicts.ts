/**
 * Wash rules that fired on sales already seen (src/store/tables/verdicts.ts), and the moves they make
 * in the rollups (src/rollups/moves.ts): each sale whose class changed leaves the figures of its old
 * class for those of its new one in its bucket, its day and the ranked windows that hold it. Listed
 * after the rollups, whose batch deltas counted the batch's own sales by the flags they were seen
 * with; its inverse runs after theirs too, and moves back the sales whose verdicts it takes back.
 */
import { bucketStart } from "../../core/periods.ts";
import type { SaleKey } from "../../core/types.ts";
import { listedMoves, moveStatements, verdictMoves } from "../../rollups/moves.ts";
import { storedWindowEnd } from "../../rollups/rankings.ts";
import { runInOrder } from "../../store/pg/session.ts";
import { encodeVerdicts, revokeVerdictsAfter, verdictStatements } from "../../store/tables/verdicts.ts";
import { defineProjection, need } from "./projection.ts";

/** The distinct buckets of some sales. */
function bucketsOf(sales: readonly SaleKey[]) {
  const seen = new Map<string, { contract: SaleKey["contract"]; start: number }>();
  for (const s of sales) {
    const start = bucketStart(s.time);
    seen.set(`${s.contract}${start}`, { contract: s.contract, start });
  }
  return [...seen.values()];
}

export const verdictsProjection = defineProjection({
  name: "verdicts",
  tables: [{ name: "sale_verdicts", order: "chain_id, block_number, log_index, seq, seller, rule" }],
  resume: async () => undefined,
  async prepare({ batch, facts }) {
    const verdicts = need(facts, "verdicts", "verdicts");
    return {
      prepared: {
        encoded: encodeVerdicts(verdicts),
        buckets: bucketsOf(verdicts.map((v) => v.sale)),
        blocks: { from: batch.from, to: batch.to },
        windowEnd: facts.windowEnd,
      },
      carry: undefined,
    };
  },
  statements: (tx, { chainId }, { encoded, buckets, blocks, windowEnd }) =>
    encoded.count === 0
      ? []
      : [
          ...verdictStatements(tx, chainId, encoded),
          ...moveStatements(
            tx,
            chainId,
            verdictMoves(tx, chainId, blocks.from, blocks.to),
            buckets,
            windowEnd,
          ),
        ],
  async undo(tx, { chainId, ancestor }) {
    const revoked = await revokeVerdictsAfter(tx, chainId, ancestor);
    if (revoked.length === 0) return;
    const end = await storedWindowEnd(tx, chainId);
    await runInOrder(moveStatements(tx, chainId, listedMoves(tx, revoked), bucketsOf(revoked), end));
  },
});
