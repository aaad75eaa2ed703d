/**
 * A collection's all-time sales, as collection metadata and totals read them, on a table of day
 * rows large enough for the planner to mean it: one range of the primary key, the collection's own
 * days and nothing else, whatever the number of other collections.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { collectionSalesQuery } from "../../src/store/read/collection.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const COLLECTIONS = 1_000;
const DAYS = 365;

let db: TestDatabase;

const address = (i: number) => Buffer.from(`${i.toString(16).padStart(8, "0")}${"c0".repeat(16)}`, "hex");

before(async () => {
  db = await createTestDatabase();
  await db.sql`
    INSERT INTO collection_days (chain_id, contract, day, minted, burned, holders_delta, transfers, sales, sold_units,
                                 volume, flagged_sales, flagged_volume, unpriced_sales)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(c), 8, '0') || repeat('c0', 16), 'hex'),
           timestamptz '2024-01-01' + d * interval '1 day', 0, 0, 0, 1, c % 3, c % 3, (c % 3) * 1000, d % 2, d % 2, 0
    FROM generate_series(1, ${COLLECTIONS}) AS c, generate_series(0, ${DAYS - 1}) AS d`;
  await db.sql.unsafe("VACUUM ANALYZE collection_days");
});

after(async () => {
  await db?.close();
  await stopTestServer();
});

test("a collection's sales are one range of collection_days' key: its days, no other row", async () => {
  const contract = address(517);
  const { all, shown } = await runPlan(db.sql, collectionSalesQuery(db.sql, CHAIN_ID, contract));
  const scans = all.filter((n) => n["Node Type"].endsWith("Scan"));
  assert.equal(scans.length, 1, shown);
  const [scan] = scans;
  assert.ok(scan);
  assert.match(scan["Node Type"], /^(Index|Index Only|Bitmap Heap|Bitmap Index) Scan$|^Index/, shown);
  for (const node of all) {
    assert.doesNotMatch(node["Node Type"], /Seq Scan|Sort/, shown);
    assert.equal(node.Filter, undefined, `no row is checked one by one: ${shown}`);
  }
  const indexed = all.filter((n) => n["Index Name"] !== undefined);
  assert.ok(
    indexed.every((n) => n["Index Name"] === "collection_days_pkey" && n["Index Cond"]),
    shown,
  );
  assert.ok(indexed.length > 0, shown);
  for (const n of indexed)
    assert.ok(n["Actual Rows"] * n["Actual Loops"] <= DAYS, `at most ${DAYS} rows: ${shown}`);
  // And it sums that collection's days, exactly.
  const [row] = await collectionSalesQuery(db.sql, CHAIN_ID, contract);
  assert.deepEqual(row, {
    sales: `${(517 % 3) * DAYS}`,
    sold_units: `${(517 % 3) * DAYS}`,
    volume: `${(517 % 3) * 1000 * DAYS}`,
    flagged_sales: `${Math.floor(DAYS / 2)}`,
    flagged_volume: `${Math.floor(DAYS / 2)}`,
    unpriced_sales: "0",
  });
});
