/**
 * The rollups a batch changes, after the tables they are made from: fifteen-minute buckets, their
 * day sums, and the ranked windows. Their inverses run after those of the ownership and the sales,
 * and in this order, each from what the one before it left.
 */
import type { Address } from "../../core/hex.ts";
import { bucketStatements, encodeBuckets, undoBuckets } from "../../rollups/buckets.ts";
import { dayStatements, rebuildDaysAfter, touchedDays } from "../../rollups/days.ts";
import {
  encodeSaleDeltas,
  rankingStatements,
  storedWindowEnd,
  undoRankings,
} from "../../rollups/rankings.ts";
import { windowEndAt } from "../../rollups/windows.ts";
import { defineProjection, need } from "./projection.ts";

export const bucketsProjection = defineProjection({
  name: "buckets",
  tables: [{ name: "collection_buckets", order: "chain_id, contract, bucket_start" }],
  resume: async () => undefined,
  async prepare({ facts }) {
    const transfers = need(facts, "effects", "buckets").buckets;
    const sales = need(facts, "trades", "buckets").buckets;
    return { prepared: encodeBuckets(transfers, sales), carry: undefined };
  },
  statements: (tx, { chainId }, prepared) => bucketStatements(tx, chainId, prepared),
  undo: (tx, { chainId, journal }) => undoBuckets(tx, chainId, journal.effects.buckets, journal.sales),
});

export const daysProjection = defineProjection({
  name: "days",
  tables: [{ name: "collection_days", order: "chain_id, contract, day" }],
  resume: async () => undefined,
  async prepare({ facts }) {
    const transfers = need(facts, "effects", "days").buckets;
    const sales = need(facts, "trades", "days").buckets;
    return { prepared: touchedDays([...transfers, ...sales]), carry: undefined };
  },
  statements: (tx, { chainId }, prepared) => dayStatements(tx, chainId, prepared),
  undo: (tx, { chainId, journal }) => rebuildDaysAfter(tx, chainId, journal.ancestorTime),
});

/** The carry is where the windows end after the previous batch (undefined before any was kept). */
export const rankingsProjection = defineProjection({
  name: "rankings",
  tables: [{ name: "collection_windows", order: "chain_id, window_seconds, contract" }],
  resume: ({ sql, chainId }) => storedWindowEnd(sql, chainId),
  async prepare({ batch, facts }, carry: number | undefined) {
    const newest = batch.headers.at(-1);
    const to = newest === undefined ? carry : windowEndAt(newest.timestamp);
    const deltas = encodeSaleDeltas(need(facts, "trades", "rankings").buckets);
    facts.windowEnd = to;
    return { prepared: { from: carry, to, deltas }, carry: to };
  },
  statements: (tx, { chainId }, { from, to, deltas }) =>
    to === undefined ? [] : rankingStatements(tx, chainId, from, to, deltas),
  undo: (tx, { chainId, journal }) =>
    undoRankings(
      tx,
      chainId,
      journal.ancestorTime === undefined ? undefined : windowEndAt(journal.ancestorTime),
      [...new Set<Address>(journal.sales.map((s) => s.contract))],
    ),
});
