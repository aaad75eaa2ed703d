/**
 * The plans PostgreSQL makes of the outbox's statements on 300,000 rows of a chain among another
 * chain's: a poll at the head, a read from the oldest cursor, a deep filtered read and a confirmed
 * read each read one range of the key, bounded by the read's size; a rollback walks back from the
 * newest row over the orphaned rows alone; a retention batch reads and deletes the oldest rows by
 * the key.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import type { Sql } from "../../src/store/pg/database.ts";
import { SCAN_ROWS, streamEventsQuery } from "../../src/store/read/stream-events.ts";
import { retractAfter } from "../../src/store/tables/stream-events.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { type PlanNode, runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const ROWS = 300_000;
/** Rows per block. */
const PER_BLOCK = 10;
const HEAD = ROWS / PER_BLOCK;

let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
  for (const [chain, rows] of [
    [CHAIN_ID, ROWS],
    [2, ROWS / 3],
  ] as const) {
    await db.sql`
      INSERT INTO chains (chain_id, name, native_symbol, start_block, next_block)
      VALUES (${chain}, ${`chain-${chain}`}, 'ETH', 0, ${rows / PER_BLOCK + 1})`;
    await db.sql.unsafe(`
      INSERT INTO stream_events (chain_id, id, block_number, log_index, seq, kind, contract, token_id, from_address,
                                 to_address, amount, tx_hash, block_time, standard)
      SELECT ${chain}, i, (i - 1) / ${PER_BLOCK} + 1, (i - 1) % ${PER_BLOCK}, 0, 0,
             decode(lpad(to_hex(i % 50), 40, '0'), 'hex'), i, decode(lpad(to_hex(i % 997), 40, '0'), 'hex'),
             decode(lpad(to_hex(i % 991 + 1000), 40, '0'), 'hex'), 1, decode(md5(i::text) || md5(i::text), 'hex'),
             timestamptz '2024-01-01' + i * interval '1 second', 'erc721'
      FROM generate_series(1, ${rows}) AS i`);
  }
  await db.sql`ANALYZE stream_events`;
});
after(async () => {
  await db?.close();
  await stopTestServer();
});

/** The nodes that read the outbox's key (index scans, and the bitmap scans under a heap scan). */
function keyScans(all: PlanNode[]): PlanNode[] {
  return all.filter((n) => n["Index Name"] === "stream_events_pkey");
}

/** Whether the outbox is read by its key alone: no node reads its table in any other way. */
function byKeyAlone(all: PlanNode[]): boolean {
  return all.every(
    (n) =>
      n["Relation Name"] !== "stream_events" ||
      n["Index Name"] === "stream_events_pkey" ||
      ["ModifyTable", "Bitmap Heap Scan"].includes(n["Node Type"]),
  );
}

/** Rows the key's scans read: those they returned and those their filter threw away. */
function rowsRead(scans: PlanNode[]): number {
  return scans.reduce(
    (sum, n) => sum + (n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0)) * n["Actual Loops"],
    0,
  );
}

test("every read of the stream is one range of the key, bounded by the read", async () => {
  const latest = BigInt(ROWS) * 4n + 3n;
  const wallet = `0x${(5).toString(16).padStart(40, "0")}` as Address;
  const cases = [
    { name: "a poll at the head", query: { after: latest, limit: 100 }, most: 3 },
    { name: "the oldest page", query: { after: 0n, limit: 100 }, most: 101 + 1 },
    {
      name: "a deep filtered page",
      query: { after: latest / 3n, limit: 100, addresses: [wallet], kinds: ["ownership" as const] },
      most: SCAN_ROWS + 2,
    },
    { name: "a confirmed page", query: { after: latest / 2n, limit: 100, confirmations: 12 }, most: 101 + 1 },
  ];
  for (const c of cases) {
    const { all, shown } = await runPlan(db.sql, streamEventsQuery(db.sql, CHAIN_ID, c.query));
    const scans = keyScans(all);
    assert.ok(
      scans.length === 2 && byKeyAlone(all),
      `${c.name}: the newest id and one range, by the key: ${shown}`,
    );
    assert.ok(
      rowsRead(scans) <= c.most,
      `${c.name}: read ${rowsRead(scans)} rows at most ${c.most}: ${shown}`,
    );
  }
});

test("a rollback reads the newest rows alone: the orphaned ones and the row it stops at", async () => {
  const orphanedBlocks = 5;
  await db.sql
    .begin(async (tx) => {
      const explained = tx as unknown as Sql;
      // The statements retractAfter sends, run and explained in a transaction that is then undone.
      const walk = await runPlan(
        explained,
        tx`SELECT id FROM stream_events
           WHERE chain_id = ${CHAIN_ID} AND block_number <= ${HEAD - orphanedBlocks} AND retracts IS NULL
           ORDER BY id DESC LIMIT 1`,
      );
      assert.ok(byKeyAlone(walk.all), walk.shown);
      assert.ok(rowsRead(keyScans(walk.all)) <= orphanedBlocks * PER_BLOCK + 1, walk.shown);
      const retracted = await retractAfter(tx, CHAIN_ID, HEAD - orphanedBlocks);
      assert.equal(retracted, orphanedBlocks * PER_BLOCK);
      const update = await runPlan(
        explained,
        tx`UPDATE stream_events SET rollback_peak = 1
           WHERE chain_id = ${CHAIN_ID} AND id > ${ROWS - orphanedBlocks * PER_BLOCK}::bigint
             AND block_number > ${HEAD - orphanedBlocks} AND retracts IS NULL AND rollback_peak IS NULL`,
      );
      assert.ok(byKeyAlone(update.all) && keyScans(update.all).length === 1, update.shown);
      // The rows after the floor: the orphaned rows, marked already, and their retractions.
      assert.ok(rowsRead(keyScans(update.all)) <= orphanedBlocks * PER_BLOCK * 2, update.shown);
      throw new Error("undone");
    })
    .catch((error: unknown) => {
      if (!(error instanceof Error && error.message === "undone")) throw error;
    });
});

test("a retention batch reads and deletes the oldest rows by the key", async () => {
  await db.sql
    .begin(async (tx) => {
      const explained = tx as unknown as Sql;
      const read = await runPlan(
        explained,
        tx`SELECT id, block_time >= ${new Date("2024-01-02")} AS young FROM stream_events
           WHERE chain_id = ${CHAIN_ID} ORDER BY id LIMIT 1000`,
      );
      assert.ok(byKeyAlone(read.all) && keyScans(read.all).length === 1, read.shown);
      assert.ok(rowsRead(keyScans(read.all)) <= 1000, read.shown);
      const deleted = await runPlan(
        explained,
        tx`DELETE FROM stream_events WHERE chain_id = ${CHAIN_ID} AND id <= ${1000}`,
      );
      assert.ok(byKeyAlone(deleted.all) && keyScans(deleted.all).length === 1, deleted.shown);
      assert.ok(rowsRead(keyScans(deleted.all)) <= 1000, deleted.shown);
      throw new Error("undone");
    })
    .catch((error: unknown) => {
      if (!(error instanceof Error && error.message === "undone")) throw error;
    });
});
