/**
 * The checkpoint, last in every batch's transaction: the newest headers (for reorg detection, each
 * with its dollar rate) and the first block not yet indexed. After a crash at any instant the store holds a whole batch and
 * its checkpoint, or neither.
 */
import {
  forgetBlocksAfter,
  rememberBlocksStatements,
  setNextBlock,
  setNextBlockStatement,
} from "../../store/tables/chain-state.ts";
import { defineProjection } from "./projection.ts";

/** Headers kept for reorg detection: more than any reorg the confirmation depths leave room for. */
export const RECENT_BLOCKS_KEPT = 256;

export const checkpointProjection = defineProjection({
  name: "checkpoint",
  tables: [
    { name: "chains", order: "chain_id" },
    { name: "recent_blocks", order: "chain_id, number" },
  ],
  resume: async () => undefined,
  // Each remembered block's dollar rate, kept with it for what the API values at the newest one.
  prepare: async ({ batch, facts }) => {
    const rates = new Map(
      batch.headers.slice(-RECENT_BLOCKS_KEPT).map((h) => [h.number, facts.prices?.(h.number).usdPerWei]),
    );
    return { prepared: rates, carry: undefined };
  },
  statements: (tx, { chainId, batch }, rates) => [
    ...rememberBlocksStatements(tx, chainId, batch.headers, RECENT_BLOCKS_KEPT, (block) => rates.get(block)),
    setNextBlockStatement(tx, chainId, batch.to + 1),
  ],
  async undo(tx, { chainId, ancestor }) {
    await forgetBlocksAfter(tx, chainId, ancestor);
    await setNextBlock(tx, chainId, ancestor + 1);
  },
});
