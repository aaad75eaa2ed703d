/**
 * Migrations that keep a store in service: the append-only tables re-keyed in block order while
 * another connection keeps reading and writing them, a failed concurrent build rebuilt by the next
 * run, and a primary-key swap that waits for its lock in short tries.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import type postgres from "postgres";
import type { Sql } from "../../src/store/pg/database.ts";
import { migrate, requireCurrentSchema, schemaState } from "../../src/store/pg/migrate.ts";
import { createIndexConcurrently, type MigrationDb, swapPrimaryKey } from "../../src/store/pg/online-ddl.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const CHAIN_ID = 31337;
/** Rows written while the migration runs, on chains of their own so the stored rows can be compared. */
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

/**
 * A store at migration 0008 as the indexer of that version left it: rows in every table, the
 * append-only ones by the thousand, in block order.
 */
async function fillStore(sql: Sql): Promise<void> {
  const c = (expr: string) => `decode(lpad(to_hex(${expr}), 40, '0'), 'hex')`;
  const h = (expr: string) => `decode(lpad(to_hex(${expr}), 64, '0'), 'hex')`;
  const t = (block: string) => `to_timestamp(1700000000 + (${block}) * 12)`;
  const chain = CHAIN_ID;
  await sql.unsafe(`
    INSERT INTO chains (chain_id, name, native_symbol, start_block, next_block) VALUES (${chain}, 'dev', 'ETH', 0, 2001);
    INSERT INTO recent_blocks (chain_id, number, hash, parent_hash, block_time)
      SELECT ${chain}, b, ${h("b")}, ${h("b - 1")}, ${t("b")} FROM generate_series(1745, 2000) AS b;
    INSERT INTO contracts (chain_id, address, types, name, symbol, mint_tx, mint_block, mint_time, minter, creator,
                           mint_source, discovered_block, shapes)
      SELECT ${chain}, ${c("n")}, '{TYPE_ERC721}', 'Collection ' || n, 'C' || n, ${h("n")}, n, ${t("n")},
             ${c("1000 + n")}, ${c("1000 + n")}, 'trace', n, '{erc721}'
      FROM generate_series(1, 50) AS n;
    INSERT INTO contract_creations (chain_id, address, block_number, block_time, tx_hash, creator, minter, source)
      SELECT ${chain}, ${c("n")}, n, ${t("n")}, ${h("n")}, ${c("1000 + n")}, ${c("1000 + n")}, 'trace'
      FROM generate_series(1, 60) AS n;
    INSERT INTO skipped_logs (chain_id, block_number, log_index, contract, tx_hash, reason, tokens)
      SELECT ${chain}, n, 99, ${c("n")}, ${h("n")}, 'spam', 1000000 FROM generate_series(1, 20) AS n;
    INSERT INTO nft_transfers (chain_id, contract, block_number, log_index, seq, token_id, from_address, to_address,
                               amount, tx_hash, tx_index, block_time, standard)
      SELECT ${chain}, ${c("1 + g % 50")}, g / 10, g % 10, 0, g, ${c("0")}, ${c("5000 + g % 300")}, 1, ${h("g")},
             g % 10, ${t("g / 10")}, 'erc721'
      FROM generate_series(10, 19999) AS g;
    INSERT INTO fungible_transfers (chain_id, contract, block_number, log_index, from_address, to_address, amount,
                                    tx_hash, tx_index, block_time)
      SELECT ${chain}, ${c("9000 + g % 3")}, g / 10, 10 + g % 10, ${c("5000 + g % 300")}, ${c("5001 + g % 300")},
             g * 1000, ${h("g")}, g % 10, ${t("g / 10")}
      FROM generate_series(10, 9999) AS g;
    INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
      SELECT ${chain}, ${c("1 + g % 50")}, g, ${c("5000 + g % 300")}, 1 FROM generate_series(10, 19999) AS g;
    INSERT INTO collection_holders (chain_id, contract, holder, units)
      SELECT ${chain}, ${c("1 + n % 50")}, ${c("5000 + n")}, 3 FROM generate_series(0, 299) AS n;
    INSERT INTO collection_stats (chain_id, contract, minted, burned, holders, transfers)
      SELECT ${chain}, ${c("n")}, 400, 1, 6, 401 FROM generate_series(1, 50) AS n;
    INSERT INTO collection_buckets (chain_id, contract, bucket_start, minted, transfers, holders_delta, sales,
                                    sold_units, volume, min_unit_price, max_unit_price)
      SELECT ${chain}, ${c("n")}, to_timestamp(1700000000), 400, 400, 6, 10, 10, 5000, 100, 900
      FROM generate_series(1, 50) AS n;
    INSERT INTO collection_days (chain_id, contract, day, minted, burned, holders_delta, transfers, sales, sold_units,
                                 volume, min_unit_price, max_unit_price)
      SELECT ${chain}, ${c("n")}, to_timestamp(1699920000), 400, 0, 6, 400, 10, 10, 5000, 100, 900
      FROM generate_series(1, 50) AS n;
    INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
      SELECT ${chain}, ${c("1 + g % 50")}, g, g / 10, g % 10, 0, ${h("g")}, ${t("g / 10")}
      FROM generate_series(10, 19999) AS g;
    INSERT INTO sales (chain_id, contract, token_id, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
                       block_time, kind, quantity, native_paid, fungible_paid, total_native, total_usd, attributed_by,
                       market, flags)
      SELECT ${chain}, ${c("1 + g % 50")}, g, g / 10, g % 10, 0, ${c("5000 + g % 300")}, ${c("5001 + g % 300")},
             ${h("g")}, g % 10, ${t("g / 10")}, 'sale', 1, g * 10, g * 1000, g * 1010, g * 0.003, 'erc20', 'seaport',
             '{}'
      FROM generate_series(10, 19999, 3) AS g;
    INSERT INTO sale_payments (chain_id, contract, block_number, log_index, seq, seller, token, amount, native_value)
      SELECT ${chain}, ${c("1 + g % 50")}, g / 10, g % 10, 0, ${c("5000 + g % 300")}, ${c("9000 + k")}, g * 1000, g * 1000
      FROM generate_series(10, 19999, 3) AS g, generate_series(0, 1) AS k;
    INSERT INTO punk_bids (chain_id, contract, punk_index, block_number, log_index, bidder, value)
      SELECT ${chain}, ${c("7")}, n, n, 50, ${c("6000 + n")}, n * 100 FROM generate_series(1, 30) AS n;
    INSERT INTO pool_states (chain_id, pool, block_number, log_index, reserve0, reserve1)
      SELECT ${chain}, ${c("9100")}, b, 60, b * 1000, b * 3 FROM generate_series(1, 2000) AS b;
    INSERT INTO api_keys (user_name, key_id, key_hash) VALUES ('reader', '0123456789abcdef', ${h("1")});
    INSERT INTO token_metadata (chain_id, contract, token_id, status, fetched_at, name)
      SELECT ${chain}, ${c("1 + g % 50")}, g, 'ok', ${t("g / 10")}, 'Token ' || g FROM generate_series(10, 99) AS g;
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
      SELECT ${chain}, ${c("1 + g % 50")}, g, 'mint' FROM generate_series(100, 199) AS g;
    ANALYZE;
  `);
}

/**
 * Every row of every table, in the columns each table had before the migration (canonically
 * ordered), leaving out rows written meanwhile: equal before and after a migration that moves
 * no row.
 */
async function tableContents(sql: Sql, columns: Map<string, string[]>): Promise<Record<string, string[]>> {
  const contents: Record<string, string[]> = {};
  for (const [table, names] of columns) {
    if (table === "schema_migrations") continue;
    const rows = await sql.unsafe<{ row: string }[]>(
      `SELECT json_build_array(${names.map((n) => `"${n}"`).join(", ")})::text AS row FROM ${table}
       ${names.includes("chain_id") ? `WHERE chain_id NOT IN (${LIVE_CHAIN}, ${PARKED_CHAIN})` : ""} ORDER BY 1`,
    );
    contents[table] = rows.map((r) => r.row);
  }
  return contents;
}

async function tableColumns(sql: Sql): Promise<Map<string, string[]>> {
  const rows = await sql<{ table: string; columns: string[] }[]>`
    SELECT table_name AS table, array_agg(column_name::text ORDER BY ordinal_position) AS columns
    FROM information_schema.columns WHERE table_schema = 'public' GROUP BY table_name ORDER BY table_name`;
  return new Map(rows.map((r) => [r.table, r.columns]));
}

/** Waits, however long it takes (the test runner's timeout ends a wait that never ends). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the block-order keys", () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ migrations: BEFORE_BLOCK_ORDER_KEYS });
    await fillStore(db.sql);
  });
  after(async () => {
    await db?.close();
    await stopTestServer();
  });

  test("re-keyed while another connection keeps reading and writing: the rows unchanged, the keys in block order", async () => {
    assert.equal((await schemaState(db.sql)).pending[0], "0009_block_order_keys");
    const columns = await tableColumns(db.sql);
    const before = await tableContents(db.sql, columns);
    for (const [table, rows] of Object.entries(before)) assert.ok(rows.length > 0, `rows in ${table}`);
    assert.equal(Object.keys(before).length, 20, Object.keys(before).join(", "));
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
      // The transfers list's (migration 0022).
      "nft_transfers_by_contract",
      "nft_transfers_by_recipient",
      "nft_transfers_by_sender",
      "nft_transfers_by_token",
      "nft_transfers_pkey",
      "sale_payments_pkey",
      "sales_by_contract",
      "sales_by_time",
      "sales_last_of_token",
      "sales_pkey",
    ]);
    assert.deepEqual(await tableContents(db.sql, columns), before);
    const [written] = await db.sql<{ t: number; f: number; s: number; p: number }[]>`
      SELECT (SELECT count(*)::int FROM nft_transfers WHERE chain_id = ${LIVE_CHAIN}) AS t,
             (SELECT count(*)::int FROM fungible_transfers WHERE chain_id = ${LIVE_CHAIN}) AS f,
             (SELECT count(*)::int FROM sales WHERE chain_id = ${LIVE_CHAIN}) AS s,
             (SELECT count(*)::int FROM sale_payments WHERE chain_id = ${LIVE_CHAIN}) AS p`;
    assert.deepEqual(written, { t: rounds + 1, f: rounds + 1, s: rounds + 1, p: rounds + 1 });
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
    assert.equal((await schemaState(db.sql)).pending[0], "0009_block_order_keys", "not recorded as applied");

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
