/**
 * The states of the followed liquidity pools, one row per pool per block: what exchange rates are read
 * from. The carry is the rate book after the previous batch; it tells the sales how each block of the
 * batch values its payments.
 */
import { RateBook, type RateBookConfig } from "../../rates/convert.ts";
import {
  deletePoolStatesAfter,
  latestPoolStates,
  poolStateStatements,
} from "../../store/tables/pool-states.ts";
import { defineProjection } from "./projection.ts";

export function createPoolStatesProjection(config: RateBookConfig) {
  return defineProjection({
    name: "pool states",
    tables: [{ name: "pool_states", order: "chain_id, pool, block_number, log_index" }],
    resume: async ({ sql, chainId, next }) =>
      new RateBook(config, await latestPoolStates(sql, chainId, config.pools, next - 1)),
    async prepare({ batch, facts }, carry: RateBook) {
      facts.prices = carry.advance(batch.poolStates);
      return { prepared: batch.poolStates, carry };
    },
    statements: (tx, { chainId }, prepared) => poolStateStatements(tx, chainId, prepared),
    undo: (tx, { chainId, ancestor }) => deletePoolStatesAfter(tx, chainId, ancestor),
  });
}
