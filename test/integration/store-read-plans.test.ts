/**
 * The plans PostgreSQL makes of the lists' own queries on tables large enough for the planner to
 * mean it: every page, the first, a deep one by page token, one filtered by type, one at the largest
 * offset, is read by index ranges alone, each range cut at the page's size: no sort, no sequential
 * scan, no row checked against a filter and thrown away.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import type { ContractType } from "../../src/core/types.ts";
import { type ContractPosition, type ContractQuery, contractsQuery } from "../../src/store/read/contracts.ts";
import { type Owner, type OwnersQuery, ownersQuery } from "../../src/store/read/owners.ts";
import { type RankingMetric, topCollections, topQuery } from "../../src/store/read/top.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { type PlanNode, runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const CONTRACTS = 300_000;
const HOLDERS = 300_000;
const NEGATIVE_HOLDERS = 30_000;
const COLLECTION = `0x${"c0".repeat(20)}` as Address;

let db: TestDatabase;

/** The tables filled below: their secondary indexes are built after the rows, as a restore would. */
const FILLED = ["contracts", "collection_holders", "collection_windows"];

before(async () => {
  db = await createTestDatabase();
  // Building an index over rows already there is a sort, several times faster than maintaining it
  // row by row; the indexes are the migrations' own, read back from the catalog and made again.
  const indexes = await db.sql<{ name: string; definition: string }[]>`
    SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
    WHERE i.schemaname = current_schema() AND i.tablename = ANY(${FILLED})
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.indexname))::regclass)`;
  for (const { name } of indexes) await db.sql.unsafe(`DROP INDEX ${name}`);
  // Seven contracts per second of mint time, one in fifty of unknown mint time, addresses in no
  // relation to the order; two CryptoPunks-like contracts among them, and contracts of two types.
  await db.sql`
    INSERT INTO contracts (chain_id, address, types, mint_time, mint_source, discovered_block)
    SELECT ${CHAIN_ID}, decode(substr(md5(i::text) || md5((-i)::text), 1, 40), 'hex'),
      CASE WHEN i % 150000 = 7 THEN '{TYPE_CRYPTOPUNKS}'::text[]
           WHEN i % 100 = 1 THEN '{TYPE_ERC721,TYPE_ERC1155}'
           WHEN i % 200 = 3 THEN '{TYPE_ERC721_LEGACY}'
           WHEN i % 10 < 3 THEN '{TYPE_ERC721}'
           WHEN i % 10 = 3 THEN '{TYPE_ERC1155}'
           ELSE '{TYPE_ERC20}' END,
      CASE WHEN i % 50 = 0 THEN NULL ELSE timestamptz '2021-01-01' + (i / 7) * interval '1 second' END,
      'trace', i
    FROM generate_series(1, ${CONTRACTS}) AS i`;
  // A collection whose holders mostly hold one or two tokens: long runs of equal units.
  await db.sql`
    INSERT INTO collection_holders (chain_id, contract, holder, units)
    SELECT ${CHAIN_ID}, ${Buffer.from(COLLECTION.slice(2), "hex")}, decode(substr(md5(i::text) || md5((-i)::text), 1, 40), 'hex'),
      CASE WHEN i % 5 < 3 THEN 1 WHEN i % 5 = 3 THEN 2 ELSE i % 97 + 3 END
    FROM generate_series(1, ${HOLDERS}) AS i`;
  // Holders seen only sending since a start block: negative units, listed by no page.
  await db.sql`
    INSERT INTO collection_holders (chain_id, contract, holder, units)
    SELECT ${CHAIN_ID}, ${Buffer.from(COLLECTION.slice(2), "hex")}, decode(substr(md5((i + ${HOLDERS})::text) || md5((-i)::text), 1, 40), 'hex'),
      -(i % 4 + 1)
    FROM generate_series(1, ${NEGATIVE_HOLDERS}) AS i`;
  // Ranked windows: 300,000 collections in the year's window, a tenth of them in the day's, with
  // runs of equal sales counts.
  await db.sql`
    INSERT INTO collection_windows (chain_id, window_seconds, contract, sales, sold_units, volume, max_unit_price,
                                    flagged_sales, flagged_units, flagged_volume, flagged_max_unit_price)
    SELECT ${CHAIN_ID}, w, decode(substr(md5(i::text) || md5((-i)::text), 1, 40), 'hex'), i % 50 + 1, i % 70 + 1,
      (i::numeric * 7919 % 1000003) * 1000000000000, (i::numeric * 104729 % 1000003) * 1000000000,
      -- One collection in seven also has flagged sales, which move it in the rankings that count them.
      CASE WHEN i % 7 = 0 THEN i % 9 + 1 ELSE 0 END, CASE WHEN i % 7 = 0 THEN i % 11 + 1 ELSE 0 END,
      CASE WHEN i % 7 = 0 THEN (i::numeric * 6101 % 1000003) * 1000000000000 ELSE 0 END,
      CASE WHEN i % 7 = 0 THEN (i::numeric * 7573 % 1000003) * 1000000000 ELSE 0 END
    FROM generate_series(1, ${CONTRACTS}) AS i, (VALUES (86400), (31536000)) AS v(w)
    WHERE w = 31536000 OR i % 10 = 0`;
  for (const { definition } of indexes) await db.sql.unsafe(definition);
  await db.sql.unsafe("VACUUM ANALYZE collection_windows");
  await db.sql.unsafe("VACUUM ANALYZE contracts");
  await db.sql.unsafe("VACUUM ANALYZE collection_holders");
});

after(async () => {
  await db?.close();
  await stopTestServer();
});

/**
 * The plan, run, of one of the store's queries; checked to be index ranges only, each scan reading
 * at most `rows` rows and no block more than a range of that many rows needs.
 */
async function checkPlan(
  query: ReturnType<typeof contractsQuery> | ReturnType<typeof ownersQuery> | ReturnType<typeof topQuery>,
  rows: number,
  indexes: RegExp,
  /** Blocks beyond the range's: one key lookup per row (a ranking's collection names) reads a few. */
  lookupBlocks = 0,
): Promise<PlanNode[]> {
  const { plan, all, shown } = await runPlan(db.sql, query);
  for (const node of all) {
    assert.doesNotMatch(node["Node Type"], /Sort|Seq Scan|Bitmap|Hash|Materialize|Aggregate/, shown);
    assert.equal(node.Filter, undefined, `no row is checked one by one: ${shown}`);
  }
  const scans = all.filter((n) => n["Node Type"].endsWith("Scan"));
  assert.ok(scans.length > 0, shown);
  for (const scan of scans) {
    assert.match(scan["Node Type"], /^Index (Only )?Scan$/, shown);
    assert.match(scan["Index Name"] ?? "", indexes, shown);
    assert.ok(scan["Index Cond"], `the scan is a range of its index: ${shown}`);
    assert.ok(scan["Actual Rows"] * scan["Actual Loops"] <= rows, `at most ${rows} rows: ${shown}`);
  }
  // A range of n rows reads its index pages and a heap page per row at worst; a scan that walked
  // the table would read thousands.
  const blocks = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
  assert.ok(blocks <= 40 + 2 * rows + lookupBlocks, `${blocks} blocks for ${rows} rows: ${shown}`);
  return all;
}

/** The position of the contract at `index` of the list's order, as a page token would hold it. */
async function contractAt(index: number, direction: "asc" | "desc"): Promise<ContractPosition> {
  const order = direction === "asc" ? "ASC" : "DESC";
  const [row] = await db.sql<{ us: string | null; address: Uint8Array }[]>`
    SELECT (extract(epoch FROM mint_time) * 1000000)::bigint::text AS us, address FROM contracts
    WHERE chain_id = ${CHAIN_ID}
    ORDER BY coalesce(mint_time, 'infinity'::timestamptz) ${db.sql.unsafe(order)}, address ${db.sql.unsafe(order)}
    OFFSET ${index} LIMIT 1`;
  assert.ok(row);
  return {
    mintTime: row.us === null ? null : BigInt(row.us),
    address: `0x${Buffer.from(row.address).toString("hex")}` as Address,
  };
}

async function holderAt(index: number, direction: "asc" | "desc"): Promise<Owner> {
  const order = direction === "desc" ? "units DESC, holder ASC" : "units ASC, holder DESC";
  const [row] = await db.sql<{ units: string; holder: Uint8Array }[]>`
    SELECT units::text, holder FROM collection_holders
    WHERE chain_id = ${CHAIN_ID} AND contract = ${Buffer.from(COLLECTION.slice(2), "hex")} AND units > 0
    ORDER BY ${db.sql.unsafe(order)} OFFSET ${index} LIMIT 1`;
  assert.ok(row);
  return { units: BigInt(row.units), address: `0x${Buffer.from(row.holder).toString("hex")}` as Address };
}

const LIMIT = 21; // a page of 20, and the row that says whether another follows
const contracts = (query: Partial<ContractQuery>) =>
  contractsQuery(db.sql, CHAIN_ID, {
    limit: LIMIT,
    offset: 0,
    direction: "asc",
    types: [],
    mintedAfter: undefined,
    ...query,
  });
const owners = (query: Partial<OwnersQuery>) =>
  ownersQuery(db.sql, CHAIN_ID, COLLECTION, { limit: LIMIT, offset: 0, direction: "desc", ...query });

const WHOLE_LIST = /^contracts_in_mint_order$/;
const typeIndex = (...types: ContractType[]) =>
  new RegExp(`^contracts_in_mint_order_(${types.map((t) => t.slice(5).toLowerCase()).join("|")})$`);

describe("the contracts list's plans", () => {
  for (const direction of ["asc", "desc"] as const) {
    test(`${direction}: the first page, a deep page by token, a page after an unknown mint time, and the largest offset`, async () => {
      await checkPlan(contracts({ direction }), LIMIT, WHOLE_LIST);
      const deep = await contractAt(Math.floor(CONTRACTS * 0.9), direction);
      assert.notEqual(deep.mintTime, null);
      await checkPlan(contracts({ direction, after: deep }), LIMIT, WHOLE_LIST);
      // Past the known mint times (ASC) or among the first rows (DESC): the unknown ones are a range too.
      const unknown = await contractAt(direction === "asc" ? CONTRACTS - 100 : 100, direction);
      assert.equal(unknown.mintTime, null);
      await checkPlan(contracts({ direction, after: unknown }), LIMIT, WHOLE_LIST);
      await checkPlan(contracts({ direction, offset: 10_000 }), 10_000 + LIMIT, WHOLE_LIST);
    });

    test(`${direction}: filtered by one type, by several, and by time, by token too`, async () => {
      const deep = await contractAt(Math.floor(CONTRACTS * 0.6), direction);
      const punks = await checkPlan(
        contracts({ direction, types: ["TYPE_CRYPTOPUNKS"] }),
        LIMIT,
        typeIndex("TYPE_CRYPTOPUNKS"),
      );
      assert.equal(punks[0]?.["Actual Rows"], 2, "the two are found without walking the other 299,998");
      await checkPlan(
        contracts({ direction, types: ["TYPE_ERC1155"], after: deep }),
        LIMIT,
        typeIndex("TYPE_ERC1155"),
      );
      const several: ContractType[] = [
        "TYPE_ERC721",
        "TYPE_ERC1155",
        "TYPE_ERC721_LEGACY",
        "TYPE_CRYPTOPUNKS",
      ];
      const merged = await checkPlan(contracts({ direction, types: several }), LIMIT, typeIndex(...several));
      assert.ok(
        merged.some((n) => n["Node Type"] === "Merge Append"),
        "the ranges are merged in order",
      );
      await checkPlan(contracts({ direction, types: several, after: deep }), LIMIT, typeIndex(...several));
      const mintedAfter = new Date("2021-01-04T00:00:00Z");
      await checkPlan(contracts({ direction, mintedAfter }), LIMIT, WHOLE_LIST);
      await checkPlan(contracts({ direction, mintedAfter, after: deep }), LIMIT, WHOLE_LIST);
      await checkPlan(
        contracts({ direction, mintedAfter, types: ["TYPE_ERC721", "TYPE_CRYPTOPUNKS"], after: deep }),
        LIMIT,
        typeIndex("TYPE_ERC721", "TYPE_CRYPTOPUNKS"),
      );
      await checkPlan(
        contracts({ direction, types: several, offset: 10_000 }),
        10_000 + LIMIT,
        typeIndex(...several),
      );
    });
  }
});

describe("the owners list's plans", () => {
  for (const direction of ["desc", "asc"] as const) {
    test(`${direction}: the first page, deep pages by token inside and across runs of equal units, and the largest offset`, async () => {
      const index = /^collection_holders_in_order$/;
      await checkPlan(owners({ direction }), LIMIT, index);
      for (const at of [Math.floor(HOLDERS * 0.25), Math.floor(HOLDERS * 0.75), HOLDERS - 5]) {
        const after = await holderAt(at, direction);
        const all = await checkPlan(owners({ direction, after }), LIMIT, index);
        assert.equal(all.filter((n) => n["Node Type"].endsWith("Scan")).length, 1, "one range");
      }
      await checkPlan(owners({ direction, offset: 10_000 }), 10_000 + LIMIT, index);
    });
  }
});

describe("the owners list's ends", () => {
  test("no page reaches the holders with negative units, in either direction", async () => {
    const firstAsc = await owners({ direction: "asc" });
    assert.equal(firstAsc.length, LIMIT);
    const first = firstAsc[0];
    assert.ok(first);
    assert.deepEqual(
      { units: BigInt(first.units), address: `0x${Buffer.from(first.holder).toString("hex")}` },
      await holderAt(0, "asc"),
    );
    const lastDesc = await owners({ direction: "desc", offset: HOLDERS - 5 });
    assert.equal(lastDesc.length, 5, "the list ends with the last holder with units");
    for (const row of [...firstAsc, ...lastDesc]) assert.ok(BigInt(row.units) > 0n);
  });
});

describe("the rankings' plans", () => {
  // Organic figures rank through their indexes, every priced sale through the `all` ones.
  const INDEXES = {
    organic: /^collection_windows_by_|^contracts_pkey$/,
    all: /^collection_windows_all_by_|^contracts_pkey$/,
  };
  // Each collection's name is one probe of the contracts' key: its index pages and a heap page.
  const NAME_LOOKUPS = 5 * LIMIT;
  const cases = (["volume", "sales", "maxPrice", "avgPrice"] as RankingMetric[]).flatMap((metric) =>
    [false, true].map((includeFlagged) => ({ metric, includeFlagged })),
  );
  for (const { metric, includeFlagged } of cases) {
    const label = includeFlagged ? "with flagged sales" : "organic";
    test(`${metric}, ${label}: the first page, a deep page after a collection, and the largest offset, of a day and of a year`, async () => {
      const indexes = INDEXES[includeFlagged ? "all" : "organic"];
      for (const windowSeconds of [86_400, 31_536_000]) {
        const page = { windowSeconds, metric, limit: LIMIT, offset: 0, includeFlagged };
        await checkPlan(topQuery(db.sql, CHAIN_ID, page), LIMIT, indexes, NAME_LOOKUPS);
        // Deep in the ranking: go on after the collection at the largest offset.
        const [deep] = await topCollections(db.sql, CHAIN_ID, { ...page, limit: 1, offset: 10_000 });
        assert.ok(deep);
        const after = { value: deep.rankValue, contract: deep.contract };
        await checkPlan(topQuery(db.sql, CHAIN_ID, { ...page, after }), LIMIT, indexes, NAME_LOOKUPS);
        const next = await topCollections(db.sql, CHAIN_ID, { ...page, limit: 2, after });
        const byOffset = await topCollections(db.sql, CHAIN_ID, { ...page, limit: 2, offset: 10_001 });
        assert.deepEqual(next, byOffset, "after a collection is where the offset goes on");
      }
    });
  }
});
