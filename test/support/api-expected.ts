/**
 * What the API should answer, worked out from the indexer's event tables (every NFT transfer and
 * every sale row) rather than from the rollups the API reads: the buckets, day rows, holder and
 * token tables the API reads are checked against a replay of the events they summarise.
 */
import { isBurnAddress } from "../../src/core/burn.ts";
import type { Address } from "../../src/core/hex.ts";
import { type SaleClass, saleClass } from "../../src/core/sale-classes.ts";
import type { Sql } from "../../src/store/pg/database.ts";

export interface TransferEvent {
  time: number;
  from: Address;
  to: Address;
  tokenId: bigint;
  amount: bigint;
}

export interface SaleEvent {
  time: number;
  tokenId: bigint;
  quantity: bigint;
  totalNative: bigint;
  class: SaleClass;
}

const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}` as Address;

export async function transferEvents(sql: Sql, chainId: number, contract: Address): Promise<TransferEvent[]> {
  const rows = await sql<{ t: string; f: Uint8Array; to: Uint8Array; id: string; amount: string }[]>`
    SELECT extract(epoch FROM block_time)::bigint::text AS t, from_address AS f, to_address AS to,
           token_id::text AS id, amount::text
    FROM nft_transfers WHERE chain_id = ${chainId} AND contract = ${Buffer.from(contract.slice(2), "hex")}
    ORDER BY block_number, log_index, seq`;
  return rows.map((r) => ({
    time: Number(r.t),
    from: hex(r.f),
    to: hex(r.to),
    tokenId: BigInt(r.id),
    amount: BigInt(r.amount),
  }));
}

export async function saleEvents(
  sql: Sql,
  chainId: number,
  contract?: Address,
): Promise<(SaleEvent & { contract: Address })[]> {
  const rows = await sql<
    { c: Uint8Array; t: string; id: string; q: string; total: string; flags: string[] }[]
  >`
    SELECT contract AS c, extract(epoch FROM block_time)::bigint::text AS t, token_id::text AS id,
           quantity::text AS q, total_native::text AS total, flags
    FROM sales WHERE chain_id = ${chainId} AND kind = 'sale'
      ${contract ? sql`AND contract = ${Buffer.from(contract.slice(2), "hex")}` : sql``}
    ORDER BY block_number, log_index, seq`;
  return rows.map((r) => ({
    contract: hex(r.c),
    time: Number(r.t),
    tokenId: BigInt(r.id),
    quantity: BigInt(r.q),
    totalNative: BigInt(r.total),
    class: saleClass(r.flags),
  }));
}

/** Units held per holder after the transfers before `until` (all when undefined); burn addresses hold nothing. */
export function holdings(transfers: readonly TransferEvent[], until?: number): Map<Address, bigint> {
  const units = new Map<Address, bigint>();
  for (const t of transfers) {
    if (until !== undefined && t.time >= until) break;
    if (!isBurnAddress(t.from)) units.set(t.from, (units.get(t.from) ?? 0n) - t.amount);
    if (!isBurnAddress(t.to)) units.set(t.to, (units.get(t.to) ?? 0n) + t.amount);
  }
  for (const [holder, n] of units) if (n <= 0n) units.delete(holder);
  return units;
}

export interface ExpectedPoint {
  start: number;
  minted: bigint;
  burned: bigint;
  holders: number;
  units: bigint;
  volume: bigint;
  min: bigint;
  max: bigint;
  flaggedSales: bigint;
  flaggedUnits: bigint;
  flaggedVolume: bigint;
  unpricedSales: bigint;
  unpricedUnits: bigint;
}

/**
 * The points of a grid of `points` periods from `start`, counting events in [start, end); holders
 * at each period's end (at `end` for the last, the current count for periods ending after now).
 */
export function expectedSeries(
  transfers: readonly TransferEvent[],
  sales: readonly SaleEvent[],
  grid: { start: number; period: number; points: number; end: number; now: number },
): ExpectedPoint[] {
  const points: ExpectedPoint[] = [];
  for (let i = 0; i < grid.points; i++) {
    const from = grid.start + i * grid.period;
    const to = Math.min(from + grid.period, grid.end);
    const within = <T extends { time: number }>(e: T) => e.time >= from && e.time < to;
    const ts = transfers.filter(within);
    const all = sales.filter(within);
    // The figures count organic sales; the others are counted apart.
    const ss = all.filter((s) => s.class === "organic");
    const flagged = all.filter((s) => s.class === "flagged");
    const unpriced = all.filter((s) => s.class === "unpriced");
    const unit = (s: SaleEvent) => (s.quantity > 0n ? s.totalNative / s.quantity : s.totalNative);
    const holdersAt = to > grid.now ? holdings(transfers).size : holdings(transfers, to).size;
    points.push({
      start: from,
      minted: ts.filter((t) => isBurnAddress(t.from)).reduce((a, t) => a + t.amount, 0n),
      burned: ts.filter((t) => isBurnAddress(t.to)).reduce((a, t) => a + t.amount, 0n),
      holders: holdersAt,
      units: ss.reduce((a, s) => a + s.quantity, 0n),
      volume: ss.reduce((a, s) => a + s.totalNative, 0n),
      min: ss.length === 0 ? 0n : ss.map(unit).reduce((a, b) => (b < a ? b : a)),
      max: ss.length === 0 ? 0n : ss.map(unit).reduce((a, b) => (b > a ? b : a)),
      flaggedSales: BigInt(flagged.length),
      flaggedUnits: flagged.reduce((a, s) => a + s.quantity, 0n),
      flaggedVolume: flagged.reduce((a, s) => a + s.totalNative, 0n),
      unpricedSales: BigInt(unpriced.length),
      unpricedUnits: unpriced.reduce((a, s) => a + s.quantity, 0n),
    });
  }
  return points;
}
