import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Address } from "../../src/core/hex.ts";
import { beyond, RateBook, type RateBookConfig } from "../../src/rates/convert.ts";
import { sideDepth } from "../../src/rates/depth.ts";
import type { PoolState } from "../../src/rates/events.ts";
import {
  defaultNativePegged,
  defaultPools,
  defaultUsdTokens,
  type PoolDescription,
} from "../../src/rates/pools.ts";
import { compare, type Rate, ratio } from "../../src/rates/rational.ts";
import { routeRates } from "../../src/rates/routes.ts";
import { GRID, type PriceOf, PriceSeries, timeWeighted } from "../../src/rates/twap.ts";
import { priceTrade } from "../../src/sales/price.ts";
import type { Trade } from "../../src/sales/types.ts";

const Q96 = 1n << 96n;
const Q192 = 1n << 192n;
const WINDOW = 1800;
const BLOCK_SECONDS = 12;
const timeOf = (block: number) => block * BLOCK_SECONDS;

// Polygon's presets: WETH is an ERC-20 there, priced against WPOL directly and through the dollar.
const WPOL: Address = "0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270";
const WETH: Address = "0x7ceb23fd6bc0add59e62ac25578270cff1b9f619";
const USDCe: Address = "0x2791bca1f2de4661ed88a30c99a7a9449aa84174";
const POLYGON_POOLS = defaultPools(137);
const poolOf = (a: Address, b: Address, fee = 0): PoolDescription => {
  const found = POLYGON_POOLS.filter(
    (p) => (p.token0 === a && p.token1 === b) || (p.token0 === b && p.token1 === a),
  )[fee];
  assert.ok(found, `a preset pool of ${a}/${b}`);
  return found;
};
const WPOL_WETH = poolOf(WPOL, WETH);

function polygon(extra: Partial<RateBookConfig> = {}): RateBookConfig {
  return {
    nativePegged: defaultNativePegged(137),
    pools: POLYGON_POOLS,
    usdTokens: defaultUsdTokens(137),
    windowSeconds: WINDOW,
    ...extra,
  };
}

let logIndex = 0;
function v3(pool: PoolDescription, sqrtPriceX96: bigint, block: number, liquidity?: bigint): PoolState {
  return {
    pool: pool.address,
    blockNumber: block,
    logIndex: logIndex++,
    blockTime: timeOf(block),
    sqrtPriceX96,
    ...(liquidity !== undefined ? { liquidity } : {}),
  };
}

function trade(fungible: { token: Address; amount: bigint }[]): Trade {
  return {
    kind: "sale",
    contract: "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
    tokenId: 1n,
    seller: "0x1111111111111111111111111111111111111111",
    buyer: "0x2222222222222222222222222222222222222222",
    quantity: 1n,
    blockNumber: 100,
    logIndex: 0,
    seq: 0,
    txHash: `0x${"00".repeat(32)}`,
    txIndex: 0,
    native: 0n,
    fungible,
    attributedBy: "ATTRIBUTED_BY_SINGLE_TRANSFER",
    market: "",
    priceFromTransactionValue: false,
  };
}

// WPOL is token0 of WPOL/WETH: its price is WETH per WPOL. 1 WETH = 16,384 WPOL (2^14, so that
// every price below is exact): √(2^-14)·2^96 = 2^89.
const FAIR = Q96 >> 7n;
/** WETH in wei of POL at a WPOL/WETH state: the inverse of the pool's price, 2^192 / s². */
const wethRate = (s: bigint): Rate => ratio(Q192, s * s);

describe("time-weighted pool prices", () => {
  test("a price pushed at the end of a block weighs nothing in that block, and its seconds after it in the next", () => {
    const book = new RateBook(polygon());
    const pushed = FAIR * 8n; // WPOL 64× dearer in WETH: WETH 64× cheaper in POL
    const at = book.advance(
      [v3(WPOL_WETH, FAIR, 1_000), v3(WPOL_WETH, pushed, 1_200), v3(WPOL_WETH, FAIR, 1_201)],
      timeOf,
    );
    // Block 1,200 is 2,400 s after the fair state: the window holds it alone.
    assert.deepEqual(at(1_200).toNative(WETH), wethRate(FAIR), "the push's own block");
    // Block 1,201: 12 s of the pushed price (256 POL per WETH) in 1,800 s of 16,384.
    const got = at(1_201).toNative(WETH) as Rate;
    assert.deepEqual(got, ratio(16_384n * BigInt(WINDOW - BLOCK_SECONDS) + 256n * 12n, BigInt(WINDOW)));
    // The mean moved by 12/1,800 of the push: under 1 %.
    assert.ok(compare(got, ratio(16_384n * 99n, 100n)) > 0);
    assert.deepEqual(wethRate(FAIR), ratio(16_384n, 1n));
  });

  test("a constant price is kept exactly; an empty window reads the block's last state; a new pool its first", () => {
    const states = [v3(WPOL_WETH, FAIR, 10), v3(WPOL_WETH, FAIR, 20), v3(WPOL_WETH, FAIR * 2n, 30)];
    const price = (s: PoolState) => ratio((s.sqrtPriceX96 as bigint) ** 2n, Q192);
    const v3Price: PriceOf = { exact: price, grid: (s) => (s.sqrtPriceX96 as bigint) ** 2n };
    const all = () => true;
    assert.deepEqual(
      timeWeighted(states, 2, v3Price, all, { from: timeOf(25) - WINDOW, to: timeOf(25) }),
      price(states[0] as PoolState),
    );
    assert.deepEqual(
      timeWeighted(states, 3, v3Price, all, { from: timeOf(30), to: timeOf(30) }),
      price(states[2] as PoolState),
    );
    assert.deepEqual(
      timeWeighted(states.slice(2), 1, v3Price, all, { from: 0, to: timeOf(30) }),
      price(states[2] as PoolState),
    );
    assert.equal(
      timeWeighted(states.slice(2), 1, v3Price, all, { from: 0, to: timeOf(30) }, false),
      undefined,
      "not for the reference window",
    );
  });

  test("a state stored without its time holds from the window's start", () => {
    const old: PoolState = { pool: WPOL_WETH.address, blockNumber: 5, logIndex: 0, sqrtPriceX96: FAIR };
    const states = [old, v3(WPOL_WETH, FAIR * 2n, 1_000)];
    const price = (s: PoolState) => ratio((s.sqrtPriceX96 as bigint) ** 2n, Q192);
    const v3Price: PriceOf = { exact: price, grid: (s) => (s.sqrtPriceX96 as bigint) ** 2n };
    const to = timeOf(1_000) + WINDOW / 2;
    const got = timeWeighted(states, 2, v3Price, () => true, { from: to - WINDOW, to }) as Rate;
    // Half the window at the old price, half at four times it.
    assert.deepEqual(got, ratio(price(old).num * 5n, price(old).den * 2n));
  });

  test("property: the mean lies between the window's lowest and highest price, and is the exact mean on V3's grid", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 1, max: 400 }),
            s: fc.bigInt({ min: Q96 / 1000n, max: Q96 * 1000n }),
          }),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        fc.integer({ min: 1, max: 4_000 }),
        fc.integer({ min: 0, max: 500 }),
        (steps, window, after) => {
          let time = 0;
          const states: PoolState[] = steps.map(({ gap, s }, i) => {
            time += gap;
            return {
              pool: WPOL_WETH.address,
              blockNumber: i + 1,
              logIndex: 0,
              blockTime: time,
              sqrtPriceX96: s,
            };
          });
          const to = time + after;
          const from = to - window;
          const price = (s: PoolState) => ratio((s.sqrtPriceX96 as bigint) ** 2n, Q192);
          const v3Price: PriceOf = { exact: price, grid: (s) => (s.sqrtPriceX96 as bigint) ** 2n };
          const got = timeWeighted(states, states.length, v3Price, () => true, { from, to });
          // Exact weights: each state from its time (or the window's start) to the next's.
          let num = 0n;
          let held = 0;
          const seen: Rate[] = [];
          states.forEach((s, i) => {
            const since = Math.max(s.blockTime as number, from);
            const until = Math.min(states[i + 1]?.blockTime ?? to, to);
            if (until > since) {
              num += (s.sqrtPriceX96 as bigint) ** 2n * BigInt(until - since);
              held += until - since;
              seen.push(price(s));
            }
          });
          if (held === 0) {
            assert.deepEqual(got, price(states[states.length - 1] as PoolState));
            return;
          }
          assert.deepEqual(got, ratio(num, Q192 * BigInt(held)));
          const sorted = seen.sort(compare);
          assert.ok(
            compare(got as Rate, sorted[0] as Rate) >= 0 && compare(got as Rate, sorted.at(-1) as Rate) <= 0,
          );
        },
      ),
    );
  });
});

describe("prefix sums", () => {
  test("property: a series answers every window as the one-pass mean does, floors, older rows and ties included", () => {
    // V2-like prices (reserve1 / reserve0), off the grid, so rounding shows if it differs.
    const price: PriceOf = {
      exact: (s) => ratio(s.reserve1 as bigint, s.reserve0 as bigint),
      grid: (s) => ((s.reserve1 as bigint) * GRID) / (s.reserve0 as bigint),
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 1, max: 300 }),
            r0: fc.bigInt({ min: 1n, max: 5n }),
            r1: fc.bigInt({ min: 1n, max: 10n ** 30n }),
            deep: fc.boolean(),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 2_000 }),
        fc.integer({ min: -200, max: 4_000 }),
        fc.boolean(),
        (steps, untimed, window, shift, spot) => {
          let time = 1_000;
          const states: PoolState[] = steps.map(({ gap, r0, r1, deep }, i) => {
            time += gap;
            return {
              pool: WPOL_WETH.address,
              blockNumber: i + 1,
              logIndex: 0,
              // The first few as rows stored before times were kept.
              ...(i < untimed ? {} : { blockTime: time }),
              reserve0: r0,
              // A repeated price now and then, to try the exact answer.
              reserve1: i % 3 === 2 ? (steps[i - 1]?.r1 ?? r1) : r1,
              liquidity: deep ? 1n : 0n,
            };
          });
          const counts = (s: PoolState) => s.liquidity === 1n;
          const series = new PriceSeries(states, price, counts);
          for (let end = 1; end <= states.length; end++) {
            const to = time - shift;
            const w = { from: to - window, to };
            assert.deepEqual(
              series.mean(end, w, spot),
              timeWeighted(states, end, price, counts, w, spot),
              `end ${end}`,
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("the depth floor", () => {
  const floor = 1_000_000n * 10n ** 18n; // a million POL

  test("a V3 state's depth is its in-range virtual reserve; a V2 pair's its reserve; unknown for an older row", () => {
    // L = 10^24 at 1 WETH = 10,000 WPOL: 10^26 WPOL wei and 10^22 WETH wei in range.
    const state = v3(WPOL_WETH, FAIR, 1, 10n ** 24n);
    assert.equal(sideDepth(WPOL_WETH, state, 0), (10n ** 24n * Q96) / FAIR);
    assert.equal(sideDepth(WPOL_WETH, state, 1), (10n ** 24n * FAIR) / Q96);
    const v2Pool: PoolDescription = { ...WPOL_WETH, kind: "v2" };
    assert.equal(sideDepth(v2Pool, { ...state, reserve0: 7n, reserve1: 9n }, 1), 9n);
    assert.equal(sideDepth(WPOL_WETH, { ...state, liquidity: undefined }, 0), undefined);
  });

  test("a pool pushed past its liquidity is left out for the time it stays there, and a thin one always", () => {
    const deep = 10n ** 24n; // 10^26 wei of WPOL in range: a hundred million POL
    const book = new RateBook(polygon({ minDepth: floor }));
    // Pushed 100× and left with nothing in range (a V3 push past every position), then back.
    const at = book.advance(
      [
        v3(WPOL_WETH, FAIR, 1_000, deep),
        v3(WPOL_WETH, FAIR * 10n, 1_100, 0n),
        v3(WPOL_WETH, FAIR, 1_105, deep),
      ],
      timeOf,
    );
    // The pushed state counts for nothing: the mean is the fair price throughout.
    for (const block of [1_100, 1_101, 1_105, 1_200]) {
      assert.deepEqual(at(block).toNative(WETH), wethRate(FAIR), `block ${block}`);
    }
    // A pool that never held the floor gives no rate at all.
    const thin = new RateBook(polygon({ minDepth: floor })).advance(
      [v3(WPOL_WETH, FAIR, 1_000, 1_000n)],
      timeOf,
    );
    assert.equal(thin(1_500).toNative(WETH), undefined);
    // Without a floor it would.
    const open = new RateBook(polygon()).advance([v3(WPOL_WETH, FAIR, 1_000, 1_000n)], timeOf);
    assert.deepEqual(open(1_500).toNative(WETH), wethRate(FAIR));
  });
});

describe("the median over routes", () => {
  // USDC.e base units per WPOL wei: 2^-40 (about 0.9 USD per POL); WETH wei per USDC.e base
  // unit: 2^26 (about 15,000 USD per ETH): through the dollar, 2^14 POL per WETH, as directly.
  const WPOL_USDCe = poolOf(WPOL, USDCe);
  const USDCe_WETH = poolOf(USDCe, WETH);
  const wpolUsdce = Q96 >> 20n;
  const usdceWeth = Q96 << 13n;

  test("a token with fewer than three direct pools is not moved by pushing one: the routes through the dollar outvote it", () => {
    // One pool's push, read at the block's last state (window 0) to see the routes alone.
    const states = [
      v3(WPOL_WETH, FAIR * 8n, 50), // WPOL/WETH 0.05% pushed: 256 POL per WETH
      v3(poolOf(WPOL, WETH, 1), FAIR, 50), // WPOL/WETH 0.3%: 16,384
      v3(WPOL_USDCe, wpolUsdce, 50),
      v3(USDCe_WETH, usdceWeth, 50), // through USDC.e: 16,384
    ];
    const spot = new RateBook(polygon({ windowSeconds: 0 })).advance(states, timeOf)(50);
    // Routes 256, 16,384 and 16,384: the median is the fair one.
    assert.deepEqual(spot.toNative(WETH), ratio(16_384n, 1n));
    // The direct pools alone would have given the pushed one (the lower of two).
    const direct = new RateBook(polygon({ windowSeconds: 0 })).advance(states.slice(0, 2), timeOf)(50);
    assert.deepEqual(direct.toNative(WETH), ratio(256n, 1n));
  });

  test("three direct pools or more are enough: routes through other tokens are not counted then", () => {
    const one = ratio(1n, 1n);
    const direct = new Map<Address, Rate[]>([
      [WETH, [one, one, ratio(3n, 1n)]],
      [USDCe, [ratio(1n, 4n)]],
    ]);
    const quotes = [{ token: WETH, through: USDCe, rate: ratio(400n, 1n) }];
    assert.deepEqual(routeRates(direct, quotes).get(WETH), one);
    const two = new Map(direct).set(WETH, [ratio(3n, 1n), ratio(4n, 1n)]);
    // Two direct (3 and 4) and one route (400 × 1/4 = 100): the median of three is 4.
    assert.deepEqual(routeRates(two, quotes).get(WETH), ratio(4n, 1n));
    // A route through a token without a direct rate is no route.
    assert.deepEqual(routeRates(new Map([[WETH, [one]]]), quotes).get(WETH), one);
  });
});

describe("the jump bound", () => {
  test("a rate beyond the bound of the window before it is an outlier, either way; within it, not", () => {
    const two = ratio(2n, 1n);
    const ref = ratio(10n, 1n);
    assert.equal(beyond(ratio(21n, 1n), ref, two), true);
    assert.equal(beyond(ratio(20n, 1n), ref, two), false);
    assert.equal(beyond(ratio(5n, 1n), ref, two), false);
    assert.equal(beyond(ratio(49n, 10n), ref, two), true);
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        (a, b) => {
          const x = ratio(a, 1000n);
          const y = ratio(b, 1000n);
          assert.equal(beyond(x, y, two), beyond(y, x, two), "symmetric");
          assert.equal(beyond(x, x, two), false);
        },
      ),
    );
  });

  test("a sustained move is flagged rate_outlier on the sales it prices; a push of one block is not", () => {
    const book = new RateBook(polygon());
    const cheaper = FAIR * 2n; // WPOL 4× dearer in WETH: WETH 4× cheaper
    const at = book.advance(
      [
        v3(WPOL_WETH, FAIR, 1_000),
        v3(WPOL_WETH, FAIR * 10n, 1_300), // one block's push
        v3(WPOL_WETH, FAIR, 1_301),
        v3(WPOL_WETH, cheaper, 1_500), // and a move that stays
      ],
      timeOf,
    );
    const paid = [{ token: WETH, amount: 10n ** 18n }];
    for (const block of [1_299, 1_300, 1_301, 1_302, 1_400]) {
      assert.deepEqual(priceTrade(trade(paid), at(block)).flags, [], `block ${block}`);
    }
    // A window (150 blocks) after the move, the rate is 4× below the window before it.
    assert.deepEqual(priceTrade(trade(paid), at(1_650)).flags, ["rate_outlier"]);
    assert.equal(at(1_650).isOutlier?.(WETH.toUpperCase().replace("0X", "0x") as Address), true);
    assert.equal(at(1_650).isOutlier?.(WPOL), false, "native-pegged tokens never are");
    // Two windows on, the window before has caught up.
    assert.deepEqual(priceTrade(trade(paid), at(1_800)).flags, []);
    // A payment in a token without a rate is unpriced, never an outlier.
    assert.deepEqual(priceTrade(trade([{ token: USDCe, amount: 1n }]), at(1_650)).flags, ["unpriced"]);
  });

  test("a book read back from its states prices as the one that ran, windows and flags included", () => {
    const ran = new RateBook(polygon());
    const states = [
      v3(WPOL_WETH, FAIR, 900),
      v3(WPOL_WETH, FAIR * 3n, 1_000),
      v3(WPOL_WETH, FAIR * 2n, 1_100),
      v3(WPOL_WETH, FAIR, 1_250),
    ];
    ran.advance(states, timeOf);
    const restored = new RateBook(polygon(), [...ran.snapshot()].reverse());
    const next = [v3(WPOL_WETH, FAIR * 4n, 1_260)];
    const a = ran.advance(next, timeOf);
    const b = restored.advance(
      next.map((s) => ({ ...s })),
      timeOf,
    );
    for (const block of [1_260, 1_300, 1_400, 1_500]) {
      assert.deepEqual(b(block).toNative(WETH), a(block).toNative(WETH), `block ${block}`);
      assert.equal(b(block).isOutlier?.(WETH), a(block).isOutlier?.(WETH), `block ${block}`);
    }
    // The book keeps two windows and the state in force before them, not the whole history.
    assert.ok(
      ran
        .snapshot()
        .every((s) => (s.blockTime as number) >= timeOf(1_260) - 2 * WINDOW - 100 * BLOCK_SECONDS),
    );
  });
});
