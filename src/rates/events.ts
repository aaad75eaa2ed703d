import type { Address, Hex } from "../core/hex.ts";
import type { ChainLog, PoolState } from "../core/types.ts";
import type { PoolDescription, PoolKind } from "./pools.ts";

/**
 * Topic0 of the pool events rates are read from, spelled out so that decoding needs no hashing
 * library; a test recomputes each one.
 */

/** Uniswap V2 `Sync(uint112 reserve0, uint112 reserve1)`: the reserves after every change. */
export const SYNC_TOPIC: Hex = "0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1";

/** Uniswap V3 `Initialize(uint160 sqrtPriceX96, int24 tick)`: the first price of a pool. */
export const INITIALIZE_TOPIC: Hex = "0x98636036cb66a9c19a37435efc1e90142190214e8abeb821bdba3f2990dd4c95";

/** Uniswap V3 `Swap(address indexed, address indexed, int256, int256, uint160, uint128, int24)`. */
export const SWAP_TOPIC: Hex = "0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67";

/** What eth_getLogs must be asked for, with the pools' addresses, to follow their prices. */
export const POOL_TOPICS: readonly Hex[] = [SYNC_TOPIC, INITIALIZE_TOPIC, SWAP_TOPIC];

export type { PoolState };

// The bounds of TickMath: a V3 pool's price never leaves them, so a value outside is not a pool's.
const MIN_SQRT_RATIO = 4295128739n;
const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;
const MAX_TICK = 887272n;
const UINT112_LIMIT = 1n << 112n;
const UINT128_LIMIT = 1n << 128n;
const WORD_LIMIT = 1n << 256n;

const WORD_HEX = 64;
const HEX_DATA = /^0x[0-9a-fA-F]*$/;

function words(data: string, count: number): bigint[] | undefined {
  if (data.length !== 2 + WORD_HEX * count || !HEX_DATA.test(data)) return undefined;
  const out: bigint[] = [];
  for (let i = 0; i < count; i++) {
    out.push(BigInt(`0x${data.slice(2 + i * WORD_HEX, 2 + (i + 1) * WORD_HEX)}`));
  }
  return out;
}

/** An int24 word is sign-extended to 256 bits; anything else was not written by the ABI encoder. */
function isTick(word: bigint): boolean {
  const tick = word >= WORD_LIMIT / 2n ? word - WORD_LIMIT : word;
  return tick >= -MAX_TICK && tick <= MAX_TICK;
}

function isSqrtPrice(value: bigint): boolean {
  return value >= MIN_SQRT_RATIO && value <= MAX_SQRT_RATIO;
}

/** The kind of pool a log's event belongs to, or undefined when it is no price event. */
export function poolEventKind(log: ChainLog): PoolKind | undefined {
  const topic = log.topics[0]?.toLowerCase();
  if (topic === SYNC_TOPIC) return "v2";
  if (topic === INITIALIZE_TOPIC || topic === SWAP_TOPIC) return "v3";
  return undefined;
}

/**
 * The state a price event leaves its pool in; undefined for any other log and for one whose
 * layout or values no Uniswap pool could have emitted (a look-alike event of another contract).
 */
export function decodePoolLog(log: ChainLog): PoolState | undefined {
  const topic = log.topics[0]?.toLowerCase();
  const at = { pool: log.address, blockNumber: log.blockNumber, logIndex: log.logIndex };
  if (topic === SYNC_TOPIC) {
    const w = log.topics.length === 1 ? words(log.data, 2) : undefined;
    const [reserve0, reserve1] = w ?? [];
    if (reserve0 === undefined || reserve1 === undefined) return undefined;
    if (reserve0 >= UINT112_LIMIT || reserve1 >= UINT112_LIMIT) return undefined;
    return { ...at, reserve0, reserve1 };
  }
  if (topic === INITIALIZE_TOPIC) {
    const w = log.topics.length === 1 ? words(log.data, 2) : undefined;
    const [sqrtPriceX96, tick] = w ?? [];
    if (sqrtPriceX96 === undefined || tick === undefined) return undefined;
    if (!isSqrtPrice(sqrtPriceX96) || !isTick(tick)) return undefined;
    // A pool is initialised before any position is minted in it: nothing is in range yet.
    return { ...at, sqrtPriceX96, liquidity: 0n };
  }
  if (topic === SWAP_TOPIC) {
    // sender and recipient are indexed; amount0, amount1, sqrtPriceX96, liquidity, tick are data.
    const w = log.topics.length === 3 ? words(log.data, 5) : undefined;
    const [, , sqrtPriceX96, liquidity, tick] = w ?? [];
    if (sqrtPriceX96 === undefined || liquidity === undefined || tick === undefined) return undefined;
    if (!isSqrtPrice(sqrtPriceX96) || liquidity >= UINT128_LIMIT || !isTick(tick)) return undefined;
    return { ...at, sqrtPriceX96, liquidity };
  }
  return undefined;
}

export interface DecodedPoolLogs {
  /** In the logs' order, which must be the chain's. */
  states: PoolState[];
  /** Price events of the pools that could not be read. */
  malformed: ChainLog[];
}

/**
 * The states of the given pools from a batch of logs. Logs of other contracts, other events of
 * the pools (mints, burns, LP token transfers) and events of the other pool kind are left out.
 */
export function decodePoolLogs(
  logs: readonly ChainLog[],
  pools: readonly PoolDescription[],
): DecodedPoolLogs {
  const kinds = new Map<string, PoolKind>(pools.map((p) => [p.address, p.kind]));
  const states: PoolState[] = [];
  const malformed: ChainLog[] = [];
  for (const log of logs) {
    const kind = kinds.get(log.address.toLowerCase());
    if (kind === undefined || poolEventKind(log) !== kind) continue;
    const state = decodePoolLog(log);
    if (state) states.push({ ...state, pool: log.address.toLowerCase() as Address });
    else malformed.push(log);
  }
  return { states, malformed };
}
