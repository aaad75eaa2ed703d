import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeAbiParameters, encodePacked, getContractAddress, type Hex, keccak256 } from "viem";
import { CHAIN_PRESETS } from "../../src/config/chains.ts";
import { DEFAULT_POOLS, defaultNativePegged, defaultPools, USD_TOKENS } from "../../src/rates/pools.ts";

// Uniswap deploys every pool with CREATE2 from its factory, salted with the sorted tokens (and
// the fee for V3): an address derived here proves both the address and the token order.
const V3_FACTORY = "0x1F98431c8aD98523631AE4a59f267346ea31F984"; // the same on Ethereum, Polygon, Optimism
const V3_INIT_CODE_HASH = "0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54";
const V2_FACTORY = "0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f";
const V2_INIT_CODE_HASH = "0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f";
const V3_FEES = [100, 500, 3000, 10000];

function v3Address(token0: Hex, token1: Hex, fee: number): string {
  const salt = keccak256(
    encodeAbiParameters(
      [{ type: "address" }, { type: "address" }, { type: "uint24" }],
      [token0, token1, fee],
    ),
  );
  return getContractAddress({ opcode: "CREATE2", from: V3_FACTORY, salt, bytecodeHash: V3_INIT_CODE_HASH });
}

function v2Address(token0: Hex, token1: Hex): string {
  const salt = keccak256(encodePacked(["address", "address"], [token0, token1]));
  return getContractAddress({ opcode: "CREATE2", from: V2_FACTORY, salt, bytecodeHash: V2_INIT_CODE_HASH });
}

const KNOWN_DECIMALS: Record<string, number> = {
  "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48": 6, // USDC
  "0xdac17f958d2ee523a2206206994597c13d831ec7": 6, // USDT
  "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599": 8, // WBTC
  "0x2791bca1f2de4661ed88a30c99a7a9449aa84174": 6, // USDC.e on Polygon
  "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359": 6, // USDC on Polygon
  "0xc2132d05d31c914a87c6611c10748aeb04b58e8f": 6, // USDT on Polygon
  "0x7f5c764cbc14f9669b88837ca1490cca17c31607": 6, // USDC.e on Optimism
  "0x0b2c639c533813f4aa9d7837caf62653d097ff85": 6, // USDC on Optimism
  "0x94b008aa00579c1307b0ef2c499ad98a8ce58e58": 6, // USDT on Optimism
};

describe("default pools", () => {
  for (const [chainId, pools] of Object.entries(DEFAULT_POOLS)) {
    test(`chain ${chainId}: each pool is Uniswap's for its tokens, in its order`, () => {
      for (const pool of pools) {
        assert.match(pool.address, /^0x[0-9a-f]{40}$/);
        assert.ok(pool.token0 < pool.token1, `${pool.address}: token0 must sort before token1`);
        const derived =
          pool.kind === "v2"
            ? [v2Address(pool.token0, pool.token1)]
            : V3_FEES.map((fee) => v3Address(pool.token0, pool.token1, fee));
        assert.ok(
          derived.some((a) => a.toLowerCase() === pool.address),
          `${pool.address} is not the ${pool.kind} pool of ${pool.token0}/${pool.token1}`,
        );
        for (const [token, decimals] of [
          [pool.token0, pool.decimals0],
          [pool.token1, pool.decimals1],
        ] as const) {
          assert.equal(decimals, KNOWN_DECIMALS[token] ?? 18, `decimals of ${token}`);
        }
      }
      assert.equal(new Set(pools.map((p) => p.address)).size, pools.length, "no pool twice");
    });
  }

  test("every preset chain prices its wrapped coin in dollars", () => {
    for (const preset of Object.values(CHAIN_PRESETS)) {
      const wrapped = defaultNativePegged(preset.chainId)[0] as string;
      const pools = defaultPools(preset.chainId);
      const dollars = (USD_TOKENS[preset.chainId] ?? []).map((t) => t.address as string);
      const usdPools = pools.filter(
        (p) =>
          (p.token0 === wrapped && dollars.includes(p.token1)) ||
          (p.token1 === wrapped && dollars.includes(p.token0)),
      );
      assert.ok(usdPools.length >= 3, `${preset.name}: ${usdPools.length} pools of the wrapped coin in USD`);
    }
  });

  test("no preset token hangs on one pool: each has three routes, direct or through a token with a direct pool", () => {
    for (const [chainId, pools] of Object.entries(DEFAULT_POOLS)) {
      const pegged = new Set<string>(defaultNativePegged(Number(chainId)));
      const sides = pools.flatMap((p) => [
        { token: p.token0 as string, other: p.token1 as string },
        { token: p.token1 as string, other: p.token0 as string },
      ]);
      const direct = (token: string) => sides.filter((s) => s.token === token && pegged.has(s.other)).length;
      for (const token of new Set(sides.map((s) => s.token).filter((t) => !pegged.has(t)))) {
        const routes =
          direct(token) >= 3
            ? direct(token)
            : direct(token) +
              sides.filter((s) => s.token === token && !pegged.has(s.other) && direct(s.other) > 0).length;
        assert.ok(routes >= 3, `chain ${chainId}: ${token} has ${routes} routes`);
      }
    }
  });

  test("stablecoins carry their decimals, and an unknown chain has no pools", () => {
    for (const tokens of Object.values(USD_TOKENS)) {
      for (const token of tokens) assert.equal(token.decimals, KNOWN_DECIMALS[token.address] ?? 18);
    }
    assert.deepEqual(defaultPools(31337), []);
  });
});
