import assert from "node:assert/strict";
import { test } from "node:test";
import { isBurnAddress } from "../../src/core/burn.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import { BUCKET_SECONDS, bucketStart } from "../../src/core/periods.ts";
import type { NftTransfer } from "../../src/core/types.ts";
import { computeEffects, unitsBeforeTransfers } from "../../src/indexer/effects.ts";

const ZERO = "0x0000000000000000000000000000000000000000" as Address;
const DEAD = "0x000000000000000000000000000000000000dead" as Address;
const C1 = "0x1111111111111111111111111111111111111111" as Address;
const C2 = "0x2222222222222222222222222222222222222222" as Address;
const people = Array.from({ length: 6 }, (_, i) => `0x${String(i + 1).repeat(40)}` as Address);

/** A deterministic PRNG, so a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Random but valid histories: nobody sends units they do not hold. */
function randomHistory(seed: number, count: number): NftTransfer[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const held = new Map<string, bigint>();
  const transfers: NftTransfer[] = [];
  for (let i = 0; i < count; i++) {
    const contract = pick([C1, C2]);
    const tokenId = BigInt(Math.floor(rand() * 5));
    const owners = [...held].filter(([k, v]) => k.startsWith(`${contract}:${tokenId}:`) && v > 0n);
    let from: Address = ZERO;
    let amount = BigInt(1 + Math.floor(rand() * 3));
    if (owners.length > 0 && rand() < 0.7) {
      const [key, units] = pick(owners);
      from = key.split(":")[2] as Address;
      amount = 1n + BigInt(Math.floor(rand() * Number(units)));
    }
    const to = rand() < 0.1 ? pick([ZERO, DEAD]) : pick(people);
    if (from !== ZERO)
      held.set(`${contract}:${tokenId}:${from}`, (held.get(`${contract}:${tokenId}:${from}`) ?? 0n) - amount);
    if (!isBurnAddress(to))
      held.set(`${contract}:${tokenId}:${to}`, (held.get(`${contract}:${tokenId}:${to}`) ?? 0n) + amount);
    transfers.push({
      contract,
      tokenId,
      from,
      to,
      amount,
      blockNumber: 100 + i,
      logIndex: 0,
      seq: 0,
      txHash: `0x${i.toString(16).padStart(64, "0")}` as Hex,
      txIndex: 0,
      standard: "erc1155",
    });
  }
  return transfers;
}

// Blocks 7 minutes apart: buckets hold two or three blocks each.
const timeOf = (block: number) => 1_700_000_000 + block * 420;

/** The obvious, slow answer: holder counts by recounting every holder at the end of every bucket. */
function holdersAtBucketEnds(transfers: readonly NftTransfer[], contract: Address): Map<number, number> {
  const units = new Map<Address, bigint>();
  const result = new Map<number, number>();
  for (const t of transfers) {
    if (t.contract !== contract) continue;
    if (!isBurnAddress(t.from)) units.set(t.from, (units.get(t.from) ?? 0n) - t.amount);
    if (!isBurnAddress(t.to)) units.set(t.to, (units.get(t.to) ?? 0n) + t.amount);
    result.set(bucketStart(timeOf(t.blockNumber)), [...units.values()].filter((u) => u > 0n).length);
  }
  return result;
}

test("holder-count deltas summed over buckets equal a recount at each bucket's end", () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const transfers = randomHistory(seed, 300);
    const effects = computeEffects(transfers, timeOf, () => 0n);
    for (const contract of [C1, C2]) {
      const expected = holdersAtBucketEnds(transfers, contract);
      const buckets = effects.buckets
        .filter((b) => b.contract === contract)
        .sort((a, b) => a.start - b.start);
      let running = 0;
      for (const bucket of buckets) {
        running += bucket.holders;
        assert.equal(running, expected.get(bucket.start), `seed ${seed}, bucket ${bucket.start}`);
        assert.equal(bucket.start % BUCKET_SECONDS, 0);
      }
    }
  }
});

test("splitting a history into batches gives the same totals as one batch", () => {
  const transfers = randomHistory(7, 400);
  const whole = computeEffects(transfers, timeOf, () => 0n);
  const units = new Map<string, bigint>();
  const minted = new Map<string, bigint>();
  const holders = new Map<string, number>();
  for (let i = 0; i < transfers.length; i += 37) {
    const part = computeEffects(transfers.slice(i, i + 37), timeOf, (c, h) => units.get(c + h) ?? 0n);
    for (const h of part.holders) units.set(h.contract + h.holder, h.units);
    for (const c of part.collections) {
      minted.set(c.contract, (minted.get(c.contract) ?? 0n) + c.minted - c.burned);
      holders.set(c.contract, (holders.get(c.contract) ?? 0) + c.holders);
    }
  }
  for (const c of whole.collections) {
    assert.equal(minted.get(c.contract), c.minted - c.burned);
    assert.equal(holders.get(c.contract), c.holders);
  }
  for (const h of whole.holders) assert.equal(units.get(h.contract + h.holder), h.units);
});

test("mints, burns to the zero address and to a burn address move supply; burn addresses hold nothing", () => {
  const base = {
    tokenId: 1n,
    logIndex: 0,
    seq: 0,
    txIndex: 0,
    standard: "erc721" as const,
    txHash: "0x01" as Hex,
  };
  const a = people[0] as Address;
  const b = people[1] as Address;
  const transfers: NftTransfer[] = [
    { ...base, contract: C1, from: ZERO, to: a, amount: 1n, blockNumber: 1 },
    { ...base, contract: C1, tokenId: 2n, from: ZERO, to: a, amount: 1n, blockNumber: 1, logIndex: 1 },
    { ...base, contract: C1, from: a, to: b, amount: 1n, blockNumber: 2 },
    { ...base, contract: C1, from: b, to: DEAD, amount: 1n, blockNumber: 3 },
    { ...base, contract: C1, tokenId: 2n, from: a, to: ZERO, amount: 1n, blockNumber: 4 },
  ];
  const effects = computeEffects(transfers, timeOf, () => 0n);
  const [collection] = effects.collections;
  assert.deepEqual(collection, { contract: C1, minted: 2n, burned: 2n, holders: 0, transfers: 5 });
  assert.ok(
    effects.holders.every((h) => !isBurnAddress(h.holder)),
    "burn addresses never hold units",
  );
  assert.deepEqual(
    effects.holders.map((h) => [h.holder, h.units]),
    [
      [a, 0n],
      [b, 0n],
    ],
  );
  // Every token ended burned, so no balance is left: the net deltas cancel out.
  assert.deepEqual(effects.balances, []);
});

test("units before a run of transfers are recovered from the units after it", () => {
  const transfers = randomHistory(11, 200);
  const prefix = transfers.slice(0, 120);
  const suffix = transfers.slice(120);
  const atPrefix = new Map(
    computeEffects(prefix, timeOf, () => 0n).holders.map((h) => [h.contract + h.holder, h.units]),
  );
  const after = computeEffects(suffix, timeOf, (c, h) => atPrefix.get(c + h) ?? 0n);
  const afterUnits = new Map(after.holders.map((h) => [h.contract + h.holder, h.units]));
  const before = unitsBeforeTransfers(suffix, (c, h) => afterUnits.get(c + h) ?? 0n);
  for (const h of after.holders)
    assert.equal(before(h.contract, h.holder), atPrefix.get(h.contract + h.holder) ?? 0n);
});
