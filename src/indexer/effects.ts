import { isBurnAddress } from "../core/burn.ts";
import type { Address } from "../core/hex.ts";
import { bucketStart } from "../core/periods.ts";
import type { NftTransfer } from "../core/types.ts";

export interface BalanceDelta {
  contract: Address;
  tokenId: bigint;
  holder: Address;
  delta: bigint;
}

export interface HolderUnits {
  contract: Address;
  holder: Address;
  /** Units held after the transfers. */
  units: bigint;
}

export interface CollectionDelta {
  contract: Address;
  minted: bigint;
  burned: bigint;
  holders: number;
  transfers: number;
}

export interface BucketDelta extends CollectionDelta {
  /** Unix seconds of the bucket's start. */
  start: number;
}

/** What a run of transfers changes in ownership and supply. */
export interface Effects {
  balances: BalanceDelta[];
  holders: HolderUnits[];
  collections: CollectionDelta[];
  buckets: BucketDelta[];
}

export type UnitsLookup = (contract: Address, holder: Address) => bigint;

/** The (contract, holder) pairs whose units a run of transfers changes: their current units must be read first. */
export function touchedHolders(
  transfers: readonly NftTransfer[],
): Array<{ contract: Address; holder: Address }> {
  const seen = new Map<string, { contract: Address; holder: Address }>();
  for (const t of transfers) {
    for (const holder of [t.from, t.to]) {
      if (isBurnAddress(holder)) continue;
      const key = t.contract + holder;
      if (!seen.has(key)) seen.set(key, { contract: t.contract, holder });
    }
  }
  return [...seen.values()];
}

/**
 * Replays transfers (in chain order) over the holders' units before them. Holder counts move
 * when a holder's units cross zero, in the bucket of the transfer that crossed, so that the
 * owner count at the end of any bucket is the running sum of deltas. Burn addresses hold
 * nothing: tokens sent there leave supply.
 */
export function computeEffects(
  transfers: readonly NftTransfer[],
  timeOf: (blockNumber: number) => number,
  unitsBefore: UnitsLookup,
): Effects {
  // Keyed by holder, then by token id: a bigint is a Map key by value, and turning every token
  // id into a string for a flat key costs more than the rest of the replay.
  const balances = new Map<string, Map<bigint, BalanceDelta>>();
  const units = new Map<string, HolderUnits>();
  const collections = new Map<string, CollectionDelta>();
  const buckets = new Map<string, BucketDelta>();

  const unitsOf = (contract: Address, holder: Address): HolderUnits => {
    const key = contract + holder;
    let entry = units.get(key);
    if (!entry) {
      entry = { contract, holder, units: unitsBefore(contract, holder) };
      units.set(key, entry);
    }
    return entry;
  };
  const addBalance = (t: NftTransfer, holder: Address, delta: bigint) => {
    const key = t.contract + holder;
    let byToken = balances.get(key);
    if (!byToken) {
      byToken = new Map();
      balances.set(key, byToken);
    }
    const entry = byToken.get(t.tokenId);
    if (entry) entry.delta += delta;
    else byToken.set(t.tokenId, { contract: t.contract, tokenId: t.tokenId, holder, delta });
  };

  for (const t of transfers) {
    const time = timeOf(t.blockNumber);
    const start = bucketStart(time);
    const bucketKey = `${t.contract}${start}`;
    let bucket = buckets.get(bucketKey);
    if (!bucket) {
      bucket = { contract: t.contract, start, minted: 0n, burned: 0n, holders: 0, transfers: 0 };
      buckets.set(bucketKey, bucket);
    }
    let collection = collections.get(t.contract);
    if (!collection) {
      collection = { contract: t.contract, minted: 0n, burned: 0n, holders: 0, transfers: 0 };
      collections.set(t.contract, collection);
    }

    bucket.transfers++;
    collection.transfers++;
    const fromBurn = isBurnAddress(t.from);
    const toBurn = isBurnAddress(t.to);
    if (fromBurn) {
      bucket.minted += t.amount;
      collection.minted += t.amount;
    } else {
      addBalance(t, t.from, -t.amount);
      const holder = unitsOf(t.contract, t.from);
      const before = holder.units;
      holder.units -= t.amount;
      if (before > 0n && holder.units <= 0n) {
        bucket.holders--;
        collection.holders--;
      }
    }
    if (toBurn) {
      bucket.burned += t.amount;
      collection.burned += t.amount;
    } else {
      addBalance(t, t.to, t.amount);
      const holder = unitsOf(t.contract, t.to);
      const before = holder.units;
      holder.units += t.amount;
      if (before <= 0n && holder.units > 0n) {
        bucket.holders++;
        collection.holders++;
      }
    }
  }

  return {
    balances: [...balances.values()].flatMap((byToken) =>
      [...byToken.values()].filter((b) => b.delta !== 0n),
    ),
    holders: [...units.values()],
    collections: [...collections.values()],
    buckets: [...buckets.values()],
  };
}

/** The units each touched holder had before the transfers, given the units after them. */
export function unitsBeforeTransfers(
  transfers: readonly NftTransfer[],
  unitsAfter: UnitsLookup,
): UnitsLookup {
  const net = new Map<string, bigint>();
  for (const t of transfers) {
    if (!isBurnAddress(t.from)) net.set(t.contract + t.from, (net.get(t.contract + t.from) ?? 0n) - t.amount);
    if (!isBurnAddress(t.to)) net.set(t.contract + t.to, (net.get(t.contract + t.to) ?? 0n) + t.amount);
  }
  return (contract, holder) => unitsAfter(contract, holder) - (net.get(contract + holder) ?? 0n);
}
