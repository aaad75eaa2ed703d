/**
 * The outbox of the live event stream (src/store/tables/stream-events.ts): a row per transfer, per
 * trade and per verdict on a stored trade of the batch, in its transaction, so a consumer reading by
 * cursor never misses nor sees twice what the store holds. It comes after the sales, whose trades it
 * copies, and after the verdicts, whose rows it reads back; a rollback does not delete its rows but
 * takes them back with retractions, before the checkpoint moves.
 */
import {
  encodeStreamTrades,
  encodeVerdictRows,
  retractAfter,
  streamStatements,
} from "../../store/tables/stream-events.ts";
import { timeOfBatch } from "../batch.ts";
import { defineProjection, need } from "./projection.ts";

/**
 * What stands for the outbox in a snapshot: the rows standing, without their ids. A run resumed
 * after a crash or a reorganisation numbers them differently, and keeps the rows it took back.
 */
const STANDING = `
  SELECT chain_id, block_number, log_index, seq, kind, contract, token_id, from_address, to_address, amount, tx_hash,
         block_time, standard, trade
  FROM stream_events WHERE retracts IS NULL AND rollback_peak IS NULL
  ORDER BY chain_id, block_number, log_index, seq, kind, from_address`;

export const streamProjection = defineProjection({
  name: "stream",
  tables: [{ name: "stream_events", order: "chain_id, id", snapshot: STANDING }],
  resume: async () => undefined,
  async prepare({ batch, facts }) {
    return {
      prepared: {
        trades: encodeStreamTrades(need(facts, "trades", "stream").rows),
        verdicts: encodeVerdictRows(need(facts, "verdicts", "stream"), timeOfBatch(batch)),
      },
      carry: undefined,
    };
  },
  statements: (tx, { chainId, batch }, { trades, verdicts }) =>
    streamStatements(tx, chainId, { from: batch.from, to: batch.to }, batch.nft.length, trades, verdicts),
  async undo(tx, { chainId, ancestor }) {
    await retractAfter(tx, chainId, ancestor);
  },
});
