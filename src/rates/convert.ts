import type { Address } from "../core/hex.ts";
import type { PriceContext } from "../core/types.ts";
import type { PoolState } from "./events.ts";
import type { PoolDescription, UsdToken } from "./pools.ts";
import { invert, median, multiply, ONE, type Rate, ratio } from "./rational.ts";

/**
 * Base units of token1 per base unit of token0 in a V2 pool: reserve1 / reserve0. Undefined for
 * an empty side, where the pool has no price.
 */
export function v2Price0In1(reserve0: bigint, reserve1: bigint): Rate | undefined {
  return reserve0 > 0n && reserve1 > 0n ? ratio(reserve1, reserve0) : undefined;
}

const Q192 = 1n << 192n;

/** Base units of token1 per base unit of token0 in a V3 pool: sqrtPriceX96² / 2^192, exactly. */
export function v3Price0In1(sqrtPriceX96: bigint): Rate | undefined {
  return sqrtPriceX96 > 0n ? ratio(sqrtPriceX96 * sqrtPriceX96, Q192) : undefined;
}

/** A pool's price of token0 in token1 base units from its state, undefined when it has none. */
export function price0In1(pool: PoolDescription, state: PoolState): Rate | undefined {
  if (pool.kind === "v2") {
    return state.reserve0 === undefined || state.reserve1 === undefined
      ? undefined
      : v2Price0In1(state.reserve0, state.reserve1);
  }
  return state.sqrtPriceX96 === undefined ? undefined : v3Price0In1(state.sqrtPriceX96);
}

export type { PriceContext };

/** The prices at each block, as the indexer asks for them. */
export type RatesAt = (blockNumber: number) => PriceContext;

export interface RateBookConfig {
  /** Tokens worth exactly one native coin, the wrapped coin first: counted 1:1, and what pools are read against. */
  nativePegged: readonly Address[];
  pools: readonly PoolDescription[];
  usdTokens: readonly UsdToken[];
}

type Book = ReadonlyMap<Address, PoolState>;

/**
 * Every pool's last state, fed in chain order, and the prices they give.
 *
 * - An ERC-20 is worth, in wei, the median of what its pools against a native-pegged token say.
 *   A token with no such pool is priced through one of its pools against a token that has one
 *   (WETH on Polygon through USDC.e/WETH and WPOL/USDC.e), again the median over such pools.
 *   Neither the most recent nor the deepest pool is chosen: the most recent one is whichever a
 *   trader last moved, perhaps a thin pool pushed off the market in the same transaction, and
 *   depth cannot be told the same way for every pool (a V3 pool's in-range liquidity is not kept
 *   in pool_states), while a choice made from stored rows alone gives the same rate after a
 *   restart as before it. The median of several deep pools needs most of them moved at once.
 * - USD per wei is the median over the pools of a native-pegged token against a stablecoin,
 *   each stablecoin counted as one dollar.
 * - Native-pegged tokens count 1:1; a token without a pool has no rate (the sale is unpriced).
 *
 * Every rate is derived from at most two pool states, never carried from one rate to the next,
 * so its size is bounded by that of the states (about 2^700 at worst), and it is kept reduced.
 */
export class RateBook {
  private readonly pegged: ReadonlySet<Address>;
  private readonly pools: ReadonlyMap<Address, PoolDescription>;
  private readonly usd: ReadonlyMap<Address, UsdToken>;
  private states = new Map<Address, PoolState>();
  private last: Position | undefined;
  private context: PriceContext | undefined;

  /** `latest`: the last stored state of each pool at or before the block the book resumes from. */
  constructor(config: RateBookConfig, latest: Iterable<PoolState> = []) {
    this.pegged = new Set(config.nativePegged.map(lower));
    this.pools = new Map(config.pools.map((p) => [lower(p.address), p]));
    this.usd = new Map(config.usdTokens.map((t) => [lower(t.address), t]));
    for (const state of latest) {
      const pool = lower(state.pool);
      if (!this.pools.has(pool)) continue;
      const held = this.states.get(pool);
      if (held === undefined || isAfter(state, held)) this.states.set(pool, { ...state, pool });
      if (this.last === undefined || isAfter(state, this.last)) {
        this.last = { blockNumber: state.blockNumber, logIndex: state.logIndex };
      }
    }
  }

  /**
   * Takes a pool's new state. States must come in chain order: one at or before the last taken
   * is refused with a RangeError, since taking it would put an older price over a newer one.
   * A state of a pool the book does not follow is ignored; returns whether it was taken.
   */
  apply(state: PoolState): boolean {
    const pool = lower(state.pool);
    if (!this.pools.has(pool)) return false;
    if (this.last !== undefined && !isAfter(state, this.last)) {
      throw new RangeError(
        `pool state at ${state.blockNumber}:${state.logIndex} is not after ${this.last.blockNumber}:${this.last.logIndex}`,
      );
    }
    this.states.set(pool, { ...state, pool });
    this.last = { blockNumber: state.blockNumber, logIndex: state.logIndex };
    this.context = undefined;
    return true;
  }

  /** The prices after every state taken so far. */
  current(): PriceContext {
    this.context ??= this.contextOf(this.states);
    return this.context;
  }

  /**
   * Takes a batch's states, in chain order, and answers the prices at each block: those after the
   * block's last pool log, as a sale read from the stored rows "at or before its block" would get.
   * A block before the batch's first state gets the prices the batch started from. A batch out
   * of order is refused with a RangeError before any of it is taken.
   */
  advance(states: readonly PoolState[]): RatesAt {
    let previous = this.last;
    for (const state of states) {
      if (!this.pools.has(lower(state.pool))) continue;
      if (previous !== undefined && !isAfter(state, previous)) {
        throw new RangeError(`pool states out of chain order at ${state.blockNumber}:${state.logIndex}`);
      }
      previous = state;
    }
    const start = this.current();
    const blocks: number[] = [];
    const books: Book[] = [];
    for (const state of states) {
      if (!this.apply(state)) continue;
      if (blocks[blocks.length - 1] === state.blockNumber) books[books.length - 1] = new Map(this.states);
      else {
        blocks.push(state.blockNumber);
        books.push(new Map(this.states));
      }
    }
    const contexts: (PriceContext | undefined)[] = books.map(() => undefined);
    return (blockNumber) => {
      const i = lastAtOrBefore(blocks, blockNumber);
      if (i < 0) return start;
      contexts[i] ??= this.contextOf(books[i] as Book);
      return contexts[i] as PriceContext;
    };
  }

  /** The last state of every pool that has one: what a restart resumes from. */
  snapshot(): PoolState[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }

  private contextOf(book: Book): PriceContext {
    const direct = new Map<Address, Rate[]>();
    const viaToken: { token: Address; through: Address; rate: Rate }[] = [];
    const usd: Rate[] = [];
    for (const [address, state] of book) {
      const pool = this.pools.get(address) as PoolDescription;
      const p01 = price0In1(pool, state);
      const p10 = p01 && invert(p01);
      if (!p01 || !p10) continue;
      const sides = [
        { token: lower(pool.token0), other: lower(pool.token1), rate: p01 },
        { token: lower(pool.token1), other: lower(pool.token0), rate: p10 },
      ];
      for (const { token, other, rate } of sides) {
        if (this.pegged.has(token)) {
          const dollar = this.usd.get(other);
          // rate: base units of the stablecoin per wei; a whole coin is one dollar.
          if (dollar) usd.push(ratio(rate.num, rate.den * 10n ** BigInt(dollar.decimals)));
        } else if (this.pegged.has(other)) push(direct, token, rate);
        else viaToken.push({ token, through: other, rate });
      }
    }
    const rates = new Map<Address, Rate>();
    for (const [token, candidates] of direct) rates.set(token, median(candidates) as Rate);
    const indirect = new Map<Address, Rate[]>();
    for (const { token, through, rate } of viaToken) {
      const onward = rates.get(through);
      if (!rates.has(token) && onward) push(indirect, token, multiply(rate, onward));
    }
    for (const [token, candidates] of indirect) rates.set(token, median(candidates) as Rate);
    const pegged = this.pegged;
    return Object.freeze({
      toNative: (token: Address) => {
        const key = lower(token);
        return pegged.has(key) ? ONE : rates.get(key);
      },
      usdPerWei: median(usd),
    });
  }
}

function lower(address: Address): Address {
  return address.toLowerCase() as Address;
}

interface Position {
  blockNumber: number;
  logIndex: number;
}

function isAfter(a: Position, b: Position): boolean {
  return a.blockNumber > b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex > b.logIndex);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The index of the last entry at or before `value` in an ascending list, -1 when there is none. */
function lastAtOrBefore(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
