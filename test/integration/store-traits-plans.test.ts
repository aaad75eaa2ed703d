/**
 * The plans PostgreSQL makes of a collection's traits, among other collections': the string list's
 * first page, a deep page by page token and the page at the largest offset each read one range of
 * collection_traits' primary key; the numeric list skips from one trait to the next along
 * collection_numeric_traits' key and reads each one's least and greatest value as the two ends of
 * its range, however many values it has.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import {
  listNumericTraits,
  listStringTraits,
  numericTraitsQuery,
  stringTraitsQuery,
} from "../../src/store/read/traits.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { type PlanNode, runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const COLLECTIONS = 5;
const NAMES = 120;
const VALUES = 100;
const NUMERIC_NAMES = 300;
const NUMERIC_VALUES = 40;
const LIMIT = 501;
const MAX_OFFSET = 10_000;
const contractOf = (k: number) => `0x${k.toString(16).padStart(40, "0")}` as Address;
const COLLECTION = contractOf(3);

let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
  await db.sql.unsafe(`
    INSERT INTO contracts (chain_id, address, types, name, mint_source, discovered_block)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), '{TYPE_ERC721}', 'collection ' || k, 'trace', k
    FROM generate_series(1, ${COLLECTIONS}) AS k`);
  // Every collection: 12,000 string values (one in fifty at a count of 0, to be removed) and 300
  // numeric traits of 40 values each.
  await db.sql.unsafe(`
    INSERT INTO collection_traits (chain_id, contract, name, value, tokens)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), 'trait ' || n, 'value ' || v,
           CASE WHEN (n * ${VALUES} + v) % 50 = 0 THEN 0 ELSE v END
    FROM generate_series(1, ${COLLECTIONS}) AS k, generate_series(1, ${NAMES}) AS n, generate_series(1, ${VALUES}) AS v`);
  await db.sql.unsafe(`
    INSERT INTO collection_numeric_traits (chain_id, contract, name, display_type, value, tokens)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), 'number ' || n,
           CASE WHEN n % 3 = 0 THEN 'DISPLAY_TYPE_DATE' ELSE 'DISPLAY_TYPE_STAT' END, v * 1.5 - n, 1
    FROM generate_series(1, ${COLLECTIONS}) AS k, generate_series(1, ${NUMERIC_NAMES}) AS n,
         generate_series(1, ${NUMERIC_VALUES}) AS v`);
  await db.sql.unsafe(`
    INSERT INTO collection_trait_totals (chain_id, contract, documents)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), 10000 FROM generate_series(1, ${COLLECTIONS}) AS k`);
  for (const table of [
    "collection_traits",
    "collection_numeric_traits",
    "collection_trait_totals",
    "contracts",
  ]) {
    await db.sql.unsafe(`VACUUM ANALYZE ${table}`);
  }
});

after(async () => {
  await db?.close();
  await stopTestServer();
});

const scansOf = (all: PlanNode[]) =>
  all.filter(
    (n) =>
      n["Node Type"].endsWith("Scan") &&
      !["Subquery Scan", "CTE Scan", "WorkTable Scan"].includes(n["Node Type"]),
  );

describe("a collection's traits' plans", () => {
  test("string traits: the first page, a deep page by page token and the largest offset are one range each", async () => {
    const [deep] =
      (await listStringTraits(db.sql, CHAIN_ID, COLLECTION, { limit: 1, offset: MAX_OFFSET }))?.traits ?? [];
    assert.ok(deep);
    for (const [query, rows] of [
      [{ limit: LIMIT, offset: 0 }, LIMIT],
      [{ limit: LIMIT, offset: 0, after: { name: deep.name, value: deep.value } }, LIMIT],
      [{ limit: LIMIT, offset: MAX_OFFSET }, MAX_OFFSET + LIMIT],
    ] as const) {
      const { all, shown } = await runPlan(db.sql, stringTraitsQuery(db.sql, CHAIN_ID, COLLECTION, query));
      for (const node of all) assert.doesNotMatch(node["Node Type"], /Seq Scan|Bitmap|Hash|Sort/, shown);
      const [scan, ...others] = scansOf(all);
      assert.equal(others.length, 0, shown);
      assert.ok(scan, shown);
      assert.equal(scan["Index Name"], "collection_traits_pkey", shown);
      assert.ok(scan["Index Cond"], `the scan is a range of its index: ${shown}`);
      // The counts of 0 are read and passed over: one in fifty.
      assert.ok(scan["Actual Rows"] <= rows, `at most ${rows} rows: ${shown}`);
      assert.ok((scan["Rows Removed by Filter"] ?? 0) <= rows / 40, shown);
    }
    // After a trait is where the offset goes on.
    const next = await listStringTraits(db.sql, CHAIN_ID, COLLECTION, {
      limit: 3,
      offset: 0,
      after: { name: deep.name, value: deep.value },
    });
    const byOffset = await listStringTraits(db.sql, CHAIN_ID, COLLECTION, {
      limit: 3,
      offset: MAX_OFFSET + 1,
    });
    assert.deepEqual(next, byOffset);
  });

  test("numeric traits: one probe per trait and two per range, at any depth", async () => {
    const rows = (await listNumericTraits(db.sql, CHAIN_ID, COLLECTION, { limit: 1000, offset: 0 })) ?? [];
    assert.equal(rows.length, NUMERIC_NAMES);
    const middle = rows[150];
    assert.ok(middle);
    for (const [query, visits] of [
      [{ limit: 51, offset: 0 }, 51],
      [{ limit: 51, offset: 0, after: { name: middle.name, displayType: middle.displayType } }, 51],
      [{ limit: 51, offset: 100 }, 151],
    ] as const) {
      const { all, shown } = await runPlan(db.sql, numericTraitsQuery(db.sql, CHAIN_ID, COLLECTION, query));
      for (const node of all) assert.doesNotMatch(node["Node Type"], /Seq Scan|Bitmap|Hash/, shown);
      for (const scan of scansOf(all)) {
        assert.match(scan["Node Type"], /^Index (Only )?Scan( Backward)?$/, shown);
        assert.equal(scan["Index Name"], "collection_numeric_traits_pkey", shown);
        assert.ok(scan["Actual Rows"] <= scan["Actual Loops"], `one row per probe: ${shown}`);
        assert.ok(scan["Actual Loops"] <= visits, `at most ${visits} probes: ${shown}`);
      }
    }
    const expected = await db.sql<{ name: string; display_type: string; min: number; max: number }[]>`
      SELECT name, display_type, min(value) AS min, max(value) AS max FROM collection_numeric_traits
      WHERE chain_id = ${CHAIN_ID} AND contract = ${Buffer.from(COLLECTION.slice(2), "hex")}
      GROUP BY name, display_type ORDER BY name COLLATE "C", display_type COLLATE "C"`;
    assert.deepEqual(
      rows.map((r) => [r.name, r.displayType, r.min, r.max]),
      expected.map((r) => [r.name, r.display_type, r.min, r.max]),
    );
  });
});
