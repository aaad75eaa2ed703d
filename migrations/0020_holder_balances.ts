/**
 * A wallet's NFTs: `token_balances_by_holder` lists an address's holdings by (contract, token id),
 * so that a page of them is one range of an index however many tokens the chain has. Only rows with
 * units are in it: a holder of unknown balance (indexed from a start block, it sent units it got
 * before) is listed by no page, and its rows cost the index nothing. It is built concurrently:
 * the indexer and the API go on meanwhile.
 */
import type { MigrationBuilder } from "node-pg-migrate";
import { createIndexConcurrently, dropIndexConcurrently } from "../src/store/pg/online-ddl.ts";

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  await createIndexConcurrently(
    pgm.db,
    "token_balances_by_holder",
    "token_balances (chain_id, holder, contract, token_id) WHERE amount > 0",
  );
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  await dropIndexConcurrently(pgm.db, "token_balances_by_holder");
}
