/**
 * The append-only tables keyed in block order. Rows arrive in block order, so a key that leads
 * with the contract sent every insert to a random leaf of the B-tree; a key that leads with the
 * block appends. Nothing reads these tables by contract through their keys: rollbacks and replays
 * read by block, and a sale's payments are found by the sale's own (block, log index, seq,
 * seller). The block-order keys serve what the BRIN indexes on (chain, block) served, so those
 * go.
 *
 * Each key is built concurrently, then swapped in (see src/store/pg/online-ddl.ts): at
 * hundreds of millions of rows the API keeps answering and the indexer keeps writing meanwhile.
 * Run outside a transaction, so every step can be run again after a failure.
 */
import type { MigrationBuilder } from "node-pg-migrate";
import { createIndexConcurrently, dropIndexConcurrently, rekey } from "../src/store/pg/online-ddl.ts";

const TABLES = [
  {
    table: "nft_transfers",
    key: ["chain_id", "block_number", "log_index", "seq"],
    before: ["chain_id", "contract", "block_number", "log_index", "seq"],
  },
  {
    table: "fungible_transfers",
    key: ["chain_id", "block_number", "log_index"],
    before: ["chain_id", "contract", "block_number", "log_index"],
  },
  {
    table: "sales",
    key: ["chain_id", "block_number", "log_index", "seq", "seller"],
    before: ["chain_id", "contract", "block_number", "log_index", "seq", "seller"],
  },
  {
    table: "sale_payments",
    key: ["chain_id", "block_number", "log_index", "seq", "seller", "token"],
    before: ["chain_id", "contract", "block_number", "log_index", "seq", "seller", "token"],
  },
] as const;

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  for (const { table, key } of TABLES) await rekey(pgm.db, table, key);
  for (const { table } of TABLES) await dropIndexConcurrently(pgm.db, `${table}_by_block`);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  for (const { table } of TABLES) {
    await createIndexConcurrently(pgm.db, `${table}_by_block`, `${table} (chain_id, block_number)`, {
      using: "brin",
    });
  }
  for (const { table, before } of TABLES) await rekey(pgm.db, table, before);
}
