/**
 * The plan of a wallet's NFTs without spam, on a wallet holding 100,000 tokens of 100 spam
 * collections and 10 tokens of two others placed after them: the walk reads one index descent per
 * collection held and only the real tokens, never the spam ones, for the first page, a page by
 * page token and an offset. A second wallet holds its 100,000 spam tokens in 10,000 collections of
 * ten: there the walk costs a descent per collection, measured and printed.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import { listWalletNfts, type WalletNftsQuery, walletNftsQuery } from "../../src/store/read/wallet-nfts.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { type PlanNode, runPlan } from "../support/plans.ts";

const CHAIN_ID = 1;
const FEW = `0x${"a1".repeat(20)}` as Address;
const MANY = `0x${"b2".repeat(20)}` as Address;
/** Spam contracts are 0x…0001 upwards; the real ones sort after every one of them. */
const REAL = [`0x${"f0".repeat(20)}`, `0x${"f1".repeat(20)}`] as Address[];
const LIMIT = 501;

let db: TestDatabase;

const hexOf = (address: Address) => `'\\x${address.slice(2)}'::bytea`;

before(async () => {
  db = await createTestDatabase();
  const spamContract = (k: string) => `decode(lpad(to_hex(${k}), 40, '0'), 'hex')`;
  // The first wallet: 100 spam collections of 1,000 tokens; the second: 10,000 of ten.
  await db.sql.unsafe(`
    INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
    SELECT ${CHAIN_ID}, ${spamContract("k")}, t, ${hexOf(FEW)}, 1
    FROM generate_series(1, 100) AS k, generate_series(1, 1000) AS t`);
  await db.sql.unsafe(`
    INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
    SELECT ${CHAIN_ID}, ${spamContract("1000 + k")}, t, ${hexOf(MANY)}, 1
    FROM generate_series(1, 10000) AS k, generate_series(1, 10) AS t`);
  await db.sql.unsafe(`
    INSERT INTO spam_verdicts (chain_id, contract, score, is_spam, signals, computed_at)
    SELECT ${CHAIN_ID}, ${spamContract("k")}, 100, true, '[]', now()
    FROM (SELECT generate_series(1, 100) AS k UNION ALL SELECT 1000 + generate_series(1, 10000)) s`);
  for (const holder of [FEW, MANY]) {
    for (const real of REAL) {
      await db.sql.unsafe(`
        INSERT INTO token_balances (chain_id, contract, token_id, holder, amount)
        SELECT ${CHAIN_ID}, ${hexOf(real)}, t, ${hexOf(holder)}, 1 FROM generate_series(1, 5) AS t`);
    }
  }
  // One real collection with a verdict that is not spam, and one spam collection an operator cleared.
  await db.sql.unsafe(`
    INSERT INTO spam_verdicts (chain_id, contract, score, is_spam, signals, computed_at)
    VALUES (${CHAIN_ID}, ${hexOf(REAL[0] as Address)}, 25, false, '[]', now())`);
  await db.sql.unsafe(`
    INSERT INTO spam_overrides (chain_id, contract, is_spam) VALUES (${CHAIN_ID}, ${spamContract("50")}, false)`);
  for (const table of ["token_balances", "spam_verdicts", "spam_overrides"]) {
    await db.sql.unsafe(`VACUUM ANALYZE ${table}`);
  }
});

after(async () => {
  await db?.close();
  await stopTestServer();
});

const page = (holder: Address, query: Partial<WalletNftsQuery> = {}) =>
  walletNftsQuery(db.sql, CHAIN_ID, holder, { limit: LIMIT, offset: 0, ...query });

/** Rows read from the balances, over every loop of every scan of them. */
const balanceRows = (all: PlanNode[]) =>
  all
    .filter((n) => n["Relation Name"] === "token_balances" || n["Index Name"] === "token_balances_by_holder")
    .reduce((sum, n) => sum + n["Actual Rows"] * n["Actual Loops"], 0);

describe("a wallet's NFTs without spam: the plans", () => {
  test("100,000 spam tokens of 100 collections: a descent per collection, and only the real tokens read", async () => {
    for (const query of [{}, { after: { contract: REAL[0] as Address, tokenId: 2n } }, { offset: 3 }]) {
      const { plan, all, shown } = await runPlan(db.sql, page(FEW, query));
      // The balances and the verdicts are read by ranges of their indexes; the other tables (empty
      // or of one row here) as the planner likes, which the wallet plans test covers at size.
      const big = all.filter(
        (n) =>
          n["Relation Name"] === "token_balances" ||
          n["Relation Name"] === "spam_verdicts" ||
          /^(token_balances|spam_verdicts)/.test(n["Index Name"] ?? ""),
      );
      for (const node of all) assert.doesNotMatch(node["Node Type"], /Hash|Bitmap|Materialize/, shown);
      assert.ok(big.length >= 4, shown);
      for (const node of big) {
        assert.match(node["Node Type"], /^Index (Only )?Scan$/, shown);
        assert.ok(node["Index Cond"], `a range of an index: ${shown}`);
      }
      assert.ok(
        !all.some(
          (n) =>
            n["Node Type"] === "Seq Scan" && n["Actual Loops"] > 1 && n["Relation Name"] !== "spam_overrides",
        ),
        shown,
      );
      // 101 collections walked (the spam ones, the cleared one, the real ones), each a descent that
      // reads its first row, and the 1,000 tokens of the cleared one and the ten real ones.
      const rows = balanceRows(all);
      assert.ok(rows <= 2 * 103 + 1_000 + 10, `${rows} balance rows read: ${shown}`);
      const blocks = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
      assert.ok(blocks <= 40 + 4 * 103 + 20 * 1_010, `${blocks} blocks: ${shown}`);
    }
    const listed = await listWalletNfts(db.sql, CHAIN_ID, FEW, { limit: 2_000, offset: 0 });
    const cleared = `0x${(50).toString(16).padStart(40, "0")}`;
    assert.equal(listed.length, 1_000 + 10);
    assert.deepEqual([...new Set(listed.map((n) => n.contract))], [cleared, ...REAL]);
    assert.ok(listed.every((n) => n.spam.isSpam === false));
    assert.equal(listed.find((n) => n.contract === cleared)?.spam.source, "override");
    assert.equal(listed.find((n) => n.contract === REAL[0])?.spam.score, 25);
  });

  test("paging without spam goes through every real holding once, by offset and by position alike", async () => {
    const all = await listWalletNfts(db.sql, CHAIN_ID, FEW, { limit: 2_000, offset: 0 });
    const byPosition = [];
    let from: WalletNftsQuery["after"];
    for (let pages = 0; pages < 20; pages++) {
      const rows = await listWalletNfts(db.sql, CHAIN_ID, FEW, { limit: 97, offset: 0, after: from });
      byPosition.push(...rows);
      const last = rows[rows.length - 1];
      if (rows.length < 97 || last === undefined) break;
      from = { contract: last.contract, tokenId: last.tokenId };
    }
    assert.deepEqual(byPosition, all);
    const byOffset = await listWalletNfts(db.sql, CHAIN_ID, FEW, { limit: 7, offset: 1_003 });
    assert.deepEqual(byOffset, all.slice(1_003, 1_010));
    const withSpam = await listWalletNfts(db.sql, CHAIN_ID, FEW, { limit: 5, offset: 0, includeSpam: true });
    assert.ok(withSpam.every((n) => n.spam.isSpam && n.spam.source === "computed"));
  });

  test("100,000 spam tokens of 10,000 collections: a descent per collection, measured", async () => {
    const started = performance.now();
    const { plan, all, shown } = await runPlan(db.sql, page(MANY));
    const ms = performance.now() - started;
    const rows = balanceRows(all);
    const blocks = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
    console.log(
      `10,000 spam collections before 10 real tokens: ${rows} balance rows, ${blocks} blocks, ${ms.toFixed(0)} ms`,
    );
    assert.ok(rows <= 2 * 10_002 + 10, `${rows} balance rows read: ${shown}`);
    assert.equal((await listWalletNfts(db.sql, CHAIN_ID, MANY, { limit: LIMIT, offset: 0 })).length, 10);
  });
});
