import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type AbiEvent, encodeAbiParameters, encodeEventTopics, parseAbiItem, toEventSelector } from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ChainLog } from "../../src/core/types.ts";
import {
  decodePoolLog,
  decodePoolLogs,
  INITIALIZE_TOPIC,
  POOL_TOPICS,
  SWAP_TOPIC,
  SYNC_TOPIC,
} from "../../src/rates/events.ts";
import type { PoolDescription } from "../../src/rates/pools.ts";

const SYNC = parseAbiItem("event Sync(uint112 reserve0, uint112 reserve1)");
const INITIALIZE = parseAbiItem("event Initialize(uint160 sqrtPriceX96, int24 tick)");
const SWAP = parseAbiItem(
  "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)",
);

const V3_POOL: Address = "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640";
const V2_POOL: Address = "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc";
const ROUTER: Address = "0x68b3465833fb72a70ecdf485e0e4c7bd8665fc45";
// slot0 of the USDC/WETH 0.05% pool as read on mainnet (about 2765 USD per ETH).
const SQRT_PRICE = 1506673274302120988651364689808458n;

function log(address: Address, topics: readonly Hex[], data: Hex, logIndex = 7): ChainLog {
  return {
    address,
    topics,
    data,
    blockNumber: 19_000_000,
    blockHash: `0x${"ab".repeat(32)}`,
    logIndex,
    transactionHash: `0x${"cd".repeat(32)}`,
    transactionIndex: 3,
  };
}

/**
 * A log of the event. The data is encoded with every integer widened to 256 bits, which encodes
 * an in-range value exactly as its own type does and lets a test write values no pool could.
 */
function event(abi: AbiEvent, args: Record<string, unknown>, address: Address, logIndex?: number): ChainLog {
  const topics = encodeEventTopics({ abi: [abi], args } as never) as Hex[];
  const inputs = abi.inputs
    .filter((i) => !i.indexed)
    .map((i) => ({ ...i, type: i.type.replace(/^(u?int)\d+$/, "$1256") }));
  const data = encodeAbiParameters(
    inputs,
    inputs.map((i) => args[i.name as string]),
  );
  return log(address, topics, data, logIndex);
}

const sync = (reserve0: bigint, reserve1: bigint, address = V2_POOL) =>
  event(SYNC, { reserve0, reserve1 }, address);
const swap = (sqrtPriceX96: bigint, tick: number, liquidity = 10n ** 18n, address = V3_POOL) =>
  event(
    SWAP,
    {
      sender: ROUTER,
      recipient: ROUTER,
      amount0: -5_000_000_000n,
      amount1: 10n ** 18n,
      sqrtPriceX96,
      liquidity,
      tick,
    },
    address,
  );

const at = { blockNumber: 19_000_000, logIndex: 7 };

describe("pool event topics", () => {
  test("are the selectors of the declared events", () => {
    assert.equal(SYNC_TOPIC, toEventSelector(SYNC));
    assert.equal(INITIALIZE_TOPIC, toEventSelector(INITIALIZE));
    assert.equal(SWAP_TOPIC, toEventSelector(SWAP));
    assert.deepEqual(POOL_TOPICS, [SYNC_TOPIC, INITIALIZE_TOPIC, SWAP_TOPIC]);
  });
});

describe("decodePoolLog", () => {
  test("the test's widened encoding is the events' own for values in range", () => {
    const args = { sender: ROUTER, recipient: ROUTER, amount0: -5n, amount1: 7n, sqrtPriceX96: SQRT_PRICE };
    const own = encodeAbiParameters(SWAP.inputs.slice(2), [
      args.amount0,
      args.amount1,
      args.sqrtPriceX96,
      10n ** 18n,
      -818_000,
    ]);
    assert.equal(swap(SQRT_PRICE, -818_000).data.length, own.length);
    assert.equal(event(SWAP, { ...args, liquidity: 10n ** 18n, tick: -818_000 }, V3_POOL).data, own);
  });

  test("Sync gives a V2 pool's reserves", () => {
    const reserve0 = 40_123_456_789_012n; // 40.1 M USDC
    const reserve1 = 14_510_000_000_000_000_000_000n; // 14 510 WETH
    assert.deepEqual(decodePoolLog(sync(reserve0, reserve1)), { pool: V2_POOL, ...at, reserve0, reserve1 });
    const max = (1n << 112n) - 1n;
    assert.deepEqual(decodePoolLog(sync(0n, max)), { pool: V2_POOL, ...at, reserve0: 0n, reserve1: max });
  });

  test("Initialize and Swap give a V3 pool's price and in-range liquidity, whatever the signs of the amounts and tick", () => {
    const init = event(INITIALIZE, { sqrtPriceX96: SQRT_PRICE, tick: 193_361 }, V3_POOL);
    // Nothing is in range when a pool is initialised: its first positions are minted after.
    assert.deepEqual(decodePoolLog(init), { pool: V3_POOL, ...at, sqrtPriceX96: SQRT_PRICE, liquidity: 0n });
    assert.deepEqual(decodePoolLog(swap(SQRT_PRICE, 193_361)), {
      pool: V3_POOL,
      ...at,
      sqrtPriceX96: SQRT_PRICE,
      liquidity: 10n ** 18n,
    });
    // A price below 1 has a negative tick, sign-extended over the whole word.
    const low = 4_295_128_739n * 1000n;
    assert.deepEqual(decodePoolLog(swap(low, -818_000, 7n)), {
      pool: V3_POOL,
      ...at,
      sqrtPriceX96: low,
      liquidity: 7n,
    });
  });

  test("other events give nothing", () => {
    const transfer = log(
      V2_POOL,
      [toEventSelector("Transfer(address,address,uint256)")],
      `0x${"00".repeat(32)}`,
    );
    assert.equal(decodePoolLog(transfer), undefined);
    assert.equal(decodePoolLog(log(V2_POOL, [], "0x")), undefined);
  });

  test("logs no Uniswap pool could have emitted give nothing", () => {
    const good = sync(1n, 2n);
    const cases: [string, ChainLog][] = [
      ["Sync with an indexed topic", { ...good, topics: [...good.topics, `0x${"00".repeat(32)}`] }],
      ["Sync one word short", { ...good, data: good.data.slice(0, -64) as Hex }],
      ["Sync with a word more", { ...good, data: `${good.data}${"00".repeat(32)}` }],
      ["Sync with a non-hex digit", { ...good, data: `${good.data.slice(0, -1)}z` as Hex }],
      ["Sync past uint112", sync(1n << 112n, 1n)],
      ["Swap without its indexed addresses", { ...swap(SQRT_PRICE, 1), topics: [SWAP_TOPIC] }],
      ["Swap below the lowest price", swap(4_295_128_738n, -887_272)],
      ["Swap above the highest price", swap(1461446703485210103287273052203988822378723970343n, 887_272)],
      ["Swap past uint128 liquidity", swap(SQRT_PRICE, 1, 1n << 128n)],
      ["Initialize with a zero price", event(INITIALIZE, { sqrtPriceX96: 0n, tick: 0 }, V3_POOL)],
    ];
    for (const [name, bad] of cases) assert.equal(decodePoolLog(bad), undefined, name);

    // A tick word that is not an int24 sign-extended to 256 bits.
    const init = event(INITIALIZE, { sqrtPriceX96: SQRT_PRICE, tick: 1 }, V3_POOL);
    const badTick = `${init.data.slice(0, 66)}${"0".repeat(32)}${"f".repeat(32)}` as Hex;
    assert.equal(decodePoolLog({ ...init, data: badTick }), undefined);
    const tooFar = `${init.data.slice(0, 66)}${(887_273).toString(16).padStart(64, "0")}` as Hex;
    assert.equal(decodePoolLog({ ...init, data: tooFar }), undefined);
  });
});

describe("decodePoolLogs", () => {
  const pools: PoolDescription[] = [
    {
      address: V2_POOL,
      kind: "v2",
      token0: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
      token1: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
      decimals0: 6,
      decimals1: 18,
    },
    {
      address: V3_POOL,
      kind: "v3",
      token0: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
      token1: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
      decimals0: 6,
      decimals1: 18,
    },
  ];

  test("keeps the followed pools' price events, in order, and sets aside the unreadable ones", () => {
    const other: Address = "0x1111111111111111111111111111111111111111";
    const bad = { ...sync(1n << 112n, 1n), logIndex: 4 };
    const logs = [
      { ...sync(5n, 6n), logIndex: 1 },
      { ...swap(SQRT_PRICE, 193_361), logIndex: 2 },
      { ...sync(7n, 8n, other), logIndex: 3 }, // a pool not followed
      bad,
      { ...sync(9n, 10n, V3_POOL), logIndex: 5 }, // a V2 event from a V3 pool
      {
        ...swap(SQRT_PRICE + 1n, 193_361),
        address: V3_POOL.toUpperCase().replace("0X", "0x") as Address,
        logIndex: 6,
      },
    ];
    const { states, malformed } = decodePoolLogs(logs, pools);
    assert.deepEqual(states, [
      { pool: V2_POOL, blockNumber: 19_000_000, logIndex: 1, reserve0: 5n, reserve1: 6n },
      {
        pool: V3_POOL,
        blockNumber: 19_000_000,
        logIndex: 2,
        sqrtPriceX96: SQRT_PRICE,
        liquidity: 10n ** 18n,
      },
      {
        pool: V3_POOL,
        blockNumber: 19_000_000,
        logIndex: 6,
        sqrtPriceX96: SQRT_PRICE + 1n,
        liquidity: 10n ** 18n,
      },
    ]);
    assert.deepEqual(malformed, [bad]);
  });
});
