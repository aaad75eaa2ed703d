/**
 * The sender index leaves the mints out. A mint's sender is the zero address, so every mint of the
 * chain went into one range of `nft_transfers_by_sender` that no wallet's list reads: on chains
 * where most NFT transfers are mints, that was most of the index's entries, and an index entry is
 * the larger part of what indexing a transfer costs. A list of mints walks the transfers' key (or a
 * collection's index) instead, where mints are a large share of the rows read.
 *
 * The new index is built concurrently under another name, the full one dropped, and the new one
 * renamed: the API keeps answering meanwhile, and each step is skipped when run again after a
 * failure.
 */
import type { MigrationBuilder } from "node-pg-migrate";
import { createIndexConcurrently, dropIndexConcurrently } from "../src/store/pg/online-ddl.ts";

const COLUMNS = "nft_transfers (chain_id, from_address, block_number, log_index, seq)";
const NOT_MINTS = "from_address <> '\\x0000000000000000000000000000000000000000'::bytea";

async function isPartial(pgm: MigrationBuilder, name: string): Promise<boolean | undefined> {
  const rows = (await pgm.db.select(
    `SELECT indpred IS NOT NULL AS partial FROM pg_index WHERE indexrelid = to_regclass('${name}')`,
  )) as { partial: boolean }[];
  return rows[0]?.partial;
}

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  if ((await isPartial(pgm, "nft_transfers_by_sender")) === true) return;
  await createIndexConcurrently(pgm.db, "nft_transfers_by_sender_next", `${COLUMNS} WHERE ${NOT_MINTS}`);
  await dropIndexConcurrently(pgm.db, "nft_transfers_by_sender");
  await pgm.db.query("ALTER INDEX nft_transfers_by_sender_next RENAME TO nft_transfers_by_sender");
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  if ((await isPartial(pgm, "nft_transfers_by_sender")) === false) return;
  await createIndexConcurrently(pgm.db, "nft_transfers_by_sender_next", COLUMNS);
  await dropIndexConcurrently(pgm.db, "nft_transfers_by_sender");
  await pgm.db.query("ALTER INDEX nft_transfers_by_sender_next RENAME TO nft_transfers_by_sender");
}
