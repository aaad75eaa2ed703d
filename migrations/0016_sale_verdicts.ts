/**
 * Wash rules that fire after a sale is stored: a later sale closes a cycle the stored one was a leg
 * of, or the seller's proceeds go back to the buyer (or to whoever funded it) within the hour after.
 *
 * - `sale_verdicts` holds each such verdict: the sale it names (by the sale's key), the rule, and
 *   the block whose transaction gave it. The rule is appended to the sale's `flags`, and the
 *   rollups count the sale in its new class; a rollback to before that block takes the rule out
 *   again. A verdict is recorded only for a rule the sale did not carry yet, so taking the rule
 *   out restores the flags it had. The table is new and empty.
 * - `sales_by_time` lets a bucket's sales be read again by time whatever its age: a verdict may
 *   name a sale of a month ago, whose blocks the recent headers no longer map to times. Sales are
 *   written in block order, so a BRIN index on the time is a few pages and costs the writes next
 *   to nothing. It is built concurrently: the indexer and the API go on meanwhile.
 */
import type { MigrationBuilder } from "node-pg-migrate";
import { createIndexConcurrently, dropIndexConcurrently } from "../src/store/pg/online-ddl.ts";

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  await pgm.db.query(`
    CREATE TABLE IF NOT EXISTS sale_verdicts (
      chain_id      bigint NOT NULL,
      block_number  bigint NOT NULL,
      log_index     integer NOT NULL,
      seq           integer NOT NULL,
      seller        bytea NOT NULL,
      rule          text NOT NULL,
      verdict_block bigint NOT NULL,
      PRIMARY KEY (chain_id, block_number, log_index, seq, seller, rule)
    )`);
  await pgm.db.query(
    "CREATE INDEX IF NOT EXISTS sale_verdicts_by_verdict ON sale_verdicts (chain_id, verdict_block)",
  );
  await createIndexConcurrently(pgm.db, "sales_by_time", "sales (chain_id, block_time)", { using: "brin" });
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  await dropIndexConcurrently(pgm.db, "sales_by_time");
  await pgm.db.query("DROP TABLE IF EXISTS sale_verdicts");
}
