/**
 * The schedule of a market too large to plan at once (hundreds of millions of events): a stream of
 * day-long schedules in time order, each drawn when the chain reaches it. A collection's trading
 * (sales, plain transfers, burns) follows the same curve as `planSchedule`'s, leaning towards the
 * end of the history, and each day takes a Poisson draw of its expected share; past the market's
 * `now` the activity goes on at the rate of its last day, so that a chain can be continued beyond
 * a store built up to `now`. Mints and airdrops follow each deployment as in `planSchedule`.
 */
import { Prng } from "../../src/demo/prng.ts";
import { type Collection, DAY, type Market } from "./market.ts";
import { EventKind, type Schedule } from "./schedule.ts";

const SWEEP_SHARE = 0.05;
/** NFTs in a sale event, on average: sweeps of 2 to 5 among single purchases. */
const SALE_SIZE = 1 + SWEEP_SHARE * 2.5;
const BURNS_PER_TOKEN = 0.01;
const POOL_MOVE_SECONDS = 6 * 3600;
/** The trading curve: the share of a collection's trading done by `x` of its period is x^LEAN. */
const LEAN = 1.25;
/** Wallets an airdrop transaction reaches. */
const AIRDROP_SIZE: [number, number] = [20, 200];

interface Pending {
  time: number[];
  kind: number[];
  subject: number[];
  size: number[];
}

/** Day-long schedules from the market's genesis until `until` (Unix seconds). */
export function* dailySchedule(market: Market, until: number): Generator<Schedule> {
  const random = new Prng(`${market.seed}:daily`);
  const byDeployment = [...market.collections].sort((a, b) => a.deployedAt - b.deployedAt || a.rank - b.rank);
  let deployed = 0;
  const trading: Collection[] = [];
  // Events drawn ahead of their day: the mints and airdrops that follow a deployment.
  let ahead: Pending = { time: [], kind: [], subject: [], size: [] };
  let poolMove = market.genesisTime + 5;
  let poolMoves = 0;

  for (let dayStart = market.genesisTime; dayStart < until; dayStart += DAY) {
    const dayEnd = Math.min(dayStart + DAY, until);
    const day: Pending = { time: [], kind: [], subject: [], size: [] };
    const add = (into: Pending, t: number, k: EventKind, s: number, n: number) => {
      into.time.push(t);
      into.kind.push(k);
      into.subject.push(s);
      into.size.push(n);
    };
    if (dayStart === market.genesisTime) {
      for (let token = 0; token < 3; token++) add(day, dayStart + 1 + token, EventKind.TokenDeploy, token, 1);
    }
    for (; poolMove < dayEnd; poolMove += POOL_MOVE_SECONDS / 2, poolMoves++) {
      add(day, poolMove, EventKind.PoolMove, poolMoves % 2, 1);
    }
    for (; deployed < byDeployment.length; deployed++) {
      const c = byDeployment[deployed] as Collection;
      if (c.deployedAt >= dayEnd) break;
      add(day, c.deployedAt, EventKind.Deploy, c.rank, 1);
      if (c.spam || c.heldBy !== undefined) {
        for (let left = c.airdrops; left > 0; ) {
          const n = Math.min(left, random.int(...AIRDROP_SIZE));
          add(ahead, c.deployedAt + 60 + random.next() * (c.mintSeconds - 60), EventKind.Airdrop, c.rank, n);
          left -= n;
        }
        continue;
      }
      const mints: number[] = [];
      for (let left = c.supply; left > 0; ) {
        const n = Math.min(left, random.int(1, 5));
        mints.push(n);
        left -= n;
      }
      mints.forEach((n, j) => {
        const t = c.deployedAt + 60 + ((j + 0.5) / mints.length) * (c.mintSeconds - 60);
        add(ahead, t, EventKind.Mint, c.rank, n);
      });
      trading.push(c);
    }
    const later: Pending = { time: [], kind: [], subject: [], size: [] };
    ahead.time.forEach((t, i) => {
      add(
        t < dayEnd ? day : later,
        t,
        ahead.kind[i] as EventKind,
        ahead.subject[i] as number,
        ahead.size[i] as number,
      );
    });
    ahead = later;

    for (const c of trading) {
      const open = c.deployedAt + c.mintSeconds;
      const from = Math.max(dayStart, open);
      if (from >= dayEnd) continue;
      const share = tradedShare(open, market.now, from, dayEnd);
      const at = () => from + random.next() * (dayEnd - from);
      for (let n = poisson(random, (c.sales / SALE_SIZE) * share); n > 0; n--) {
        const sweep = c.standard === "erc721" && random.chance(SWEEP_SHARE);
        add(day, at(), EventKind.Sale, c.rank, sweep ? random.int(2, 5) : 1);
      }
      for (let n = poisson(random, c.plainTransfers * share); n > 0; n--)
        add(day, at(), EventKind.Transfer, c.rank, 1);
      const burns = Math.floor(c.supply * BURNS_PER_TOKEN);
      for (let n = poisson(random, burns * share); n > 0; n--) add(day, at(), EventKind.Burn, c.rank, 1);
    }
    yield toSchedule(day);
  }
}

/** The share of a collection's trading in [from, to), for trading open from `open` until `end` and on after it. */
function tradedShare(open: number, end: number, from: number, to: number): number {
  const span = end - open;
  const curve = (t: number) => {
    const x = (t - open) / span;
    return x <= 1 ? x ** LEAN : 1 + LEAN * (x - 1);
  };
  return curve(to) - curve(from);
}

/** A Poisson draw: Knuth's product of uniforms when small, a rounded normal when large. */
function poisson(random: Prng, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 30) {
    const u = 1 - random.next();
    const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.next());
    return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal));
  }
  const limit = Math.exp(-mean);
  let n = 0;
  for (let p = random.next(); p > limit; p *= random.next()) n++;
  return n;
}

function toSchedule(events: Pending): Schedule {
  const count = events.time.length;
  const time = Float64Array.from(events.time);
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  // Ties keep the order events were added in: a deployment before its first mint.
  order.sort((a, b) => (time[a] as number) - (time[b] as number) || a - b);
  return {
    count,
    time,
    kind: Uint8Array.from(events.kind),
    subject: Int32Array.from(events.subject),
    size: Int32Array.from(events.size),
    order,
  };
}
