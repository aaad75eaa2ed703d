/**
 * When everything in the synthetic market happens: deployments, mints, sales, transfers, burns
 * and pool price moves, in time order. Only the instants and the collections are fixed here;
 * who holds, sells and buys what is decided as the chain is built, in that order.
 */
import { Prng } from "../../src/demo/prng.ts";
import type { Market } from "./market.ts";

export const EventKind = {
  /** An ERC-20 payment token deployed; the subject is 0 (WETH), 1 (APE) or 2 (USDC). */
  TokenDeploy: 0,
  /** The subject collection deployed. */
  Deploy: 1,
  /** `size` tokens of the subject collection minted in one transaction. */
  Mint: 2,
  /** `size` NFTs of the subject collection bought in one transaction (more than one: a sweep). */
  Sale: 3,
  /** An NFT given away, no payment. */
  Transfer: 4,
  Burn: 5,
  /** A new state of pool `subject` (0: WETH/USDC, 1: APE/WETH). */
  PoolMove: 6,
  /**
   * `size` wallets each sent one unit of a token of the subject spam collection, in one transaction;
   * or `size` new tokens of a vault minted to its collector.
   */
  Airdrop: 7,
} as const;
export type EventKind = (typeof EventKind)[keyof typeof EventKind];

export interface Schedule {
  count: number;
  /** Unix seconds, fractional. */
  time: Float64Array;
  kind: Uint8Array;
  subject: Int32Array;
  size: Int32Array;
  /** Event indexes in time order. */
  order: Uint32Array;
}

/** Burns per token. */
const BURNS_PER_TOKEN = 0.01;
/** Sales that are sweeps of 2 to 5 NFTs of one collection (ERC-721 only). */
const SWEEP_SHARE = 0.05;
const POOL_MOVE_SECONDS = 6 * 3600;
/** Wallets an airdrop transaction reaches, or tokens a vault's drop mints. */
const AIRDROP_SIZE: [number, number] = [20, 200];

export function planSchedule(market: Market): Schedule {
  const random = new Prng(`${market.seed}:schedule`);
  const time: number[] = [];
  const kind: number[] = [];
  const subject: number[] = [];
  const size: number[] = [];
  const add = (t: number, k: EventKind, s: number, n: number) => {
    time.push(t);
    kind.push(k);
    subject.push(s);
    size.push(n);
  };

  for (let token = 0; token < 3; token++)
    add(market.genesisTime + 1 + token, EventKind.TokenDeploy, token, 1);
  for (let t = market.genesisTime + 5, i = 0; t < market.now; t += POOL_MOVE_SECONDS / 2, i++) {
    add(t, EventKind.PoolMove, i % 2, 1);
  }

  for (const c of market.collections) {
    add(c.deployedAt, EventKind.Deploy, c.rank, 1);
    if (c.spam || c.heldBy !== undefined) {
      // Dropped over the days after the deployment, never traded (they come after every traded collection).
      for (let left = c.airdrops; left > 0; ) {
        const n = Math.min(left, random.int(...AIRDROP_SIZE));
        add(c.deployedAt + 60 + random.next() * (c.mintSeconds - 60), EventKind.Airdrop, c.rank, n);
        left -= n;
      }
      continue;
    }
    // Mints in transactions of 1 to 5 tokens, spread evenly over the mint period, in token order.
    const mints: number[] = [];
    for (let left = c.supply; left > 0; ) {
      const n = Math.min(left, random.int(1, 5));
      mints.push(n);
      left -= n;
    }
    mints.forEach((n, j) => {
      add(c.deployedAt + 60 + ((j + 0.5) / mints.length) * (c.mintSeconds - 60), EventKind.Mint, c.rank, n);
    });

    // Trading starts once the mint is over; a power below one leans activity towards the end of
    // the year, as a market growing over it would.
    const open = c.deployedAt + c.mintSeconds;
    const span = market.now - open;
    const at = () => open + span * random.next() ** 0.8;
    for (let left = c.sales; left > 0; ) {
      const sweep = c.standard === "erc721" && left > 1 && random.chance(SWEEP_SHARE);
      const n = sweep ? Math.min(left, random.int(2, 5)) : 1;
      add(at(), EventKind.Sale, c.rank, n);
      left -= n;
    }
    for (let i = 0; i < c.plainTransfers; i++) add(at(), EventKind.Transfer, c.rank, 1);
    const burns = Math.floor(c.supply * BURNS_PER_TOKEN);
    for (let i = 0; i < burns; i++) add(at(), EventKind.Burn, c.rank, 1);
  }

  const count = time.length;
  const times = Float64Array.from(time);
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  // Ties keep the order events were added in: a deployment before its first mint.
  order.sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
  return {
    count,
    time: times,
    kind: Uint8Array.from(kind),
    subject: Int32Array.from(subject),
    size: Int32Array.from(size),
    order,
  };
}
