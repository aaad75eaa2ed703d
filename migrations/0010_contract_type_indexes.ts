/**
 * The orders of the contracts list and of a collection's owners list as indexes, so that every
 * page of either, at any depth and under any filter, is one range of an index per list of rows it
 * reads: the whole contracts list, the list of each contract type, and the holders of a collection.
 *
 * - Contracts go by mint time, then address; a contract whose mint time is unknown comes after
 *   every other (as NULLS LAST would put it), which the key `coalesce(mint_time, 'infinity')`
 *   makes a value like any other, so that a page after such a contract is still a range.
 * - Each contract type has a partial index of the same key: a `contractTypes` filter reads its
 *   types' ranges and merges them, instead of walking the whole list and checking every row. A
 *   query uses a partial index only when its predicate is written as here, with the type as a
 *   constant (src/store/read/contracts.ts writes it so).
 * - Holders go by units held, most first, then address ascending: the key `-units` puts both
 *   columns in one direction, so that "after this holder" is one row comparison, a range, where
 *   (units DESC, holder) needed two.
 *
 * The indexes are built CONCURRENTLY, so the indexer and the API keep writing and reading the
 * tables meanwhile; that cannot run in a transaction. A build that failed half-way (a lost
 * connection, a cancelled statement) leaves an INVALID index of its name, which IF NOT EXISTS would
 * keep: it is dropped first and built again. The indexes they replace are dropped last.
 */
import type { MigrationBuilder } from "node-pg-migrate";

/** The contract types at the time of this migration; a later type gets its index in a migration of its own. */
const TYPES = ["TYPE_ERC20", "TYPE_ERC721", "TYPE_ERC1155", "TYPE_ERC721_LEGACY", "TYPE_CRYPTOPUNKS"];

const CONTRACT_KEY = "(chain_id, (coalesce(mint_time, 'infinity'::timestamptz)), address)";

interface Index {
  name: string;
  definition: string;
}

const CREATED: readonly Index[] = [
  { name: "contracts_in_mint_order", definition: `contracts ${CONTRACT_KEY}` },
  ...TYPES.map((type) => ({
    name: `contracts_in_mint_order_${type.slice("TYPE_".length).toLowerCase()}`,
    definition: `contracts ${CONTRACT_KEY} WHERE types @> '{${type}}'::text[]`,
  })),
  {
    name: "collection_holders_in_order",
    definition: "collection_holders (chain_id, contract, (-units), holder)",
  },
];

const REPLACED: readonly Index[] = [
  { name: "contracts_by_mint_time", definition: "contracts (chain_id, mint_time, address)" },
  {
    name: "collection_holders_by_units",
    definition: "collection_holders (chain_id, contract, units DESC, holder)",
  },
];

/**
 * Each statement is sent alone (several in one query string would run as one transaction): drop
 * the INVALID leftovers among `indexes`, then build each that does not exist.
 */
async function build(pgm: MigrationBuilder, indexes: readonly Index[]): Promise<void> {
  const invalid: { name: string }[] = await pgm.db.select(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE NOT i.indisvalid AND c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)`,
    [indexes.map((i) => i.name)],
  );
  for (const { name } of invalid) pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  for (const { name, definition } of indexes) {
    pgm.sql(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${definition}`);
  }
}

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  await build(pgm, CREATED);
  for (const { name } of REPLACED) pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.noTransaction();
  await build(pgm, REPLACED);
  for (const { name } of CREATED) pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
}
