import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import {
  price0In1,
  RateBook,
  type RateBookConfig,
  v2Price0In1,
  v3Price0In1,
} from "../../src/rates/convert.ts";
import type { PoolState } from "../../src/rates/events.ts";
import { defaultNativePegged, defaultPools, defaultUsdTokens } from "../../src/rates/pools.ts";
import { type Rate, ratio } from "../../src/rates/rational.ts";
import { priceTrade, type PriceContext as SalesPriceContext } from "../../src/sales/price.ts";
import type { Trade } from "../../src/sales/types.ts";

const Q192 = 1n << 192n;
const Q96 = 1n << 96n;

// Ethereum tokens and pools (see src/rates/pools.ts).
const WETH: Address = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const BLUR_POOL: Address = "0x0000000000a39bb272e79075ade125fd351887ac";
const USDC: Address = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const USDT: Address = "0xdac17f958d2ee523a2206206994597c13d831ec7";
const WBTC: Address = "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599";
const USDC_WETH_V3_005: Address = "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640";
const USDC_WETH_V3_03: Address = "0x8ad599c3a0ff1de082011efddc58f1908eb6e6d8";
const WETH_USDT_V3_005: Address = "0x11b815efb8f581194ae79006d24e0d814b7697f6";
const USDC_WETH_V2: Address = "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc";
const WETH_USDT_V2: Address = "0x0d4a11d5eeaac28ec3f61d100daf4d40471f1852";
const DAI_WETH_V2: Address = "0xa478c2975ab1ea89e8196811f51a7b7ade33eb11";
const WBTC_WETH_V3_005: Address = "0x4585fe77225b41b697c938b018e2ac67ac5a20c0";

/**
 * slot0().sqrtPriceX96 of the USDC/WETH 0.05% pool as read on mainnet and published by RareSkills
 * ("Uniswap V3 sqrtPriceX96"): 1 ETH ≈ 2765.16 USDC.
 */
const MAINNET_SQRT_PRICE = 1506673274302120988651364689808458n;

const ETHEREUM: RateBookConfig = {
  nativePegged: defaultNativePegged(1),
  pools: defaultPools(1),
  usdTokens: defaultUsdTokens(1),
};

let nextIndex = 0;
const v2 = (pool: Address, reserve0: bigint, reserve1: bigint, blockNumber = 100): PoolState => ({
  pool,
  blockNumber,
  logIndex: nextIndex++,
  reserve0,
  reserve1,
});
const v3 = (pool: Address, sqrtPriceX96: bigint, blockNumber = 100): PoolState => ({
  pool,
  blockNumber,
  logIndex: nextIndex++,
  sqrtPriceX96,
});

function book(states: PoolState[], config = ETHEREUM): RateBook {
  const b = new RateBook(config);
  for (const s of states) b.apply(s);
  return b;
}

function gcd(a: bigint, b: bigint): bigint {
  return b === 0n ? a : gcd(b, a % b);
}

/** `amount` base units converted with `rate`, rounded down, as the pricing does. */
const convert = (amount: bigint, rate: Rate | undefined) =>
  rate ? (amount * rate.num) / rate.den : undefined;

function trade(native: bigint, fungible: { token: Address; amount: bigint }[] = []): Trade {
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
    native,
    fungible,
    attributedBy: "ATTRIBUTED_BY_SINGLE_TRANSFER",
    market: "",
    priceFromTransactionValue: false,
  };
}

describe("pool prices", () => {
  test("V2: reserve1 / reserve0 of token0 in token1, and the inverse; an empty side has no price", () => {
    assert.deepEqual(v2Price0In1(40_000_000_000_000n, 20_000n * 10n ** 18n), { num: 500_000_000n, den: 1n });
    assert.deepEqual(v2Price0In1(20_000n * 10n ** 18n, 40_000_000_000_000n), { num: 1n, den: 500_000_000n });
    assert.deepEqual(v2Price0In1(6n, 4n), { num: 2n, den: 3n });
    assert.equal(v2Price0In1(0n, 5n), undefined);
    assert.equal(v2Price0In1(5n, 0n), undefined);
  });

  test("V3: sqrtPriceX96² / 2^192 exactly, in lowest terms", () => {
    const p = v3Price0In1(MAINNET_SQRT_PRICE) as Rate;
    assert.equal(p.num * Q192, MAINNET_SQRT_PRICE * MAINNET_SQRT_PRICE * p.den);
    assert.equal(gcd(p.num, p.den), 1n);
    assert.deepEqual(v3Price0In1(Q96), { num: 1n, den: 1n });
    assert.deepEqual(v3Price0In1(Q96 * 3n), { num: 9n, den: 1n });
    assert.deepEqual(v3Price0In1(Q96 / 4n), { num: 1n, den: 16n });
    assert.equal(v3Price0In1(0n), undefined);
  });

  test("a state of the other kind gives no price", () => {
    const [pool] = defaultPools(1);
    assert.equal(pool?.kind, "v3");
    assert.equal(price0In1(pool as never, v2(USDC_WETH_V3_005, 1n, 2n)), undefined);
  });
});

describe("RateBook prices", () => {
  test("a real V3 USDC/WETH price: USD per ETH to the digit, and USDC to wei", () => {
    const prices = book([v3(USDC_WETH_V3_005, MAINNET_SQRT_PRICE)]).current();
    // USD per wei = (2^192 / s²) USDC base units / 10^6; for 1 ETH, 18 decimals kept:
    const s2 = MAINNET_SQRT_PRICE * MAINNET_SQRT_PRICE;
    const scaled = (10n ** 18n * Q192 * 10n ** 18n) / (s2 * 10n ** 6n);
    assert.equal(scaled, 2765_164661604670924587n);
    const oneEth = priceTrade(trade(10n ** 18n), prices);
    assert.equal(oneEth.totalUsd, "2765.164661604670924587");

    // 1000 USDC paid: s² / 2^192 wei per USDC base unit, about 0.3616 ETH.
    const wei = (1_000_000_000n * s2) / Q192;
    assert.equal(convert(1_000_000_000n, prices.toNative(USDC)), wei);
    assert.equal(wei / 10n ** 14n, 3616n);
    const paid = priceTrade(trade(0n, [{ token: USDC, amount: 1_000_000_000n }]), prices);
    assert.equal(paid.totalNative, wei);
    assert.deepEqual(paid.flags, []);
    assert.equal(paid.totalUsd?.slice(0, 7), "999.999");
  });

  test("V2 reserves both ways: the token as token0 (USDC) and as token1 (USDT), 6 decimals against 18", () => {
    // 40 M USDC and 20 000 WETH: 2000 USD per ETH. 1000 WETH and 2.1 M USDT: 2100 USD per ETH.
    const prices = book([
      v2(USDC_WETH_V2, 40_000_000n * 10n ** 6n, 20_000n * 10n ** 18n),
      v2(WETH_USDT_V2, 1_000n * 10n ** 18n, 2_100_000n * 10n ** 6n),
    ]).current();
    assert.deepEqual(prices.toNative(USDC), { num: 500_000_000n, den: 1n }); // 5e8 wei per 10^-6 USDC
    assert.deepEqual(prices.toNative(USDT), { num: 10_000_000_000n, den: 21n });
    assert.equal(convert(2_100_000_000n, prices.toNative(USDT)), 10n ** 18n); // 2100 USDT = 1 ETH
    // Two USD sources: the lower.
    assert.deepEqual(prices.usdPerWei, { num: 1n, den: 500_000_000_000_000n });
    assert.equal(priceTrade(trade(3n * 10n ** 18n), prices).totalUsd, "6000");
  });

  test("USD per wei is the median of the stablecoin pools; an odd one out does not move it", () => {
    const prices = book([
      v2(USDC_WETH_V2, 40_000_000n * 10n ** 6n, 20_000n * 10n ** 18n), // 2000
      v2(WETH_USDT_V2, 1_000n * 10n ** 18n, 2_100_000n * 10n ** 6n), // 2100
      v2(DAI_WETH_V2, 2_050_000n * 10n ** 18n, 1_000n * 10n ** 18n), // 2050
      v3(WETH_USDT_V3_005, 1n << 80n), // a pool pushed to a tiny price
    ]).current();
    // 2000, 2050, 2100 and the tiny one: the lower middle of four is 2000.
    assert.equal(priceTrade(trade(10n ** 18n), prices).totalUsd, "2000");
    const five = book([
      v2(USDC_WETH_V2, 40_000_000n * 10n ** 6n, 20_000n * 10n ** 18n),
      v2(WETH_USDT_V2, 1_000n * 10n ** 18n, 2_100_000n * 10n ** 6n),
      v2(DAI_WETH_V2, 2_050_000n * 10n ** 18n, 1_000n * 10n ** 18n),
      v3(WETH_USDT_V3_005, 1n << 80n),
      v3(USDC_WETH_V3_03, 1n << 60n), // and one pushed far up
    ]).current();
    assert.equal(priceTrade(trade(10n ** 18n), five).totalUsd, "2050");
  });

  test("an 8-decimals token: WBTC at 16 ETH", () => {
    // 1.6e11 wei per satoshi: 16 ETH per 10^8 satoshis.
    const prices = book([v3(WBTC_WETH_V3_005, 400_000n * Q96)]).current();
    assert.deepEqual(prices.toNative(WBTC), { num: 160_000_000_000n, den: 1n });
    assert.equal(convert(50_000_000n, prices.toNative(WBTC)), 8n * 10n ** 18n);
  });

  test("native-pegged tokens count 1:1, in any letter case; a token with no pool has no rate", () => {
    const prices = book([v3(USDC_WETH_V3_005, MAINNET_SQRT_PRICE)]).current();
    assert.deepEqual(prices.toNative(WETH), { num: 1n, den: 1n });
    assert.deepEqual(prices.toNative(BLUR_POOL), { num: 1n, den: 1n });
    assert.deepEqual(prices.toNative(WETH.toUpperCase().replace("0X", "0x") as Address), {
      num: 1n,
      den: 1n,
    });
    assert.equal(prices.toNative(WBTC), undefined);
    assert.equal(prices.toNative("0x4d224452801aced8b2f0aebe155379bb5d594381"), undefined);
    const unpriced = priceTrade(trade(0n, [{ token: WBTC, amount: 1n }]), prices);
    assert.deepEqual(unpriced.flags, ["unpriced"]);

    const empty = new RateBook(ETHEREUM).current();
    assert.equal(empty.usdPerWei, undefined);
    assert.equal(empty.toNative(USDC), undefined);
    assert.deepEqual(empty.toNative(WETH), { num: 1n, den: 1n });
  });

  test("a pool with an empty side is no source", () => {
    const prices = book([
      v2(USDC_WETH_V2, 0n, 0n),
      v2(WETH_USDT_V2, 1_000n * 10n ** 18n, 2_100_000n * 10n ** 6n),
    ]).current();
    assert.equal(prices.toNative(USDC), undefined);
    assert.equal(priceTrade(trade(10n ** 18n), prices).totalUsd, "2100");
  });

  test("a token without a pool against the native coin is priced through one that has one", () => {
    // Polygon: WETH is an ERC-20, priced through USDC.e/WETH and WPOL/USDC.e.
    const polygon: RateBookConfig = {
      nativePegged: defaultNativePegged(137),
      pools: defaultPools(137),
      usdTokens: defaultUsdTokens(137),
    };
    const wpolUsdce = 3n * 10n ** 22n; // about 0.14 USD per POL
    const usdceWeth = 1_500_000n * 10n ** 27n; // about 2790 USD per ETH
    const prices = book(
      [
        v3("0xa374094527e1673a86de625aa59517c5de346d32", wpolUsdce),
        v3("0x45dda9cb7c25131df268515131f647d726f50608", usdceWeth),
      ],
      polygon,
    ).current();
    // POL wei per WETH wei = (USDC.e per WETH) × (POL per USDC.e) = (2^192 / b²) × (2^192 / a²).
    const expected = { num: Q192 * Q192, den: wpolUsdce ** 2n * usdceWeth ** 2n };
    const got = prices.toNative("0x7ceb23fd6bc0add59e62ac25578270cff1b9f619") as Rate;
    assert.equal(got.num * expected.den, expected.num * got.den);
    assert.equal(gcd(got.num, got.den), 1n);
    const polPerEth = convert(10n ** 18n, got) as bigint;
    assert.equal(polPerEth / 10n ** 18n, 19_457n); // 2789.82 USD per ETH over 0.14338 per POL
    assert.equal(priceTrade(trade(10n ** 18n), prices).totalUsd?.slice(0, 6), "0.1433");
  });

  test("the context is what sales are priced with", () => {
    const context: SalesPriceContext = book([v3(USDC_WETH_V3_005, MAINNET_SQRT_PRICE)]).current();
    assert.ok(context.usdPerWei);
  });
});

describe("RateBook over time", () => {
  test("the book moves with each state in chain order, and answers each block of a batch", () => {
    const b = new RateBook(ETHEREUM, [
      { pool: USDC_WETH_V2, blockNumber: 9, logIndex: 4, reserve0: 2_000n * 10n ** 6n, reserve1: 10n ** 18n },
    ]);
    const at = b.advance([
      {
        pool: USDC_WETH_V2,
        blockNumber: 10,
        logIndex: 1,
        reserve0: 2_100n * 10n ** 6n,
        reserve1: 10n ** 18n,
      },
      {
        pool: "0x1111111111111111111111111111111111111111",
        blockNumber: 10,
        logIndex: 2,
        reserve0: 1n,
        reserve1: 1n,
      },
      {
        pool: USDC_WETH_V2,
        blockNumber: 10,
        logIndex: 3,
        reserve0: 2_200n * 10n ** 6n,
        reserve1: 10n ** 18n,
      },
      {
        pool: USDC_WETH_V2,
        blockNumber: 12,
        logIndex: 0,
        reserve0: 2_300n * 10n ** 6n,
        reserve1: 10n ** 18n,
      },
    ]);
    const usdAt = (block: number) => priceTrade(trade(10n ** 18n), at(block)).totalUsd;
    // Before every state the book holds, nothing is known: the indexer never asks, since a batch
    // starts after the block the book resumed from.
    assert.equal(usdAt(8), undefined);
    assert.equal(usdAt(9), "2000"); // the state the book resumed from
    assert.equal(usdAt(10), "2200"); // after the block's last pool log
    assert.equal(usdAt(11), "2200");
    assert.equal(usdAt(12), "2300");
    assert.equal(usdAt(1_000), "2300");
    // Each block is priced at its own time, so each gets its own context, made once.
    assert.equal(at(10), at(10), "a block's context is made once");
    assert.equal(priceTrade(trade(10n ** 18n), b.current()).totalUsd, "2300");
  });

  test("a state at or before the last one is refused; one of a pool not followed is ignored", () => {
    const b = book([v2(USDC_WETH_V2, 1n, 1n, 50)]);
    const last = b.snapshot()[0] as PoolState;
    assert.throws(() => b.apply({ ...last }), RangeError);
    assert.throws(() => b.apply({ ...last, pool: DAI_WETH_V2, blockNumber: 49 }), RangeError);
    assert.equal(
      b.apply({ ...last, pool: "0x1111111111111111111111111111111111111111", blockNumber: 1 }),
      false,
    );
    assert.equal(b.apply({ ...last, logIndex: last.logIndex + 1, reserve0: 2n }), true);

    const later = { ...last, blockNumber: 60, logIndex: 0, reserve0: 3n };
    assert.throws(() => b.advance([later, { ...later, blockNumber: 59 }]), RangeError);
    assert.equal(b.snapshot()[0]?.reserve0, 2n, "nothing of a refused batch is taken");
  });

  test("a book rebuilt from the last stored state of each pool prices as the one that ran", () => {
    const ran = new RateBook(ETHEREUM);
    const rows: PoolState[] = [
      v2(USDC_WETH_V2, 40_000_000n * 10n ** 6n, 20_000n * 10n ** 18n, 200),
      v3(USDC_WETH_V3_005, MAINNET_SQRT_PRICE, 201),
      v2(WETH_USDT_V2, 1_000n * 10n ** 18n, 2_100_000n * 10n ** 6n, 202),
      v2(USDC_WETH_V2, 42_000_000n * 10n ** 6n, 20_000n * 10n ** 18n, 203),
      v3(WBTC_WETH_V3_005, 400_000n * Q96, 204),
    ];
    for (const row of rows) ran.apply(row);
    const snapshot = ran.snapshot();
    assert.equal(snapshot.length, 4);

    // From the snapshot, and from stored rows in any order, older ones of a pool included.
    for (const restored of [new RateBook(ETHEREUM, snapshot), new RateBook(ETHEREUM, [...rows].reverse())]) {
      assert.deepEqual(restored.snapshot().sort(byPool), snapshot.sort(byPool));
      const a = ran.current();
      const b = restored.current();
      assert.deepEqual(b.usdPerWei, a.usdPerWei);
      for (const token of [USDC, USDT, WBTC, WETH]) assert.deepEqual(b.toNative(token), a.toNative(token));
      assert.throws(() => restored.apply({ ...v2(USDC_WETH_V2, 1n, 1n, 204), logIndex: 0 }), RangeError);
      assert.equal(restored.apply(v2(USDC_WETH_V2, 1n, 1n, 205)), true);
    }
  });

  test("rates stay as small as the pool states, however long the book runs", () => {
    const b = new RateBook(ETHEREUM);
    for (let i = 1; i <= 2_000; i++) {
      b.apply(v3(USDC_WETH_V3_005, MAINNET_SQRT_PRICE + BigInt(i) * 7919n, 300 + i));
      b.apply(v2(USDC_WETH_V2, 40_000_000n * 10n ** 6n + BigInt(i), 20_000n * 10n ** 18n, 300 + i));
    }
    const prices = b.current();
    const usd = prices.usdPerWei as Rate;
    assert.ok(usd.den.toString(2).length < 400, `${usd.den.toString(2).length} bits`);
    assert.equal(gcd(usd.num, usd.den), 1n);
    assert.deepEqual(ratio(usd.num * 3n, usd.den * 3n), usd);
  });
});

function byPool(a: PoolState, b: PoolState): number {
  return a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0;
}
