/**
 * The plans PostgreSQL makes of a wallet's NFTs on an address holding 30,000 tokens of 300
 * collections, among other holders: the first page, one collection's page, a deep page by page
 * token and the page at the largest offset each read one range of `token_balances_by_holder`
 * (migration 0020), cut at the page's size, and look each row's collection, mint, metadata and spam
 * verdict up by key (spam included: `store-spam-plans` has the filtered walk). Rows of unknown
 * balance are not in that index, so no row is read and thrown away.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import { listWalletNfts, type WalletNftsQuery, walletNftsQuery } from "../../src/store/read/wallet-nfts.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const COLLECTIONS = 300;
const TOKENS_EACH = 100;
/** One holding in this many of the wallet is stored with a negative amount. */
const NEGATIVE_EVERY = 100;
const OTHERS = 60_000;
const WALLET = `0x${"a1".repeat(20)}` as Address;
const LIMIT = 501;
const MAX_OFFSET = 10_000;

let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
  await db.sql.unsafe(`
    INSERT INTO contracts (chain_id, address, types, name, mint_source, discovered_block)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), '{TYPE_ERC1155}', 'collection ' || k, 'trace', k
    FROM generate_series(1, ${COLLECTIONS}) AS k`);
  // The wallet: every token of every collection; one in a hundred at an unknown (negative) balance.
  await db.sql.unsafe(`
    INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), t, '\\x${WALLET.slice(2)}'::bytea,
      CASE WHEN (k * ${TOKENS_EACH} + t) % ${NEGATIVE_EVERY} = 0 THEN -1 ELSE t % 7 + 1 END
    FROM generate_series(1, ${COLLECTIONS}) AS k, generate_series(1, ${TOKENS_EACH}) AS t`);
  // Other holders of the same tokens, before and after the wallet's address.
  await db.sql.unsafe(`
    INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(i % ${COLLECTIONS} + 1), 40, '0'), 'hex'), i % ${TOKENS_EACH} + 1,
      decode(substr(md5(i::text) || md5((-i)::text), 1, 40), 'hex'), i % 5 + 1
    FROM generate_series(1, ${OTHERS}) AS i`);
  // Every token of the wallet minted, every other one with its metadata fetched, and 50,000 other
  // contracts: the tables a page looks up are of a size where a lookup by key is the way.
  await db.sql.unsafe(`
    INSERT INTO contracts (chain_id, address, types, name, mint_source, discovered_block)
    SELECT ${CHAIN_ID}, decode(substr(md5(i::text), 1, 40), 'hex'), '{TYPE_ERC721}', '', 'trace', i
    FROM generate_series(1, 50000) AS i`);
  await db.sql.unsafe(`
    INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), t, k, t, 0, decode(md5(k::text || t::text) || md5(t::text), 'hex'),
      timestamptz '2022-01-01' + k * interval '1 hour'
    FROM generate_series(1, ${COLLECTIONS}) AS k, generate_series(1, ${TOKENS_EACH}) AS t`);
  await db.sql.unsafe(`
    INSERT INTO token_metadata (chain_id, contract, token_id, status, uri, mime_type, fetched_at, name, image_uri_original)
    SELECT ${CHAIN_ID}, decode(lpad(to_hex(k), 40, '0'), 'hex'), t, 'ok', 'ipfs://doc/' || t, 'application/json', now(),
      'token ' || t, 'ipfs://image/' || t
    FROM generate_series(1, ${COLLECTIONS}) AS k, generate_series(1, ${TOKENS_EACH}) AS t WHERE t % 2 = 0`);
  for (const table of ["token_balances", "contracts", "tokens", "token_metadata"]) {
    await db.sql.unsafe(`VACUUM ANALYZE ${table}`);
  }
});

after(async () => {
  await db?.close();
  await stopTestServer();
});

const page = (query: Partial<WalletNftsQuery> = {}) =>
  walletNftsQuery(db.sql, CHAIN_ID, WALLET, { limit: LIMIT, offset: 0, includeSpam: true, ...query });

/**
 * The plan, run: the holdings are one range of the holder index of at most `rows` rows, with no
 * filter; every other table is read by key, once per row of the page.
 */
async function checkPlan(
  query: ReturnType<typeof walletNftsQuery>,
  rows: number,
  pageRows: number,
): Promise<void> {
  const { plan, all, shown } = await runPlan(db.sql, query);
  for (const node of all) assert.doesNotMatch(node["Node Type"], /Seq Scan|Bitmap|Hash|Materialize/, shown);
  const scans = all.filter((n) => n["Node Type"].endsWith("Scan") && n["Node Type"] !== "Subquery Scan");
  const [holdings, ...lookups] = scans;
  assert.ok(holdings, shown);
  assert.match(holdings["Node Type"], /^Index (Only )?Scan$/, shown);
  assert.equal(holdings["Index Name"], "token_balances_by_holder", shown);
  assert.ok(holdings["Index Cond"], `the scan is a range of its index: ${shown}`);
  assert.equal(holdings.Filter, undefined, `no holding is read and thrown away: ${shown}`);
  assert.ok(holdings["Actual Rows"] <= rows, `at most ${rows} rows: ${shown}`);
  for (const lookup of lookups) {
    assert.match(lookup["Node Type"], /^Index (Only )?Scan$/, shown);
    assert.ok(lookup["Index Cond"], shown);
    assert.ok(lookup["Actual Loops"] <= pageRows, `one lookup per row of the page: ${shown}`);
  }
  const blocks = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
  assert.ok(blocks <= 40 + 2 * rows + 4 * 5 * pageRows, `${blocks} blocks for ${rows} rows: ${shown}`);
}

describe("a wallet's NFTs' plans", () => {
  test("the first page, one collection's, a deep page by page token, and the largest offset: one range each", async () => {
    await checkPlan(page(), LIMIT, LIMIT);
    const collection = `0x${(COLLECTIONS - 7).toString(16).padStart(40, "0")}` as Address;
    await checkPlan(page({ contract: collection }), TOKENS_EACH, TOKENS_EACH);
    const [deep] = await listWalletNfts(db.sql, CHAIN_ID, WALLET, { limit: 1, offset: MAX_OFFSET });
    assert.ok(deep);
    await checkPlan(page({ after: { contract: deep.contract, tokenId: deep.tokenId } }), LIMIT, LIMIT);
    await checkPlan(page({ offset: MAX_OFFSET }), MAX_OFFSET + LIMIT, LIMIT);
    const after = { contract: deep.contract, tokenId: deep.tokenId };
    const next = await listWalletNfts(db.sql, CHAIN_ID, WALLET, { limit: 3, offset: 0, after });
    const byOffset = await listWalletNfts(db.sql, CHAIN_ID, WALLET, { limit: 3, offset: MAX_OFFSET + 1 });
    assert.deepEqual(next, byOffset, "after a holding is where the offset goes on");
  });

  test("every holding with a positive amount, once, by contract and token id, with its collection, mint and metadata", async () => {
    const listed = [];
    let after: WalletNftsQuery["after"];
    for (let pages = 0; pages < (COLLECTIONS * TOKENS_EACH) / LIMIT + 2; pages++) {
      const rows = await listWalletNfts(db.sql, CHAIN_ID, WALLET, { limit: LIMIT, offset: 0, after });
      listed.push(...rows);
      const last = rows[rows.length - 1];
      if (rows.length < LIMIT || last === undefined) break;
      after = { contract: last.contract, tokenId: last.tokenId };
    }
    // The token id as text under another name: ORDER BY token_id must sort the numbers.
    const expected = await db.sql<{ contract: Uint8Array; id: string; amount: string }[]>`
      SELECT contract, token_id::text AS id, amount::text FROM token_balances
      WHERE chain_id = ${CHAIN_ID} AND holder = ${Buffer.from(WALLET.slice(2), "hex")} AND amount > 0
      ORDER BY contract, token_id`;
    assert.equal(expected.length, COLLECTIONS * TOKENS_EACH - (COLLECTIONS * TOKENS_EACH) / NEGATIVE_EVERY);
    assert.deepEqual(
      listed.map((n) => [n.contract, n.tokenId, n.quantity]),
      expected.map((r) => [`0x${Buffer.from(r.contract).toString("hex")}`, BigInt(r.id), BigInt(r.amount)]),
    );
    assert.ok(
      listed.every((n) => n.collectionName === `collection ${Number.parseInt(n.contract.slice(2), 16)}`),
    );
    assert.ok(listed.every((n) => n.mint?.logIndex === Number(n.tokenId)));
    assert.ok(
      listed.every((n) =>
        n.tokenId % 2n === 0n ? n.metadata?.name === `token ${n.tokenId}` : n.metadata === undefined,
      ),
    );
  });
});
