import type { Address } from "../core/hex.ts";
import type { PriceContext } from "../core/types.ts";
import { sideDepth } from "./depth.ts";
import type { PoolState } from "./events.ts";
import type { PoolDescription, UsdToken } from "./pools.ts";
import { divide, invert, median, ONE, type Rate, ratio } from "./rational.ts";
import { type Quote, routeRates } from "./routes.ts";
import { countUpTo, GRID, type PriceOf, PriceSeries, type TimeWindow, timeWeighted } from "./twap.ts";

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

/** Seconds a rate is averaged over unless configured: long next to a block, short next to a market's day. */
export const DEFAULT_RATE_WINDOW_SECONDS = 30 * 60;

/** How far a rate may move from the window before it, either way, before it is an outlier: 2×. */
export const DEFAULT_RATE_JUMP: Rate = Object.freeze({ num: 2n, den: 1n });

export interface RateBookConfig {
  /** Tokens worth exactly one native coin, the wrapped coin first: counted 1:1, and what pools are read against. */
  nativePegged: readonly Address[];
  pools: readonly PoolDescription[];
  usdTokens: readonly UsdToken[];
  /** Seconds each pool's price is averaged over, ending at the block priced (0: the block's last state). */
  windowSeconds?: number;
  /** Least depth, in wei, a pool state must have to count (see `depth.ts`); 0 counts every state. */
  minDepth?: bigint;
  /** A token's rate beyond this factor of its rate over the window before is an outlier (> 1). */
  jump?: Rate;
}

type History = readonly PoolState[];
type Histories = ReadonlyMap<Address, History>;

interface Rates {
  rates: Map<Address, Rate>;
  usd: Rate | undefined;
}

/**
 * Every pool's recent states, fed in chain order, and the prices they give at each block.
 *
 * - Each pool's price is its time-weighted mean over the window ending at the block priced
 *   (`twap.ts`): a price left pushed at the end of a block weighs nothing in that block, and only
 *   the seconds it lasted afterwards. States shallower than the floor (`depth.ts`, valued in wei)
 *   are left out of the mean: a V3 pool pushed past its in-range liquidity has none.
 * - An ERC-20 is worth, in wei, the median of what its pools against a native-pegged token say;
 *   with fewer than three such pools, the median over every route, through one intermediate token
 *   that has a rate of its own included (`routes.ts`). Neither the most recent nor the deepest
 *   pool is chosen: a choice made from stored rows alone gives the same rate after a restart as
 *   before it, and the median of several pools needs most of them moved at once.
 * - USD per wei is the median over the pools of a native-pegged token against a stablecoin,
 *   each stablecoin counted as one dollar.
 * - Native-pegged tokens count 1:1; a token without a pool has no rate (the sale is unpriced).
 * - A token's rate more than the jump bound above or below its rate over the window before (both
 *   taken the same way) is an outlier; sales paid with it are flagged, not repriced.
 *
 * The book holds each pool's states over two windows and the one in force before them: what the
 * rate and its reference need. Its size follows the window, not the chain's length.
 */
export class RateBook {
  private readonly pegged: ReadonlySet<Address>;
  private readonly pools: ReadonlyMap<Address, PoolDescription>;
  private readonly usd: ReadonlyMap<Address, UsdToken>;
  private readonly window: number;
  private readonly minDepth: bigint;
  private readonly jump: Rate;
  private histories: Histories = new Map();
  /** Each pool's price sources, per side, and the series of each history a block was priced from. */
  private readonly prices = new Map<Address, [PriceOf, PriceOf]>();
  private readonly depths = new WeakMap<PoolState, [bigint | undefined, bigint | undefined]>();
  private readonly seriesPairs = new WeakMap<History, [PriceSeries | undefined, PriceSeries | undefined]>();
  private last: Position | undefined;
  private lastTime: number | undefined;
  private context: PriceContext | undefined;

  /** `recent`: stored states of the pools at or before the block the book resumes from, in any order. */
  constructor(config: RateBookConfig, recent: Iterable<PoolState> = []) {
    this.pegged = new Set(config.nativePegged.map(lower));
    this.pools = new Map(config.pools.map((p) => [lower(p.address), p]));
    this.usd = new Map(config.usdTokens.map((t) => [lower(t.address), t]));
    this.window = config.windowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS;
    this.minDepth = config.minDepth ?? 0n;
    this.jump = config.jump ?? DEFAULT_RATE_JUMP;
    const taken = [...recent]
      .filter((s) => this.pools.has(lower(s.pool)))
      .map((s) => ({ ...s, pool: lower(s.pool) }))
      .sort(chainOrder);
    if (taken.length > 0) this.take(taken);
  }

  /**
   * Takes a pool's new state. States must come in chain order: one at or before the last taken
   * is refused with a RangeError, since taking it would put an older price over a newer one.
   * A state of a pool the book does not follow is ignored; returns whether it was taken.
   */
  apply(state: PoolState): boolean {
    if (!this.pools.has(lower(state.pool))) return false;
    this.advance([state]);
    return true;
  }

  /** The prices after every state taken so far, at the time of the last one. */
  current(): PriceContext {
    this.context ??= this.contextAt(this.histories, this.last?.blockNumber ?? 0, this.lastTime);
    return this.context;
  }

  /**
   * Takes a batch's states, in chain order, and answers the prices at each block, read from the
   * states at or before it, at the block's time (`timeOf`; without it, at the block's last state).
   * A batch out of order is refused with a RangeError before any of it is taken.
   */
  advance(states: readonly PoolState[], timeOf?: (blockNumber: number) => number): RatesAt {
    const taken: PoolState[] = [];
    let previous = this.last;
    for (const state of states) {
      const pool = lower(state.pool);
      if (!this.pools.has(pool)) continue;
      if (previous !== undefined && !isAfter(state, previous)) {
        throw new RangeError(
          `pool state at ${state.blockNumber}:${state.logIndex} is not after ${previous.blockNumber}:${previous.logIndex}`,
        );
      }
      previous = state;
      taken.push({ ...state, pool });
    }
    const view = taken.length > 0 ? this.take(taken) : this.histories;
    const contexts = new Map<number, PriceContext>();
    return (blockNumber) => {
      let context = contexts.get(blockNumber);
      if (!context) {
        context = this.contextAt(view, blockNumber, timeOf?.(blockNumber));
        contexts.set(blockNumber, context);
      }
      return context;
    };
  }

  /** The states the book holds: what a restart must read back to price as this book does. */
  snapshot(): PoolState[] {
    return [...this.histories.values()].flatMap((h) => h.map((s) => ({ ...s })));
  }

  /**
   * Appends states (chain order, followed pools, lower-case) and keeps what later blocks can
   * need. Returns the histories with every appended state, before anything is dropped: the view
   * the batch's own blocks are priced from. Arrays are replaced, never changed, so a view handed
   * out earlier stays as it was.
   */
  private take(states: readonly PoolState[]): Histories {
    const added = new Map<Address, PoolState[]>();
    for (const state of states) {
      const list = added.get(state.pool);
      // Prices are read per block: a later state of the same block replaces the earlier one.
      if (list && list[list.length - 1]?.blockNumber === state.blockNumber) list[list.length - 1] = state;
      else if (list) list.push(state);
      else added.set(state.pool, [state]);
      if (state.blockTime !== undefined) this.lastTime = Math.max(this.lastTime ?? 0, state.blockTime);
    }
    const last = states[states.length - 1] as PoolState;
    this.last = { blockNumber: last.blockNumber, logIndex: last.logIndex };
    this.context = undefined;
    const view = new Map(this.histories);
    for (const [pool, list] of added) {
      const held = view.get(pool) ?? [];
      const first = list[0] as PoolState;
      const joined =
        held[held.length - 1]?.blockNumber === first.blockNumber
          ? [...held.slice(0, -1), ...list]
          : [...held, ...list];
      view.set(pool, joined);
    }
    const kept = new Map<Address, History>();
    const since = this.lastTime === undefined ? undefined : this.lastTime - 2 * this.window;
    for (const [pool, history] of view) kept.set(pool, keepSince(history, since));
    this.histories = kept;
    return view;
  }

  private contextAt(view: Histories, block: number, time: number | undefined): PriceContext {
    const now = this.ratesAt(
      view,
      block,
      time === undefined ? undefined : { from: time - this.window, to: time },
    );
    const rates = now.rates;
    const pegged = this.pegged;
    let outliers: Set<Address> | undefined;
    if (time !== undefined && this.window > 0) {
      const before = this.ratesAt(
        view,
        block,
        { from: time - 2 * this.window, to: time - this.window },
        false,
      );
      outliers = new Set();
      for (const [token, rate] of rates) {
        const reference = before.rates.get(token);
        if (reference && beyond(rate, reference, this.jump)) outliers.add(token);
      }
    }
    const flagged = outliers;
    return Object.freeze({
      toNative: (token: Address) => {
        const key = lower(token);
        return pegged.has(key) ? ONE : rates.get(key);
      },
      usdPerWei: now.usd,
      ...(flagged ? { isOutlier: (token: Address) => flagged.has(lower(token)) } : {}),
    });
  }

  /** Every token's rate and the USD rate at `block`, each pool averaged over `window`. */
  private ratesAt(view: Histories, block: number, window: TimeWindow | undefined, spot = true): Rates {
    const direct = new Map<Address, Rate[]>();
    const usd: Rate[] = [];
    const unpegged: { pool: PoolDescription; history: History; end: number }[] = [];
    for (const [address, history] of view) {
      const end = countUpTo(history, block);
      if (end === 0) continue;
      const pool = this.pools.get(address) as PoolDescription;
      const t0 = lower(pool.token0);
      const t1 = lower(pool.token1);
      const pegged0 = this.pegged.has(t0);
      const pegged1 = this.pegged.has(t1);
      if (!pegged0 && !pegged1) {
        unpegged.push({ pool, history, end });
        continue;
      }
      if (pegged0 && pegged1) continue;
      const peggedSide = pegged0 ? 0 : 1;
      const token = pegged0 ? t1 : t0;
      // What the pool says of the token, in wei, and of the pegged token in the token's units.
      const tokenRate = this.seriesOf(pool, history, 1 - peggedSide).mean(end, window, spot);
      if (tokenRate) push(direct, token, tokenRate);
      const dollar = this.usd.get(token);
      if (dollar) {
        const perWei = this.seriesOf(pool, history, peggedSide).mean(end, window, spot);
        // Base units of the stablecoin per wei; a whole coin is one dollar.
        if (perWei) usd.push(divide(perWei, 10n ** BigInt(dollar.decimals)));
      }
    }
    const quotes: Quote[] = [];
    if (unpegged.length > 0) {
      const directRates = new Map<Address, Rate>();
      for (const [token, rates] of direct) directRates.set(token, median(rates) as Rate);
      for (const { pool, history, end } of unpegged) {
        const t0 = lower(pool.token0);
        const t1 = lower(pool.token1);
        const rate0 = directRates.get(t0);
        const rate1 = directRates.get(t1);
        // The pool's depth is valued through whichever side has a rate of its own.
        const valued: 0 | 1 | undefined = rate0 ? 0 : rate1 ? 1 : undefined;
        if (valued === undefined) continue;
        const counts = (s: PoolState) =>
          this.deepEnough(pool, s, valued, (valued === 0 ? rate0 : rate1) as Rate);
        for (const side of [0, 1] as const) {
          const through = side === 0 ? t1 : t0;
          if (!directRates.has(through)) continue;
          const rate = timeWeighted(history, end, this.priceOf(pool)[side], counts, window, spot);
          if (rate) quotes.push({ token: side === 0 ? t0 : t1, through, rate });
        }
      }
    }
    return { rates: routeRates(direct, quotes), usd: median(usd) };
  }

  /** How a pool's states price each side, computed once per state. */
  private priceOf(pool: PoolDescription): [PriceOf, PriceOf] {
    const key = lower(pool.address);
    let known = this.prices.get(key);
    if (!known) {
      known = [cachedPrice(pool, 0), cachedPrice(pool, 1)];
      this.prices.set(key, known);
    }
    return known;
  }

  /**
   * The series of the pegged side's counterpart over one history: a pool against a native-pegged
   * token has a floor fixed per state (its pegged reserve), so its means come from prefix sums.
   * A history is replaced, never changed, so the series of each is built once.
   */
  private seriesOf(pool: PoolDescription, history: History, side: number): PriceSeries {
    const pegged0 = this.pegged.has(lower(pool.token0));
    const peggedSide = pegged0 ? 0 : 1;
    let pair = this.seriesPairs.get(history);
    if (!pair) {
      pair = [undefined, undefined];
      this.seriesPairs.set(history, pair);
    }
    let built = pair[side];
    if (!built) {
      const counts = (s: PoolState) => this.deepEnough(pool, s, peggedSide, ONE);
      built = new PriceSeries(history, this.priceOf(pool)[side as 0 | 1], counts);
      pair[side] = built;
    }
    return built;
  }

  /** Whether a state holds at least the floor on `side`, valued at `rate` wei per base unit. */
  private deepEnough(pool: PoolDescription, state: PoolState, side: 0 | 1, rate: Rate): boolean {
    if (this.minDepth === 0n) return true;
    let depths = this.depths.get(state);
    if (!depths) {
      depths = [sideDepth(pool, state, 0), sideDepth(pool, state, 1)];
      this.depths.set(state, depths);
    }
    const depth = depths[side];
    // A row stored before depths were kept is taken as deep enough: its pool was followed as it was.
    if (depth === undefined) return true;
    return depth * rate.num >= this.minDepth * rate.den;
  }
}

/** A pool's price of the token on `side`, exactly and on the grid, each worked out once per state. */
function cachedPrice(pool: PoolDescription, side: 0 | 1): PriceOf {
  return {
    exact: memoPerState((state) => sidePrice(pool, state, side)),
    grid: memoPerState((state) => gridPrice(pool, state, side)),
  };
}

/** `price` worked out once per state object (undefined answers too). */
function memoPerState<T>(price: (state: PoolState) => T | undefined): (state: PoolState) => T | undefined {
  const known = new WeakMap<PoolState, T | null>();
  return (state) => {
    let answer = known.get(state);
    if (answer === undefined) {
      answer = price(state) ?? null;
      known.set(state, answer);
    }
    return answer ?? undefined;
  };
}

/** floor(price · 2^192) of the token on `side`, from the state's raw values (no reduction). */
function gridPrice(pool: PoolDescription, state: PoolState, side: 0 | 1): bigint | undefined {
  if (pool.kind === "v2") {
    const { reserve0: r0, reserve1: r1 } = state;
    if (r0 === undefined || r1 === undefined || r0 <= 0n || r1 <= 0n) return undefined;
    return side === 0 ? (r1 * GRID) / r0 : (r0 * GRID) / r1;
  }
  const s = state.sqrtPriceX96;
  if (s === undefined || s <= 0n) return undefined;
  // A V3 price is s² / 2^192: on the grid already one way, and its inverse 2^384 / s² the other.
  return side === 0 ? s * s : (GRID * GRID) / (s * s);
}

/** A pool's price of the token on `side` in the other token's base units. */
function sidePrice(pool: PoolDescription, state: PoolState, side: number): Rate | undefined {
  const p01 = price0In1(pool, state);
  if (!p01) return undefined;
  return side === 0 ? p01 : invert(p01);
}

/** Whether `rate` is more than `bound` times `reference`, or less than `reference` / `bound`. */
export function beyond(rate: Rate, reference: Rate, bound: Rate): boolean {
  const r = rate.num * reference.den;
  const ref = reference.num * rate.den;
  return r * bound.den > bound.num * ref || r * bound.num < ref * bound.den;
}

/** The states from the one in force at `since` on (all when `since` is undefined: no times yet, keep the last). */
function keepSince(history: History, since: number | undefined): History {
  if (since === undefined) return history.slice(-1);
  let anchor = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const t = (history[i] as PoolState).blockTime;
    if (t === undefined || t <= since) {
      anchor = i;
      break;
    }
  }
  return anchor === 0 ? history : history.slice(anchor);
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

function chainOrder(a: Position, b: Position): number {
  return a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
