/**
 * Migration 0010: the contracts list's order, one partial index per contract type and the owners
 * list's order, built CONCURRENTLY outside a transaction, through `mintlens migrate` as an operator
 * runs it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import { CONTRACT_TYPES } from "../../src/core/types.ts";
import { runCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const KEY = "(chain_id, COALESCE(mint_time, 'infinity'::timestamp with time zone), address)";

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.close();
  await stopTestServer();
});

interface IndexRow {
  name: string;
  definition: string;
  valid: boolean;
}

async function contractIndexes(table = "contracts"): Promise<Map<string, IndexRow>> {
  const rows = await db.sql<IndexRow[]>`
    SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, i.indisvalid AS valid
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = ${table}::regclass`;
  return new Map(rows.map((r) => [r.name, r]));
}

const typeIndex = (type: string) => `contracts_in_mint_order_${type.slice("TYPE_".length).toLowerCase()}`;

describe("migration 0010", () => {
  test("every contract type has its partial index of the list's order; the list and the owners list their index", async () => {
    const indexes = await contractIndexes();
    assert.equal(
      indexes.get("contracts_in_mint_order")?.definition,
      `CREATE INDEX contracts_in_mint_order ON public.contracts USING btree ${KEY}`,
    );
    // A type added to the store's list without a migration of its index fails here.
    for (const type of CONTRACT_TYPES) {
      const index = indexes.get(typeIndex(type));
      assert.ok(index, `${type} has an index`);
      assert.ok(index.valid);
      assert.equal(
        index.definition,
        `CREATE INDEX ${typeIndex(type)} ON public.contracts USING btree ${KEY} WHERE (types @> '{${type}}'::text[])`,
      );
    }
    assert.ok(!indexes.has("contracts_by_mint_time"), "the index it replaces is dropped");
    const holders = await contractIndexes("collection_holders");
    assert.equal(
      holders.get("collection_holders_in_order")?.definition,
      "CREATE INDEX collection_holders_in_order ON public.collection_holders USING btree (chain_id, contract, ((- units)), holder)",
    );
    assert.ok(!holders.has("collection_holders_by_units"), "the index it replaces is dropped");
  });

  test("reverted, and applied again by `mintlens migrate` over the INVALID leftover of a failed concurrent build", async () => {
    // Back to before 0010, through every migration after it and its own down step.
    const [later] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM schema_migrations WHERE name >= '0010'`;
    await runner({
      databaseUrl: db.url,
      dir: fileURLToPath(new URL("../../migrations", import.meta.url)),
      direction: "down",
      count: later?.n ?? 0,
      migrationsTable: "schema_migrations",
      log: () => {},
    });
    const reverted = await contractIndexes();
    assert.ok(reverted.has("contracts_by_mint_time"), "the index 0010 replaced is back");
    assert.ok(!reverted.has("contracts_in_mint_order") && !reverted.has(typeIndex("TYPE_ERC721")));
    assert.ok((await contractIndexes("collection_holders")).has("collection_holders_by_units"));

    // A build cut short, as a lost connection or a cancelled statement leaves it: a unique index on
    // values that are not unique fails after its catalog entry is made, and stays, INVALID.
    const name = typeIndex("TYPE_ERC721");
    await db.sql`
      INSERT INTO contracts (chain_id, address, mint_source, discovered_block)
      VALUES (1, '\\x01'::bytea, 'trace', 1), (1, '\\x02'::bytea, 'trace', 1)`;
    await assert.rejects(db.sql.unsafe(`CREATE UNIQUE INDEX CONCURRENTLY ${name} ON contracts (chain_id)`));
    assert.equal((await contractIndexes()).get(name)?.valid, false);

    const applied = async () =>
      (await db.sql<{ name: string }[]>`SELECT name FROM schema_migrations ORDER BY id`).map((r) => r.name);
    assert.ok(!(await applied()).includes("0010_contract_type_indexes"));
    const run = await runCommand(["migrate", "--database-url", db.url]);
    assert.equal(run.code, 0, run.stderr);
    const after = await applied();
    assert.ok(after.includes("0010_contract_type_indexes"), "applied by mintlens migrate");
    const index = (await contractIndexes()).get(name);
    assert.ok(index?.valid, "valid again");
    assert.match(index.definition, /WHERE \(types @> '\{TYPE_ERC721\}'::text\[\]\)$/);
    assert.ok(!(await contractIndexes()).has("contracts_by_mint_time"));

    const again = await runCommand(["migrate", "--database-url", db.url]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await applied(), after, "nothing left to apply");
  });
});
