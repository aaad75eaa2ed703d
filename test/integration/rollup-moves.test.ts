import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import type { Address, Hex } from "../../src/core/hex.ts";
import { bucketStart } from "../../src/core/periods.ts";
import { saleClass } from "../../src/core/sale-classes.ts";
import { bucketStatements, encodeBuckets } from "../../src/rollups/buckets.ts";
import { dayStatements, touchedDays } from "../../src/rollups/days.ts";
import { listedMoves, moveStatements, type SaleMove } from "../../src/rollups/moves.ts";
import { recountRankings } from "../../src/rollups/rankings.ts";
import { addSaleToBucket, type SaleBucketDelta } from "../../src/rollups/sale-buckets.ts";
import { windowEndAt } from "../../src/rollups/windows.ts";
import { runInOrder } from "../../src/store/pg/session.ts";
import { ensureChain } from "../../src/store/tables/chain-state.ts";
import { encodeSales, type SaleRow, salesStatements } from "../../src/store/tables/sales.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

/**
 * Sales moved between the organic and the flagged figures by a delta (src/rollups/moves.ts) leave
 * the buckets, days and ranked windows exactly as counting the sales from scratch with their new
 * flags: checked on random sales, prices and moves, with many moved sales holding an extreme.
 */

const [APES, CATS] = ["a0", "c0"].map((b) => `0x${b.repeat(20)}` as Address) as [Address, Address];
const SELLER = `0x${"51".repeat(20)}` as Address;
const T0 = 1_750_000_000 - (1_750_000_000 % 86_400);

interface Sale {
  contract: Address;
  block: number;
  time: number;
  quantity: bigint;
  total: bigint;
  flags: string[];
  moved?: boolean;
}

function row(s: Sale): SaleRow {
  return {
    contract: s.contract,
    tokenId: BigInt(s.block),
    blockNumber: s.block,
    logIndex: 0,
    seq: 0,
    seller: SELLER,
    buyer: `0x${"b0".repeat(20)}` as Address,
    txHash: `0x${s.block.toString(16).padStart(64, "0")}` as Hex,
    txIndex: 0,
    time: s.time,
    kind: "sale",
    quantity: s.quantity,
    nativePaid: s.total,
    fungiblePaid: 0n,
    totalNative: s.total,
    totalUsd: undefined,
    attributedBy: "ATTRIBUTED_BY_SINGLE_TRANSFER",
    market: "",
    flags: s.flags,
    payments: [],
  };
}

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.close();
  await stopTestServer();
});

/** Stores the sales and counts them from scratch: buckets, days and every window ending at `end`. */
async function countFromScratch(chainId: number, sales: readonly Sale[], end: number): Promise<void> {
  await ensureChain(db.sql, { chainId, name: `moves-${chainId}`, nativeSymbol: "ETH", startBlock: 0 });
  await runInOrder(salesStatements(db.sql, chainId, encodeSales(sales.map(row))));
  const deltas = new Map<string, SaleBucketDelta>();
  for (const s of sales) {
    addSaleToBucket(deltas, {
      contract: s.contract,
      quantity: s.quantity,
      totalNative: s.total,
      time: s.time,
      class: saleClass(s.flags),
    });
  }
  const buckets = [...deltas.values()];
  await runInOrder(bucketStatements(db.sql, chainId, encodeBuckets([], buckets)));
  await runInOrder(dayStatements(db.sql, chainId, touchedDays(buckets)));
  await recountRankings(db.sql, chainId, end);
}

/** The chain's rollups, without its id. */
async function rollups(chainId: number): Promise<string[]> {
  const rows = await db.sql.unsafe(
    `SELECT 'b' AS t, contract, bucket_start AS at, sales, sold_units, volume, min_unit_price, max_unit_price,
            flagged_sales, flagged_units, flagged_volume, flagged_min_unit_price, flagged_max_unit_price,
            unpriced_sales, NULL::int AS seconds
     FROM collection_buckets WHERE chain_id = $1
     UNION ALL
     SELECT 'd', contract, day, sales, sold_units, volume, min_unit_price, max_unit_price, flagged_sales, flagged_units,
            flagged_volume, flagged_min_unit_price, flagged_max_unit_price, unpriced_sales, NULL
     FROM collection_days WHERE chain_id = $1
     UNION ALL
     SELECT 'w', contract, NULL, sales, sold_units, volume, NULL, max_unit_price, flagged_sales, flagged_units,
            flagged_volume, NULL, flagged_max_unit_price, unpriced_sales, window_seconds
     FROM collection_windows WHERE chain_id = $1
     ORDER BY 1, 2, 3, 15`,
    [chainId],
  );
  return rows.map((r) =>
    JSON.stringify(r, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v)),
  );
}

describe("moving sales between the organic and the flagged figures", () => {
  let nextChain = 7100;
  test("property: a move's deltas equal counting the sales again with their new flags", async () => {
    const sale = fc.record({
      contract: fc.constantFrom(APES, CATS),
      // Over three days, so that windows of an hour, a day and more hold different buckets.
      offset: fc.integer({ min: 0, max: 3 * 86_400 - 1 }),
      quantity: fc.bigInt({ min: 1n, max: 3n }),
      // Few prices, so that moved sales often hold an extreme of their bucket or window.
      unit: fc.constantFrom(10n, 20n, 30n, 40n),
      flags: fc.constantFrom([], [], ["wash_funder"], ["unpriced"]),
      moved: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(sale, { minLength: 1, maxLength: 25 }), async (drawn) => {
        const sales: Sale[] = drawn.map((d, i) => ({
          contract: d.contract,
          block: i + 1,
          time: T0 + d.offset,
          quantity: d.quantity,
          total: d.unit * d.quantity,
          flags: [...d.flags],
          moved: d.moved,
        }));
        sales.sort((a, b) => a.time - b.time);
        sales.forEach((s, i) => {
          s.block = i + 1;
        });
        const end = windowEndAt(T0 + 3 * 86_400);
        // A verdict flags an organic sale; a rollback takes a wash flag back.
        const after = sales.map((s) => {
          if (!s.moved) return s;
          if (s.flags.length === 0) return { ...s, flags: ["wash_cycle"] };
          if (s.flags.includes("wash_funder")) return { ...s, flags: [] };
          return s;
        });
        const [moved, fresh] = [nextChain++, nextChain++];
        await countFromScratch(moved, sales, end);
        const moves: SaleMove[] = [];
        for (const [i, s] of after.entries()) {
          const was = saleClass((sales[i] as Sale).flags);
          if (was === saleClass(s.flags)) continue;
          moves.push({
            contract: s.contract,
            time: s.time,
            quantity: s.quantity,
            totalNative: s.total,
            was,
            now: saleClass(s.flags),
          });
          await db.sql`
            UPDATE sales SET flags = ${s.flags}::text[] WHERE chain_id = ${moved} AND block_number = ${s.block}`;
        }
        const buckets = moves.map((m) => ({ contract: m.contract, start: bucketStart(m.time) }));
        await runInOrder(moveStatements(db.sql, moved, listedMoves(db.sql, moves), buckets, end));
        await countFromScratch(fresh, after, end);
        assert.deepEqual(await rollups(moved), await rollups(fresh));
      }),
      { numRuns: 40 },
    );
  });
});
