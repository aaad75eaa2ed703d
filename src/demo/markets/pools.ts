/**
 * Swaps in the Uniswap V2 pairs, so the dollar's and DEMO's rates drift over the months and the
 * indexer's prices with them.
 */
import type { TxRequest } from "../block-builder.ts";
import { callTx, GAS } from "../contracts.ts";
import type { PlanContext } from "../plan/context.ts";
import type { PoolModel } from "../world.ts";

export function createPoolPlanner({ world, prng, counts }: PlanContext) {
  /**
   * A trader (the deployer) swaps 0.2% to 3% of one side of a pair through its low-level `swap`:
   * the tokens in first, then the amount out that Uniswap V2's formula (0.3% fee) allows.
   */
  function swap(): TxRequest[] | undefined {
    const trading = world.trading;
    if (!trading || trading.pools.length === 0) return undefined;
    const pool = prng.pick(trading.pools);
    const zeroForOne = prng.chance(0.5);
    const reserveIn = zeroForOne ? pool.reserve0 : pool.reserve1;
    const amountIn = (reserveIn * BigInt(prng.int(20, 300))) / 10_000n;
    const amountOut = swapOutput(pool, zeroForOne, amountIn);
    if (amountOut <= 0n) return undefined;
    if (zeroForOne) {
      pool.reserve0 += amountIn;
      pool.reserve1 -= amountOut;
    } else {
      pool.reserve1 += amountIn;
      pool.reserve0 -= amountOut;
    }
    counts.poolSwaps++;
    const trader = world.deployer;
    const tokenIn = zeroForOne ? pool.token0 : pool.token1;
    return [
      callTx(trader, tokenIn, "TestERC20", "transfer", [pool.contract.address, amountIn], GAS.erc20Transfer),
      callTx(
        trader,
        pool.contract.address,
        "UniswapV2Pair",
        "swap",
        [zeroForOne ? 0n : amountOut, zeroForOne ? amountOut : 0n, trader, "0x"],
        GAS.poolSwap,
      ),
    ];
  }

  return { swap };
}

/** Uniswap V2's getAmountOut: what `amountIn` buys after the 0.3% fee. */
function swapOutput(pool: PoolModel, zeroForOne: boolean, amountIn: bigint): bigint {
  const [reserveIn, reserveOut] = zeroForOne
    ? [pool.reserve0, pool.reserve1]
    : [pool.reserve1, pool.reserve0];
  const withFee = amountIn * 997n;
  return (withFee * reserveOut) / (reserveIn * 1000n + withFee);
}
