/**
 * The states of the followed liquidity pools, one row per pool per block, with the block's time:
 * what exchange rates are read from. The carry is the rate book after the previous batch (each
 * pool's states over the last two rate windows); it tells the sales how each block of the batch
 * values its payments.
 */
import { DEFAULT_RATE_WINDOW_SECONDS, RateBook, type RateBookConfig } from "../../rates/convert.ts";
import { storedBlockTime } from "../../store/tables/chain-state.ts";
import {
  deletePoolStatesAfter,
  poolStateStatements,
  recentPoolStates,
} from "../../store/tables/pool-states.ts";
import { defineProjection } from "./projection.ts";

export function createPoolStatesProjection(config: RateBookConfig) {
  const window = config.windowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS;
  return defineProjection({
    name: "pool states",
    tables: [{ name: "pool_states", order: "chain_id, pool, block_number, log_index" }],
    resume: async ({ sql, chainId, next }) => {
      // The rate of the next block and the window before it reach back two windows from the last
      // indexed block's time at most; a block no longer among the recent ones resumes from each
      // pool's last state.
      const time = await storedBlockTime(sql, chainId, next - 1);
      const since = time === undefined ? undefined : time - 2 * window;
      return new RateBook(config, await recentPoolStates(sql, chainId, config.pools, next - 1, since));
    },
    async prepare({ batch, facts, timeOf }, carry: RateBook) {
      const states = batch.poolStates.map((s) => ({ ...s, blockTime: timeOf(s.blockNumber) }));
      facts.prices = carry.advance(states, timeOf);
      return { prepared: states, carry };
    },
    statements: (tx, { chainId }, prepared) => poolStateStatements(tx, chainId, prepared),
    undo: (tx, { chainId, ancestor }) => deletePoolStatesAfter(tx, chainId, ancestor),
  });
}
