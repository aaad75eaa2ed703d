/**
 * The plans PostgreSQL makes of the transfers list over 200,000 transfers of 200 collections and
 * 20,000 trades: for each filter, the first page and a deep page by position read one range of the
 * filter's index (migration 0022), cut at the page's size, with no sort and no sequential scan,
 * and look each row's transfer and trades up by key.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import {
  listNftTransfers,
  type NftTransfersQuery,
  nftTransfersQuery,
} from "../../src/store/read/nft-transfers.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const TRANSFERS = 200_000;
const LIMIT = 101;
const SALE_EVERY = 20;
const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const sqlAddr = (expr: string) => `decode(lpad(to_hex(${expr}), 40, '0'), 'hex')`;

let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
  await db.sql.unsafe(`
    INSERT INTO nft_transfers (chain_id, contract, block_number, log_index, seq, token_id, from_address, to_address,
                               amount, tx_hash, tx_index, block_time, standard)
    SELECT ${CHAIN_ID}, ${sqlAddr("1000 + i % 200")}, i / 4, i % 4, 0, i % 1000,
           CASE WHEN i % 10 = 0 THEN ${sqlAddr("0")} ELSE ${sqlAddr("100000 + i % 500")} END,
           ${sqlAddr("100000 + (i * 7) % 500")}, 1, decode(md5(i::text) || md5((-i)::text), 'hex'), i % 4,
           timestamptz '2022-01-01' + (i / 4) * interval '12 seconds', 'erc721'
    FROM generate_series(1, ${TRANSFERS}) AS i`);
  await db.sql.unsafe(`
    INSERT INTO sales (chain_id, contract, token_id, block_number, log_index, seq, seller, buyer, tx_hash, tx_index,
                       block_time, kind, quantity, native_paid, fungible_paid, total_native, total_usd, attributed_by,
                       market, flags)
    SELECT chain_id, contract, token_id, block_number, log_index, seq, from_address, to_address, tx_hash, tx_index,
           block_time, CASE WHEN from_address = ${sqlAddr("0")} THEN 'mint' ELSE 'sale' END, 1, 10^18, 0, 10^18, 2000,
           'ATTRIBUTED_BY_SINGLE_TRANSFER', 'seaport', '{}'
    FROM nft_transfers WHERE (block_number * 4 + log_index) % ${SALE_EVERY} IN (0, 1)`);
  for (const table of ["nft_transfers", "sales"]) await db.sql.unsafe(`VACUUM ANALYZE ${table}`);
});

after(async () => {
  await db?.close();
  await stopTestServer();
});

const base: NftTransfersQuery = { limit: LIMIT, offset: 0, direction: "desc", labels: [] };

/** The plan, run: the page's positions are one range of `index`, at most `rows` rows read; no sort. */
async function checkPlan(query: NftTransfersQuery, index: string, rows: number): Promise<void> {
  const { all, shown } = await runPlan(db.sql, nftTransfersQuery(db.sql, CHAIN_ID, query));
  for (const node of all)
    assert.doesNotMatch(node["Node Type"], /Seq Scan|Sort|Bitmap|Hash|Materialize/, shown);
  const walk = all.find((n) => n["Node Type"].startsWith("Index") && n["Actual Loops"] === 1);
  assert.ok(walk, shown);
  assert.equal(walk["Index Name"], index, shown);
  assert.ok(walk["Index Cond"], `a range of its index: ${shown}`);
  const read = walk["Actual Rows"] + (walk["Rows Removed by Filter"] ?? 0);
  assert.ok(read <= rows, `${read} rows read, at most ${rows}: ${shown}`);
  for (const lookup of all.filter((n) => n !== walk && /^Index/.test(n["Node Type"]))) {
    assert.ok(lookup["Index Cond"], `by key: ${shown}`);
  }
}

/** A page in the middle of the list, reached by position. */
async function deep(query: NftTransfersQuery, offset: number): Promise<NftTransfersQuery> {
  const [row] = await listNftTransfers(db.sql, CHAIN_ID, { ...query, limit: 1, offset });
  assert.ok(row, "the list is deep enough");
  return { ...query, after: { blockNumber: row.blockNumber, logIndex: row.logIndex, seq: row.seq } };
}

describe("the transfers list's plans", () => {
  /** Each filter, its index, the rows a page may read, and how deep the deep page is. */
  const cases: [string, NftTransfersQuery, string, number, number][] = [
    ["every transfer", base, "nft_transfers_pkey", LIMIT, 2000],
    ["a collection", { ...base, contract: addr(1007) }, "nft_transfers_by_contract", LIMIT, 500],
    ["a token", { ...base, contract: addr(1007), tokenId: 7n }, "nft_transfers_by_token", LIMIT, 150],
    ["a sender", { ...base, sender: addr(100011) }, "nft_transfers_by_sender", LIMIT, 200],
    ["a recipient", { ...base, recipient: addr(100077) }, "nft_transfers_by_recipient", LIMIT, 200],
    // The sender index leaves the mints out: the mints, one transfer in ten here, are read off the key.
    ["the mints", { ...base, labels: ["LABEL_MINT"] }, "nft_transfers_pkey", 10 * LIMIT + 10, 2000],
    ["the zero address's sends", { ...base, sender: addr(0) }, "nft_transfers_pkey", 10 * LIMIT + 10, 2000],
    ["the sales", { ...base, labels: ["LABEL_SALE"] }, "sales_pkey", 2 * LIMIT + 10, 2000],
    [
      "a collection's sales",
      // Every transfer of this collection is a sale; the others' are not.
      { ...base, contract: addr(1001), labels: ["LABEL_SALE"] },
      "sales_by_contract",
      LIMIT,
      500,
    ],
    ["a block range", { ...base, fromBlock: 10_000n, toBlock: 40_000n }, "nft_transfers_pkey", LIMIT, 2000],
    [
      "oldest first",
      { ...base, direction: "asc", contract: addr(1007) },
      "nft_transfers_by_contract",
      LIMIT,
      500,
    ],
  ];
  for (const [name, query, index, rows, depth] of cases) {
    test(`${name}: the first page and a deep page are one range of ${index}`, async () => {
      await checkPlan(query, index, rows);
      await checkPlan(await deep(query, depth), index, rows);
    });
  }

  test("a deep page by position is where the offset goes on", async () => {
    const query: NftTransfersQuery = { ...base, contract: addr(1007), limit: 3 };
    const next = await listNftTransfers(db.sql, CHAIN_ID, await deep(query, 500));
    const byOffset = await listNftTransfers(db.sql, CHAIN_ID, { ...query, offset: 501 });
    assert.deepEqual(next, byOffset);
  });
});
