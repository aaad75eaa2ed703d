/**
 * The transfers list: each of its filters is one range of an index in block order, so that a page
 * costs its own rows at any depth. `nft_transfers` is keyed in block order (chain, block, log
 * index, seq) and gets one index per filter: a collection's transfers, a token's, a sender's and a
 * recipient's; the sales list walks `sales` by its key, or a collection's sales by
 * `sales_by_contract` (a sale in twenty transfers: walking a collection's transfers for its sales
 * would read twenty rows per row kept). A filter on two of them walks the narrower index and
 * checks the other. Each index is built concurrently: the indexer and the API go on meanwhile.
 */
import type { MigrationBuilder } from "node-pg-migrate";
import { createIndexConcurrently, dropIndexConcurrently } from "../src/store/pg/online-ddl.ts";

const INDEXES = [
  ["nft_transfers_by_contract", "nft_transfers (chain_id, contract, block_number, log_index, seq)"],
  ["nft_transfers_by_token", "nft_transfers (chain_id, contract, token_id, block_number, log_index, seq)"],
  ["nft_transfers_by_sender", "nft_transfers (chain_id, from_address, block_number, log_index, seq)"],
  ["nft_transfers_by_recipient", "nft_transfers (chain_id, to_address, block_number, log_index, seq)"],
  ["sales_by_contract", "sales (chain_id, contract, block_number, log_index, seq)"],
] as const;

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  for (const [name, definition] of INDEXES) await createIndexConcurrently(pgm.db, name, definition);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  for (const [name] of INDEXES) await dropIndexConcurrently(pgm.db, name);
}
