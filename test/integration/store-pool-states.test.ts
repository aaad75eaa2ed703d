/**
 * The pools' recent states, read at every resync and reorganisation: per configured pool, one
 * probe of the key and one range of it, whatever the size of `pool_states`, and the same answer
 * as reading the whole table.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import postgres from "postgres";
import type { Address } from "../../src/core/hex.ts";
import type { PoolState } from "../../src/core/types.ts";
import { latestPoolStates, recentPoolStates } from "../../src/store/tables/pool-states.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

/** A row of `pool_states` as the checks below read it. */
interface StoredStateRow {
  pool: Uint8Array;
  block_number: string;
  log_index: number;
  r0: string;
  r1: string;
  sp: string | null;
  t: string | null;
  l: string | null;
}
const CHAIN_ID = 1;
/** Pools 1 to 6 hold states on the chain; pool 7 only on another chain; pool 8 nowhere. */
const pool = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const BLOCKS = 120_000;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe("latest pool states", () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    // Pool p changes in every p-th block, some blocks twice (two log indexes): about 360,000 rows.
    await db.sql`
      INSERT INTO pool_states (chain_id, pool, block_number, log_index, reserve0, reserve1, sqrt_price_x96)
      SELECT ${CHAIN_ID}, decode(lpad(to_hex(p), 40, '0'), 'hex'), b, li, b * 1000 + p, b + li,
             CASE WHEN p % 2 = 0 THEN b * 7 END
      FROM generate_series(1, 6) AS p, generate_series(1, ${BLOCKS}) AS b,
           LATERAL (SELECT unnest(CASE WHEN b % 5 = 0 THEN ARRAY[3, 40] ELSE ARRAY[(b * 7 + p) % 300] END)) AS l(li)
      WHERE b % p = 0 OR p = 1`;
    await db.sql`
      INSERT INTO pool_states (chain_id, pool, block_number, log_index, reserve0, reserve1)
      SELECT 10, decode(lpad(to_hex(p), 40, '0'), 'hex'), b, 0, b, b
      FROM generate_series(1, 7) AS p, generate_series(1, 1000) AS b`;
    // Block b is 12·b seconds after the epoch, but rows of the first 1,000 blocks were stored
    // without their time (before block times were kept); pools 2 and 4 also carry V3 liquidity.
    await db.sql`UPDATE pool_states SET block_time = to_timestamp(block_number * 12),
      liquidity = CASE WHEN sqrt_price_x96 IS NOT NULL THEN block_number + 1 END
      WHERE chain_id = ${CHAIN_ID} AND block_number > 1000`;
    // Pool 6 changes only after the block asked for below.
    await db.sql`DELETE FROM pool_states WHERE chain_id = ${CHAIN_ID} AND pool = ${Buffer.from(pool(6).slice(2), "hex")}
      AND block_number <= 80000`;
    await db.sql`ANALYZE pool_states`;
  });
  after(async () => {
    await db?.close();
    await stopTestServer();
  });

  const configured = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ address: pool(n) }));

  test("the answer is the table's latest state of each pool at or before the block, as ordering the whole table gives it", async () => {
    const [{ rows } = { rows: 0 }] = await db.sql<
      { rows: number }[]
    >`SELECT count(*)::int AS rows FROM pool_states`;
    assert.ok(rows > 300_000, `${rows} rows`);
    for (const block of [80_000, 79_999, BLOCKS, 3]) {
      const states = await latestPoolStates(db.sql, CHAIN_ID, configured, block);
      const whole = await db.sql<StoredStateRow[]>`
        SELECT DISTINCT ON (pool) pool, block_number, log_index, reserve0::text AS r0, reserve1::text AS r1,
               sqrt_price_x96::text AS sp, extract(epoch FROM block_time)::bigint::text AS t, liquidity::text AS l
        FROM pool_states WHERE chain_id = ${CHAIN_ID} AND block_number <= ${block}
        ORDER BY pool, block_number DESC, log_index DESC`;
      const expected = whole.map((r) => ({
        pool: `0x${Buffer.from(r.pool).toString("hex")}`,
        blockNumber: Number(r.block_number),
        logIndex: r.log_index,
        ...(r.t !== null ? { blockTime: Number(r.t) } : {}),
        reserve0: BigInt(r.r0),
        reserve1: BigInt(r.r1),
        ...(r.sp !== null ? { sqrtPriceX96: BigInt(r.sp) } : {}),
        ...(r.l !== null ? { liquidity: BigInt(r.l) } : {}),
      }));
      const byPool = (a: { pool: string }, b: { pool: string }) => a.pool.localeCompare(b.pool);
      assert.deepEqual([...states].sort(byPool), expected, `block ${block}`);
      assert.equal(
        expected.length,
        block > 80_000 ? 6 : Math.min(block, 5),
        `block ${block}: pools with a state`,
      );
    }
    // A block with two states of a pool: the later log wins.
    const [five] = await latestPoolStates(db.sql, CHAIN_ID, [{ address: pool(1) }], 5);
    assert.deepEqual([five?.blockNumber, five?.logIndex], [5, 40]);
    assert.deepEqual(await latestPoolStates(db.sql, CHAIN_ID, [], BLOCKS), []);
  });

  test("the states a rate window needs: from the one in force at its start to the block, as the whole table says", async () => {
    const cases = [
      { block: 80_000, since: (80_000 - 300) * 12 },
      { block: BLOCKS, since: (BLOCKS - 2) * 12 }, // inside a block's states
      { block: 1_200, since: 900 * 12 }, // the window starts among the rows without a time
      { block: 80_003, since: 80_001 * 12 }, // pool 6's first row is newer than the window's start
    ];
    for (const { block, since } of cases) {
      const states = await recentPoolStates(db.sql, CHAIN_ID, configured, block, since);
      const rows = await db.sql<StoredStateRow[]>`
        SELECT pool, block_number, log_index, reserve0::text AS r0, reserve1::text AS r1, sqrt_price_x96::text AS sp,
               extract(epoch FROM block_time)::bigint::text AS t, liquidity::text AS l
        FROM pool_states WHERE chain_id = ${CHAIN_ID} AND block_number BETWEEN ${block - 5_000} AND ${block}
        ORDER BY pool, block_number, log_index`;
      const expected: PoolState[] = [];
      for (const hex of new Set(rows.map((r) => Buffer.from(r.pool).toString("hex")))) {
        const mine = rows.filter((r) => Buffer.from(r.pool).toString("hex") === hex);
        let anchor = 0;
        mine.forEach((r, i) => {
          if (r.t === null || Number(r.t) <= since) anchor = i;
        });
        for (const r of mine.slice(anchor)) {
          expected.push({
            pool: `0x${hex}` as Address,
            blockNumber: Number(r.block_number),
            logIndex: r.log_index,
            ...(r.t !== null ? { blockTime: Number(r.t) } : {}),
            reserve0: BigInt(r.r0),
            reserve1: BigInt(r.r1),
            ...(r.sp !== null ? { sqrtPriceX96: BigInt(r.sp) } : {}),
            ...(r.l !== null ? { liquidity: BigInt(r.l) } : {}),
          });
        }
      }
      const order = (a: PoolState, b: PoolState) =>
        a.pool.localeCompare(b.pool) || a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
      assert.deepEqual([...states].sort(order), expected, `block ${block} since ${since}`);
      assert.ok(expected.length > 6, `block ${block}: more than one state of some pool`);
    }
  });

  test("the plan probes the key once per pool: no sort, no scan of the table", async () => {
    const statements: { query: string; parameters: unknown[] }[] = [];
    const watched = postgres(db.url, {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query, parameters) => statements.push({ query, parameters }),
    });
    try {
      await latestPoolStates(watched, CHAIN_ID, configured, 80_000);
      // Besides postgres.js's own look-up of the array types on its first query; reported as it is
      // prepared and as it runs.
      const sent = statements.filter((s) => s.query.includes("pool_states"));
      const [statement] = sent;
      assert.ok(statement && new Set(sent.map((s) => s.query)).size === 1, "one statement");
      const [row] = await db.sql.unsafe(
        `EXPLAIN (FORMAT JSON) ${statement.query}`,
        statement.parameters as postgres.ParameterOrJSON<never>[],
      );
      const plan = (row?.["QUERY PLAN"] as { Plan: PlanNode }[] | undefined)?.[0]?.Plan;
      assert.ok(plan);
      const all = nodes(plan);
      const described = JSON.stringify(plan, null, 1);
      assert.ok(!all.some((n) => n["Node Type"].includes("Sort")), `no sort:\n${described}`);
      assert.ok(
        !all.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "pool_states"),
        `no sequential scan of pool_states:\n${described}`,
      );
      assert.ok(
        all.some((n) => n["Node Type"] === "Index Scan" && n["Relation Name"] === "pool_states"),
        `the key's index:\n${described}`,
      );
      assert.ok(
        all.some((n) => n["Node Type"] === "Limit"),
        `one row per pool:\n${described}`,
      );
    } finally {
      await watched.end();
    }
  });

  test("a window's states are read through the key, per pool: no scan of the table", async () => {
    const statements: { query: string; parameters: unknown[] }[] = [];
    const watched = postgres(db.url, {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query, parameters) => statements.push({ query, parameters }),
    });
    try {
      // Pool 6 has no row in force at the window's start: its rows are read by a second statement.
      await recentPoolStates(watched, CHAIN_ID, configured, 80_003, 80_001 * 12);
      const sent = [
        ...new Map(
          statements.filter((s) => s.query.includes("pool_states")).map((s) => [s.query, s]),
        ).values(),
      ];
      assert.equal(sent.length, 2, "two statements");
      for (const statement of sent) {
        const [row] = await db.sql.unsafe(
          `EXPLAIN (FORMAT JSON) ${statement.query}`,
          statement.parameters as postgres.ParameterOrJSON<never>[],
        );
        const plan = (row?.["QUERY PLAN"] as { Plan: PlanNode }[] | undefined)?.[0]?.Plan;
        assert.ok(plan);
        const all = nodes(plan);
        const described = JSON.stringify(plan, null, 1);
        assert.ok(
          !all.some((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "pool_states"),
          `no sequential scan of pool_states:\n${described}`,
        );
        assert.ok(
          all.some((n) => n["Node Type"].includes("Index Scan") && n["Index Name"] === "pool_states_pkey"),
          `the key's index:\n${described}`,
        );
      }
    } finally {
      await watched.end();
    }
  });
});
