/**
 * The checkpoint, last in every batch's transaction: the newest headers (for reorg detection) and
 * the first block not yet indexed. After a crash at any instant the store holds a whole batch and
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
  prepare: async () => ({ prepared: undefined, carry: undefined }),
  statements: (tx, { chainId, batch }) => [
    ...rememberBlocksStatements(tx, chainId, batch.headers, RECENT_BLOCKS_KEPT),
    setNextBlockStatement(tx, chainId, batch.to + 1),
  ],
  async undo(tx, { chainId, ancestor }) {
    await forgetBlocksAfter(tx, chainId, ancestor);
    await setNextBlock(tx, chainId, ancestor + 1);
  },
});
