import { type Address, ZERO_ADDRESS } from "../core/hex.ts";
import { type Flows, type Movement, type Movements, NATIVE, netFlows } from "./movements.ts";
import { splitProportionally } from "./split.ts";

/**
 * What of each payer's money reached the seller side of a transaction: a price is that, not all the
 * payer spent. A smart account that buys an NFT and, in the same call, pays a bundler, repays a
 * loan or sends money anywhere else pays the seller side only part of what it spends; a lender
 * whose money goes through the buyer to the seller pays part of the price.
 *
 * The seller side is the sellers, the accounts that handed an NFT on and kept money for it (a relay
 * that bought and sold on), and the accounts the seller side pays on: whoever is paid in the same
 * run of payments as a seller (an exchange's fee and royalty recipients, a market pulling a bidder's
 * tokens to the seller, its fee and royalty), and whoever a seller or such a recipient pays.
 *
 * Money is followed in the order it moved, per currency: an account passes on what it was paid
 * before its own money, in proportion to whose it was. A group's money is what its members (its
 * payer and buyers) pay out, and what any account that was paid the group's money pays out of its
 * own or of money nobody's group owns: a router or a lending contract acting for the buyer, a pool
 * swapping the buyer's tokens, a wrapped token unwrapping them. What entered the seller side, less
 * what came back out of it, is what reached it.
 */
export interface ReachInput {
  moves: Movements;
  flows: Flows;
  /** The traded NFTs' sellers (never the zero address). */
  sellers: ReadonlySet<Address>;
  /** Every account that sent a traded NFT in the transaction. */
  handlers: ReadonlySet<Address>;
  /** Log indexes of the NFT transfers and marketplace events: a run of ERC-20 payments ends at one. */
  boundaries: readonly number[];
  /** Each payer group's members: its payer and the buyers it paid for. */
  groups: readonly (readonly Address[])[];
}

/** Money owned by no group. */
const OTHER = -1;
/** An account acting for several groups: what it passes on of its own stays nobody's. */
const SEVERAL = -2;
/** Enough for a router fed by a swap fed by the buyer; more hops than this end as nobody's money. */
const MAX_PASSES = 6;

type Purse = Map<number, bigint>;

/** Per group, per currency: the amount of the group's money that reached the seller side. */
export function reachedSellerSide(given: ReachInput): Map<string, bigint>[] {
  const input: ReachInput = { ...given, ...withUnwraps(given.moves, given.flows) };
  const memberOf = new Map<Address, number>();
  input.groups.forEach((members, g) => {
    for (const m of members) {
      const known = memberOf.get(m);
      memberOf.set(m, known === undefined || known === g ? g : SEVERAL);
    }
  });
  const side = sellerSide(input, memberOf);
  let agents = new Map<Address, number>();
  for (let pass = 1; ; pass++) {
    const { reached, received, passedOther } = follow(input, side, memberOf, agents);
    const next = new Map<Address, number>();
    let matters = false;
    for (const [account, g] of received) {
      if (side.has(account) || memberOf.has(account)) continue;
      next.set(account, g);
      if (g >= 0 && agents.get(account) !== g && passedOther.has(account)) matters = true;
    }
    // Another pass changes something only if an account newly known to act for a group passed on
    // money that was nobody's.
    if (!matters || pass === MAX_PASSES) return reached;
    agents = next;
  }
}

/**
 * A token's contract paying the coin to an account that holds the token unwrapped that much of
 * it, though WETH9 logs no transfer for it: the tokens are taken as burnt then, so a router that
 * unwrapped what a swap paid it is not seen keeping them.
 */
function withUnwraps(moves: Movements, flows: Flows): { moves: Movements; flows: Flows } {
  const native = moves.get(NATIVE);
  if (!native) return { moves, flows };
  let burns: Map<string, Movement[]> | undefined;
  const held = new Map<string, bigint>();
  for (const m of native) {
    const accounts = flows.get(m.from);
    if (!accounts) continue;
    const key = `${m.from}:${m.to}`;
    const left = held.get(key) ?? accounts.get(m.to) ?? 0n;
    if (left <= 0n) continue;
    const burnt = left < m.amount ? left : m.amount;
    held.set(key, left - burnt);
    burns ??= new Map();
    const burn: Movement = { from: m.to, to: ZERO_ADDRESS, amount: burnt, logIndex: undefined };
    const list = burns.get(m.from);
    if (list) list.push(burn);
    else burns.set(m.from, [burn]);
  }
  if (!burns) return { moves, flows };
  const next = new Map(moves);
  for (const [token, list] of burns) next.set(token, [...(moves.get(token) ?? []), ...list]);
  return { moves: next, flows: netFlows(next) };
}

/** The seller side: sellers, handlers that kept money, and those the seller side pays on. */
function sellerSide(input: ReachInput, memberOf: ReadonlyMap<Address, number>): Set<Address> {
  const side = new Set<Address>();
  const forwards = new Set<Address>();
  for (const seller of input.sellers) {
    if (memberOf.has(seller)) continue;
    side.add(seller);
    forwards.add(seller);
  }
  for (const handler of input.handlers) {
    if (side.has(handler) || memberOf.has(handler) || handler === ZERO_ADDRESS) continue;
    for (const accounts of input.flows.values()) {
      if ((accounts.get(handler) ?? 0n) > 0n) {
        side.add(handler);
        break;
      }
    }
  }
  const runs: Movement[][] = [];
  for (const list of input.moves.values()) runs.push(...runsOf(list, input.boundaries));
  for (let grown = true; grown; ) {
    grown = false;
    for (const run of runs) {
      const from = (run[0] as Movement).from;
      if (!forwards.has(from) && !run.some((m) => side.has(m.to))) continue;
      for (const m of run) {
        if (side.has(m.to) || memberOf.has(m.to) || m.to === ZERO_ADDRESS) continue;
        side.add(m.to);
        forwards.add(m.to);
        grown = true;
      }
    }
  }
  return side;
}

/**
 * The payments one account makes between two payments to it: the payouts of one order (a seller
 * and its fees, in any order, whatever the payees do with them in between). ERC-20 runs also end
 * at an NFT transfer or a marketplace event logged between two payments, where one order ends and
 * the next call begins.
 */
function runsOf(list: readonly Movement[], boundaries: readonly number[]): Movement[][] {
  const runs: Movement[][] = [];
  const open = new Map<Address, { run: Movement[]; section: number }>();
  for (const m of list) {
    const section = m.logIndex === undefined ? 0 : countBelow(boundaries, m.logIndex);
    const current = open.get(m.from);
    if (current && current.section === section) current.run.push(m);
    else {
      const run = [m];
      runs.push(run);
      open.set(m.from, { run, section });
    }
    open.delete(m.to);
  }
  return runs;
}

/** How many of the sorted values are below `value`. */
function countBelow(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Followed {
  reached: Map<string, bigint>[];
  /** Accounts paid a group's money, with the group (or SEVERAL), in any currency. */
  received: Map<Address, number>;
  /** Accounts that passed on money of no group. */
  passedOther: Set<Address>;
}

/** Follows every currency's movements once, with the accounts known to act for each group. */
function follow(
  input: ReachInput,
  side: ReadonlySet<Address>,
  memberOf: ReadonlyMap<Address, number>,
  agents: ReadonlyMap<Address, number>,
): Followed {
  const reached = input.groups.map(() => new Map<string, bigint>());
  const received = new Map<Address, number>();
  const passedOther = new Set<Address>();
  const note = (account: Address, g: number) => {
    const known = received.get(account);
    received.set(account, known === undefined || known === g ? g : SEVERAL);
  };
  for (const [currency, list] of input.moves) {
    const purses = new Map<Address, Purse>();
    for (const m of list) {
      const owner = side.has(m.from) ? OTHER : (memberOf.get(m.from) ?? agents.get(m.from) ?? OTHER);
      const parts = draw(purses, m.from, m.amount, owner < 0 ? OTHER : owner);
      const into = side.has(m.to);
      const crosses = into !== side.has(m.from);
      let purse = purses.get(m.to);
      if (!purse) {
        purse = new Map();
        purses.set(m.to, purse);
      }
      for (const [g, amount] of parts) {
        purse.set(g, (purse.get(g) ?? 0n) + amount);
        if (g === OTHER) {
          passedOther.add(m.from);
          continue;
        }
        note(m.to, g);
        // A burnt wrapped or pool token is paid out by its contract, in the coin it wraps.
        if (m.to === ZERO_ADDRESS && currency !== NATIVE) note(currency as Address, g);
        if (crosses) {
          const r = reached[g] as Map<string, bigint>;
          r.set(currency, (r.get(currency) ?? 0n) + (into ? amount : -amount));
        }
      }
    }
  }
  for (const r of reached) for (const [currency, amount] of r) if (amount <= 0n) r.delete(currency);
  return { reached, received, passedOther };
}

/**
 * Takes `amount` out of an account: first what it was paid, in proportion to whose it was, then
 * its own money, which is `owner`'s. An account acting for a group passes on nobody's money as
 * the group's.
 */
function draw(purses: Map<Address, Purse>, account: Address, amount: bigint, owner: number): Purse {
  const parts: Purse = new Map();
  const purse = purses.get(account);
  let left = amount;
  if (purse && purse.size > 0) {
    let held = 0n;
    for (const v of purse.values()) held += v;
    const taken = held < amount ? held : amount;
    if (taken === held) {
      for (const [g, v] of purse) if (v > 0n) parts.set(g, v);
      purse.clear();
    } else {
      const tags = [...purse.keys()];
      const split = splitProportionally(
        taken,
        tags.map((g) => purse.get(g) as bigint),
      );
      tags.forEach((g, i) => {
        const part = split[i] as bigint;
        if (part === 0n) return;
        parts.set(g, part);
        purse.set(g, (purse.get(g) as bigint) - part);
      });
    }
    left -= taken;
  }
  if (left > 0n) parts.set(owner, (parts.get(owner) ?? 0n) + left);
  if (owner !== OTHER) {
    const nobody = parts.get(OTHER);
    if (nobody !== undefined) {
      parts.delete(OTHER);
      parts.set(owner, (parts.get(owner) ?? 0n) + nobody);
    }
  }
  return parts;
}
