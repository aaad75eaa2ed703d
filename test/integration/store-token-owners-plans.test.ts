/**
 * The plans PostgreSQL makes of a token's holders list on a token with tens of thousands of
 * holders, next to tokens as large in the same collection: the first page, a deep page by page
 * token and the page at the largest offset are each one range of token_balances' primary key, cut
 * at the page's size. The only rows passed over are the token's holders of unknown balance.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import {
  listTokenOwners,
  type TokenOwnersQuery,
  tokenOwnersQuery,
} from "../../src/store/read/token-owners.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const HOLDERS = 30_000;
/** One holder in this many of the large token is stored with a negative amount. */
const NEGATIVE_EVERY = 100;
const COLLECTION = `0x${"c0".repeat(20)}` as Address;
const OTHER_COLLECTION = `0x${"c1".repeat(20)}` as Address;
const TOKEN = 5n;
const LIMIT = 501;
const MAX_OFFSET = 10_000;

let db: TestDatabase;

before(async () => {
  db = await createTestDatabase();
  // The large token, its neighbours in the key (the tokens before and after it, the same token of
  // another collection), each with as many holders; addresses in no relation to the amounts.
  await db.sql`
    INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
    SELECT ${CHAIN_ID}, decode(c, 'hex'), t, decode(substr(md5(i::text || c || t::text) || md5((-i)::text), 1, 40), 'hex'),
      CASE WHEN t = ${TOKEN.toString()}::numeric AND c = ${COLLECTION.slice(2)} AND i % ${NEGATIVE_EVERY} = 0
           THEN -(i % 3 + 1) ELSE i % 13 + 1 END
    FROM generate_series(1, ${HOLDERS}) AS i,
      (VALUES (${COLLECTION.slice(2)}, ${(TOKEN - 1n).toString()}::numeric), (${COLLECTION.slice(2)}, ${TOKEN.toString()}::numeric),
              (${COLLECTION.slice(2)}, ${(TOKEN + 1n).toString()}::numeric), (${OTHER_COLLECTION.slice(2)}, ${TOKEN.toString()}::numeric)) AS v(c, t)`;
  await db.sql.unsafe("VACUUM ANALYZE token_balances");
});

after(async () => {
  await db?.close();
  await stopTestServer();
});

const page = (query: Partial<TokenOwnersQuery> = {}) =>
  tokenOwnersQuery(db.sql, CHAIN_ID, COLLECTION, TOKEN, { limit: LIMIT, offset: 0, ...query });

/**
 * The plan, run: one index range of the primary key holding at most `rows` rows of the token, of
 * which only those of unknown balance (one in a hundred) are passed over by the filter.
 */
async function checkPlan(query: ReturnType<typeof tokenOwnersQuery>, rows: number): Promise<void> {
  const { plan, all, shown } = await runPlan(db.sql, query);
  for (const node of all)
    assert.doesNotMatch(node["Node Type"], /Sort|Seq Scan|Bitmap|Hash|Materialize/, shown);
  const scans = all.filter((n) => n["Node Type"].endsWith("Scan"));
  assert.equal(scans.length, 1, shown);
  const [scan] = scans;
  assert.ok(scan);
  assert.equal(scan["Node Type"], "Index Scan", shown);
  assert.equal(scan["Index Name"], "token_balances_pkey", shown);
  assert.match(scan["Index Cond"] ?? "", /token_id/, `the scan is a range of the token: ${shown}`);
  assert.ok(scan["Actual Rows"] <= rows, `at most ${rows} rows: ${shown}`);
  const removed = scan["Rows Removed by Filter"] ?? 0;
  assert.ok(removed <= (2 * rows) / NEGATIVE_EVERY + 5, `${removed} rows passed over: ${shown}`);
  // A range reads its index pages and a heap page per row at worst; a walk of the token, or of
  // the table, would read thousands.
  const blocks = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
  assert.ok(blocks <= 40 + 2 * (rows + removed), `${blocks} blocks for ${rows} rows: ${shown}`);
}

describe("a token's holders list's plans", () => {
  test("the first page, a deep page by page token, and the largest offset: one range of the primary key each", async () => {
    await checkPlan(page(), LIMIT);
    const [deep] =
      (await listTokenOwners(db.sql, CHAIN_ID, COLLECTION, TOKEN, { limit: 1, offset: MAX_OFFSET })) ?? [];
    assert.ok(deep);
    await checkPlan(page({ after: deep.address }), LIMIT);
    await checkPlan(page({ offset: MAX_OFFSET }), MAX_OFFSET + LIMIT);
    const next = await listTokenOwners(db.sql, CHAIN_ID, COLLECTION, TOKEN, {
      limit: 3,
      offset: 0,
      after: deep.address,
    });
    const byOffset = await listTokenOwners(db.sql, CHAIN_ID, COLLECTION, TOKEN, {
      limit: 3,
      offset: MAX_OFFSET + 1,
    });
    assert.deepEqual(next, byOffset, "after a holder is where the offset goes on");
  });

  test("every holder with a positive amount, once, by address; none of another token", async () => {
    const listed = [];
    let after: Address | undefined;
    for (let pages = 0; pages < HOLDERS / LIMIT + 2; pages++) {
      const rows =
        (await listTokenOwners(db.sql, CHAIN_ID, COLLECTION, TOKEN, { limit: LIMIT, offset: 0, after })) ??
        [];
      listed.push(...rows);
      const last = rows[rows.length - 1];
      if (rows.length < LIMIT || last === undefined) break;
      after = last.address;
    }
    const expected = await db.sql<{ holder: Uint8Array; amount: string }[]>`
      SELECT holder, amount::text FROM token_balances
      WHERE chain_id = ${CHAIN_ID} AND contract = ${Buffer.from(COLLECTION.slice(2), "hex")} AND token_id = ${TOKEN.toString()}::numeric
        AND amount > 0 ORDER BY holder`;
    assert.equal(expected.length, HOLDERS - HOLDERS / NEGATIVE_EVERY);
    assert.deepEqual(
      listed.map((o) => [o.address, o.quantity]),
      expected.map((r) => [`0x${Buffer.from(r.holder).toString("hex")}`, BigInt(r.amount)]),
    );
  });

  test("a token nobody holds and nobody minted is unknown; a minted one is known without holders, a held one without a mint", async () => {
    assert.equal(
      await listTokenOwners(db.sql, CHAIN_ID, COLLECTION, 99n, { limit: 5, offset: 0 }),
      undefined,
    );
    // Minted, and its one holder at an unknown (negative) balance: known, with no holders listed.
    await db.sql`
      INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
      VALUES (${CHAIN_ID}, ${Buffer.from(COLLECTION.slice(2), "hex")}, 98, 1, 0, 0, ${Buffer.alloc(32)}, now())`;
    await db.sql`
      INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
      VALUES (${CHAIN_ID}, ${Buffer.from(COLLECTION.slice(2), "hex")}, 98, ${Buffer.alloc(20, 7)}, -1)`;
    assert.deepEqual(await listTokenOwners(db.sql, CHAIN_ID, COLLECTION, 98n, { limit: 5, offset: 0 }), []);
    // Held with no mint seen (minted before the indexed blocks): known by its holder.
    await db.sql`
      INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
      VALUES (${CHAIN_ID}, ${Buffer.from(COLLECTION.slice(2), "hex")}, 97, ${Buffer.alloc(20, 7)}, 2)`;
    assert.deepEqual(await listTokenOwners(db.sql, CHAIN_ID, COLLECTION, 97n, { limit: 5, offset: 0 }), [
      { address: `0x${"07".repeat(20)}`, quantity: 2n },
    ]);
  });
});
