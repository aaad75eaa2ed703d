/**
 * Migrations that keep a store in service: the append-only tables re-keyed in block order while
 * another connection keeps reading and writing them, a failed concurrent build rebuilt by the next
 * run, and a primary-key swap that waits for its lock in short tries.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import type postgres from "postgres";
import { generateHistory, historyGenesisTimestamp } from "../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../src/devchain/anvil.ts";
import type { Sql } from "../src/store/pg/database.ts";
import { migrate, requireCurrentSchema, schemaState } from "../src/store/pg/migrate.ts";
import { createIndexConcurrently, type MigrationDb, swapPrimaryKey } from "../src/store/pg/online-ddl.ts";
import { insertApiKey } from "../src/store/tables/api-keys.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "./support/database.ts";
import { indexUntil } from "./support/indexing.ts";
import { snapshotStore } from "./support/snapshot.ts";

const CHAIN_ID = 31337;
/** Rows written while the migration runs, on chains of their own so the indexed rows can be compared. */
const LIVE_CHAIN = 77;
const PARKED_CHAIN = 78;
/** Migrations 0001 to 0008: the store before the block-order keys. */
const BEFORE_BLOCK_ORDER_KEYS = 8;

const NEW_KEYS: Record<string, string[]> = {
  nft_transfers: ["chain_id", "block_number", "log_index", "seq"],
  fungible_transfers: ["chain_id", "block_number", "log_index"],
  sales: ["chain_id", "block_number", "log_index", "seq", "seller"],
  sale_payments: ["chain_id", "block_number", "log_index", "seq", "seller", "token"],
};

const bytes = (n: number, size: number) => Buffer.from(n.toString(16).padStart(size * 2, "0"), "hex");

/** One row in each re-keyed table at `block` of `chain`, as the indexer would write them. */
async function writeRound(sql: postgres.Sql | postgres.TransactionSql, chain: number, block: number) {
  const contract = bytes(block, 20);
  const seller = bytes(1, 20);
  await sql`
    INSERT INTO nft_transfers (chain_id, contract, block_number, log_index, seq, token_id, from_address, to_address,
                               amount, tx_hash, tx_index, block_time, standard)
    VALUES (${chain}, ${contract}, ${block}, 0, 0, ${block}, ${seller}, ${bytes(2, 20)}, 1, ${bytes(block, 32)}, 0,
            now(), 'erc721')`;
  await sql`
    INSERT INTO fungible_transfers (chain_id, contract, block_number, log_index, from_address, to_address, amount,
                                    tx_hash, tx_index, block_time)
    VALUES (${chain}, ${bytes(9, 20)}, ${block}, 1, ${bytes(2, 20)}, ${seller}, 5, ${bytes(block, 32)}, 0, now())`;
  await sql`
    INSERT INTO sales (chain_id, contract, token_id, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
                       block_time, kind, quantity, native_paid, fungible_paid, total_native, attributed_by)
    VALUES (${chain}, ${contract}, ${block}, ${block}, 0, 0, ${seller}, ${bytes(2, 20)}, ${bytes(block, 32)}, 0, now(),
            'sale', 1, 0, 5, 5, 'erc20')`;
  await sql`
    INSERT INTO sale_payments (chain_id, contract, block_number, log_index, seq, seller, token, amount, native_value)
    VALUES (${chain}, ${contract}, ${block}, 0, 0, ${seller}, ${bytes(9, 20)}, 5, 5)`;
}

/** What the API and the indexer read: rows by block, and a sale's payments by the sale's key. */
async function readRound(sql: postgres.Sql | postgres.TransactionSql) {
  await sql`SELECT count(*) FROM nft_transfers WHERE chain_id = ${CHAIN_ID} AND block_number > 0`;
  await sql`SELECT count(*) FROM fungible_transfers WHERE chain_id = ${CHAIN_ID} AND block_number > 0`;
  await sql`
    SELECT p.token, p.amount FROM sales s
    JOIN sale_payments p ON p.chain_id = s.chain_id AND p.block_number = s.block_number
      AND p.log_index = s.log_index AND p.seq = s.seq AND p.seller = s.seller
    WHERE s.chain_id = ${CHAIN_ID} ORDER BY s.block_number DESC LIMIT 5`;
}

/** Each table's primary key columns, as the catalog has them, and whether its index is valid. */
async function primaryKeys(sql: Sql) {
  const rows = await sql<{ table: string; columns: string[]; valid: boolean }[]>`
    SELECT c.conrelid::regclass::text AS table, i.indisvalid AS valid,
           array(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
    FROM pg_constraint c JOIN pg_index i ON i.indexrelid = c.conindid
    WHERE c.contype = 'p' AND c.conrelid::regclass::text IN ('nft_transfers', 'fungible_transfers', 'sales', 'sale_payments')`;
  return Object.fromEntries(rows.map((r) => [r.table, { columns: r.columns, valid: r.valid }]));
}

async function indexNames(sql: Sql, tables: readonly string[]): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    SELECT indexname AS name FROM pg_indexes WHERE tablename IN ${sql(tables)} ORDER BY 1`;
  return rows.map((r) => r.name);
}

/** The store's rows without those written while the migration ran. */
function withoutLiveRows(snapshot: Record<string, unknown[]>): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(snapshot).map(([table, rows]) => [
      table,
      rows.filter((r) => {
        const chain = (r as { chain_id?: string }).chain_id;
        return chain !== String(LIVE_CHAIN) && chain !== String(PARKED_CHAIN);
      }),
    ]),
  );
}

/** Waits, however long it takes (the test runner's timeout ends a wait that never ends). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the block-order keys", () => {
  let anvil: Anvil;
  let db: TestDatabase;
  before(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID, timestamp: historyGenesisTimestamp(3) });
    const history = await generateHistory({ rpcUrl: anvil.url, seed: "migrations", days: 3 });
    db = await createTestDatabase({ migrations: BEFORE_BLOCK_ORDER_KEYS });
    const { contracts } = history;
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      untilBlock: history.blocks.last,
      nativePegged: [contracts.weth.address],
      ratePools: [
        { kind: "v2", address: contracts.wethStablePool.address },
        { kind: "v2", address: contracts.tokenWethPool.address },
      ],
      usdTokens: [contracts.stablecoin.address],
    });
    await insertApiKey(db.sql, {
      userName: "reader",
      keyId: "0123456789abcdef",
      keyHash: Buffer.alloc(32, 1),
    });
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("re-keyed while another connection keeps reading and writing: the rows unchanged, the keys in block order", async () => {
    assert.deepEqual((await schemaState(db.sql)).pending[0], "0009_block_order_keys");
    const before = await snapshotStore(db.sql);
    for (const table of [
      "nft_transfers",
      "fungible_transfers",
      "sales",
      "sale_payments",
      "pool_states",
      "punk_bids",
    ]) {
      assert.ok((before[table]?.length ?? 0) > 0, `the indexed store has ${table} rows`);
    }
    const keysBefore = await primaryKeys(db.sql);
    assert.deepEqual(keysBefore.nft_transfers?.columns, [
      "chain_id",
      "contract",
      "block_number",
      "log_index",
      "seq",
    ]);

    // An indexer's batch left open: a concurrent build waits for writers that started before it.
    const parked = await db.sql.reserve();
    await parked`BEGIN`;
    await writeRound(parked, PARKED_CHAIN, 1);

    // The API and the indexer, all along.
    let live = true;
    let rounds = 0;
    const failures: unknown[] = [];
    const traffic = (async () => {
      while (live) {
        try {
          await db.sql.begin(async (tx) => writeRound(tx, LIVE_CHAIN, rounds + 1));
          rounds++;
          await readRound(db.sql);
        } catch (error) {
          failures.push(error);
          return;
        }
      }
    })();

    const log: string[] = [];
    const migrating = migrate(db.url, (m) => log.push(m));
    let migrated = false;
    void migrating.then(
      () => (migrated = true),
      () => (migrated = true),
    );
    await until(async () => {
      assert.ok(!migrated, `the migration did not wait for the open batch: ${log.join("\n")}`);
      const [row] = await db.sql<{ phase: string }[]>`
        SELECT phase FROM pg_stat_progress_create_index WHERE relid = 'nft_transfers'::regclass`;
      return row?.phase === "waiting for writers before build";
    });

    // While the key is being built, reads and writes of every table go on, and none waits for it.
    const roundsBefore = rounds;
    await db.sql.begin(async (tx) => {
      await tx`SET LOCAL lock_timeout = '20s'`;
      await writeRound(tx, LIVE_CHAIN, 1_000_000);
      await readRound(tx);
    });
    await until(async () => rounds > roundsBefore || failures.length > 0);
    assert.deepEqual(failures, []);
    assert.equal(migrated, false, "the build still waits for the open batch");

    await parked`COMMIT`;
    parked.release();
    await migrating;
    live = false;
    await traffic;
    assert.deepEqual(failures, []);

    const keys = await primaryKeys(db.sql);
    for (const [table, columns] of Object.entries(NEW_KEYS)) {
      assert.deepEqual(keys[table], { columns, valid: true }, table);
    }
    assert.deepEqual(await indexNames(db.sql, Object.keys(NEW_KEYS)), [
      "fungible_transfers_pkey",
      "nft_transfers_pkey",
      "sale_payments_pkey",
      "sales_last_of_token",
      "sales_pkey",
    ]);
    const after = await snapshotStore(db.sql);
    assert.deepEqual(withoutLiveRows(after), before);
    const [written] = await db.sql<{ t: number; f: number; s: number; p: number }[]>`
      SELECT (SELECT count(*)::int FROM nft_transfers WHERE chain_id = ${LIVE_CHAIN}) AS t,
             (SELECT count(*)::int FROM fungible_transfers WHERE chain_id = ${LIVE_CHAIN}) AS f,
             (SELECT count(*)::int FROM sales WHERE chain_id = ${LIVE_CHAIN}) AS s,
             (SELECT count(*)::int FROM sale_payments WHERE chain_id = ${LIVE_CHAIN}) AS p`;
    assert.deepEqual(written, { t: rounds + 1, f: rounds + 1, s: rounds + 1, p: rounds + 1 });
    const [keyRows] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM api_keys`;
    assert.equal(keyRows?.n, 1);
    await requireCurrentSchema(db.sql);
  });
});

describe("a failed concurrent build", () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ migrations: BEFORE_BLOCK_ORDER_KEYS });
  });
  after(async () => {
    await db?.close();
    await stopTestServer();
  });

  test("leaves an invalid index that the next run drops and builds again, after the tables already re-keyed", async () => {
    await writeRound(db.sql, CHAIN_ID, 5);
    // Two sales of different collections under one (block, log index, seq, seller): only a corrupt
    // store holds them, and the unique build of the block-order key fails on them.
    await db.sql`
      INSERT INTO sales (chain_id, contract, token_id, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
                         block_time, kind, quantity, native_paid, fungible_paid, total_native, attributed_by)
      SELECT chain_id, ${bytes(999, 20)}, token_id, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
             block_time, kind, quantity, native_paid, fungible_paid, total_native, attributed_by
      FROM sales WHERE chain_id = ${CHAIN_ID}`;

    await assert.rejects(
      migrate(db.url),
      /database migration failed: could not create unique index "sales_pkey_next"/,
    );
    const [leftover] = await db.sql<{ valid: boolean }[]>`
      SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'sales_pkey_next'::regclass`;
    assert.deepEqual(leftover, { valid: false }, "the failed build left an invalid index");
    const halfway = await primaryKeys(db.sql);
    assert.deepEqual(
      halfway.nft_transfers?.columns,
      NEW_KEYS.nft_transfers,
      "the tables before it were re-keyed",
    );
    assert.deepEqual(halfway.sales?.columns, [
      "chain_id",
      "contract",
      "block_number",
      "log_index",
      "seq",
      "seller",
    ]);
    assert.deepEqual((await schemaState(db.sql)).pending, ["0009_block_order_keys"]);

    await db.sql`DELETE FROM sales WHERE contract = ${bytes(999, 20)}`;
    await migrate(db.url);
    const keys = await primaryKeys(db.sql);
    for (const [table, columns] of Object.entries(NEW_KEYS)) {
      assert.deepEqual(keys[table], { columns, valid: true }, table);
    }
    assert.ok(!(await indexNames(db.sql, ["sales"])).includes("sales_pkey_next"));
    await requireCurrentSchema(db.sql);
  });

  test("a primary-key swap that meets a long transaction gives up its place in the queue and tries again", async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const failedTries: string[] = [];
    const migrationDb: MigrationDb = {
      query: async (text) => {
        try {
          return await client.query(text);
        } catch (error) {
          if (text.startsWith("ALTER TABLE")) failedTries.push((error as Error).message);
          throw error;
        }
      },
      select: async (text) => (await client.query(text)).rows,
    };
    try {
      await db.sql`CREATE TABLE swapped (id integer PRIMARY KEY, other integer NOT NULL)`;
      await db.sql`INSERT INTO swapped SELECT n, -n FROM generate_series(1, 100) AS n`;
      await createIndexConcurrently(migrationDb, "swapped_by_other", "swapped (other)", { unique: true });
      // A reader's long transaction holds a lock the swap must wait for.
      const reader = await db.sql.reserve();
      await reader`BEGIN`;
      await reader`SELECT count(*) FROM swapped`;
      const swapping = swapPrimaryKey(migrationDb, "swapped", "swapped_by_other");
      await until(async () => failedTries.length > 0);
      assert.match(failedTries[0] ?? "", /lock timeout/);
      // Between tries the table is not queued behind the swap.
      await db.sql`SELECT count(*) FROM swapped`;
      await reader`COMMIT`;
      reader.release();
      await swapping;
      const [key] = await db.sql<{ def: string }[]>`
        SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'swapped'::regclass AND contype = 'p'`;
      assert.equal(key?.def, "PRIMARY KEY (other)");
    } finally {
      await client.end();
    }
  });
});
