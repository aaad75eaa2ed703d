import type { Address } from "../../core/hex.ts";
import type { PoolState } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

/**
 * Stores each pool's last state of each block: a busy pool changes many times in a block, and
 * prices are read per block, so the rest would only be kept to be ignored.
 */
export function poolStateStatements(
  sql: Queryable,
  chainId: number,
  states: readonly PoolState[],
): Statement[] {
  if (states.length === 0) return [];
  const last = new Map<string, PoolState>();
  for (const s of states) last.set(`${s.pool}:${s.blockNumber}`, s);
  const rows = [...last.values()];
  return [
    sql`
    INSERT INTO pool_states (chain_id, pool, block_number, log_index, reserve0, reserve1, sqrt_price_x96,
                             block_time, liquidity)
    SELECT ${chainId}, decode(p, 'hex'), b::bigint, li::integer, nullif(r0, '')::numeric, nullif(r1, '')::numeric,
           nullif(sp, '')::numeric, to_timestamp(nullif(bt, '')::bigint), nullif(l, '')::numeric
    FROM ${bulkRows(sql, {
      p: joinColumn(rows.map((s) => bare(s.pool))),
      b: joinColumn(rows.map((s) => s.blockNumber)),
      li: joinColumn(rows.map((s) => s.logIndex)),
      r0: joinColumn(rows.map((s) => s.reserve0 ?? null)),
      r1: joinColumn(rows.map((s) => s.reserve1 ?? null)),
      sp: joinColumn(rows.map((s) => s.sqrtPriceX96 ?? null)),
      bt: joinColumn(rows.map((s) => s.blockTime ?? null)),
      l: joinColumn(rows.map((s) => s.liquidity ?? null)),
    })}`,
  ];
}

interface PoolStateRow {
  pool: Uint8Array;
  block_number: string;
  log_index: number;
  reserve0: string | null;
  reserve1: string | null;
  sqrt_price_x96: string | null;
  block_time: string | null;
  liquidity: string | null;
}

function fromRow(r: PoolStateRow): PoolState {
  return {
    pool: toHex(r.pool) as Address,
    blockNumber: Number(r.block_number),
    logIndex: r.log_index,
    ...(r.block_time !== null ? { blockTime: Number(r.block_time) } : {}),
    ...(r.reserve0 !== null ? { reserve0: BigInt(r.reserve0) } : {}),
    ...(r.reserve1 !== null ? { reserve1: BigInt(r.reserve1) } : {}),
    ...(r.sqrt_price_x96 !== null ? { sqrtPriceX96: BigInt(r.sqrt_price_x96) } : {}),
    ...(r.liquidity !== null ? { liquidity: BigInt(r.liquidity) } : {}),
  };
}

/**
 * The stored states of each of `pools` at or before `block` that a rate from `since` (Unix
 * seconds) on needs: those after `since`, and the one in force at it (a row without a time counts
 * as older). Without `since`, the last state alone. Per pool, one backward probe of the key finds
 * that first row and one range of the key reads from it to `block`, so the cost follows the
 * window, not the table (ordering the whole table, as a DISTINCT ON does, sorts every row). A pool
 * whose rows all start after `since` is read whole, which is no more than the window either.
 */
export async function recentPoolStates(
  sql: Queryable,
  chainId: number,
  pools: readonly { address: Address }[],
  block: number,
  since: number | undefined,
): Promise<PoolState[]> {
  if (pools.length === 0) return [];
  const hexes = [...new Set(pools.map((p) => bare(p.address.toLowerCase())))];
  const rows = await sql<PoolStateRow[]>`
    SELECT s.pool, s.block_number, s.log_index, s.reserve0, s.reserve1, s.sqrt_price_x96,
           extract(epoch FROM s.block_time)::bigint::text AS block_time, s.liquidity
    FROM unnest(${hexes}::text[]) AS p(hex)
    CROSS JOIN LATERAL (
      SELECT block_number, log_index FROM pool_states
      WHERE chain_id = ${chainId} AND pool = decode(p.hex, 'hex') AND block_number <= ${block}
        AND (${since ?? null}::bigint IS NULL OR block_time IS NULL OR block_time <= to_timestamp(${since ?? null}::bigint))
      ORDER BY block_number DESC, log_index DESC
      LIMIT 1) a
    CROSS JOIN LATERAL (
      SELECT pool, block_number, log_index, reserve0, reserve1, sqrt_price_x96, block_time, liquidity
      FROM pool_states
      WHERE chain_id = ${chainId} AND pool = decode(p.hex, 'hex')
        AND block_number BETWEEN a.block_number AND ${block}
        AND NOT (block_number = a.block_number AND log_index < a.log_index)
      -- Not folded into a join: read per pool, as one range of the key.
      OFFSET 0) s`;
  // A pool whose every row is newer than `since` has no row in force at it: all its rows count.
  const found = new Set(rows.map((r) => toHex(r.pool)));
  const rest = hexes.filter((hex) => !found.has(`0x${hex}`));
  if (since === undefined || rest.length === 0) return rows.map(fromRow);
  const newer = await sql<PoolStateRow[]>`
    SELECT s.pool, s.block_number, s.log_index, s.reserve0, s.reserve1, s.sqrt_price_x96,
           extract(epoch FROM s.block_time)::bigint::text AS block_time, s.liquidity
    FROM unnest(${rest}::text[]) AS p(hex)
    CROSS JOIN LATERAL (
      SELECT pool, block_number, log_index, reserve0, reserve1, sqrt_price_x96, block_time, liquidity
      FROM pool_states
      WHERE chain_id = ${chainId} AND pool = decode(p.hex, 'hex') AND block_number <= ${block}
      OFFSET 0) s`;
  // In no particular order: the rate book puts them in chain order.
  return [...rows, ...newer].map(fromRow);
}

/** The last stored state of each of `pools` at or before `block`: one probe of the key per pool. */
export async function latestPoolStates(
  sql: Queryable,
  chainId: number,
  pools: readonly { address: Address }[],
  block: number,
): Promise<PoolState[]> {
  if (pools.length === 0) return [];
  const rows = await sql<PoolStateRow[]>`
    SELECT s.pool, s.block_number, s.log_index, s.reserve0, s.reserve1, s.sqrt_price_x96,
           extract(epoch FROM s.block_time)::bigint::text AS block_time, s.liquidity
    FROM unnest(${[...new Set(pools.map((p) => bare(p.address.toLowerCase())))]}::text[]) AS p(hex)
    CROSS JOIN LATERAL (
      SELECT pool, block_number, log_index, reserve0, reserve1, sqrt_price_x96, block_time, liquidity FROM pool_states
      WHERE chain_id = ${chainId} AND pool = decode(p.hex, 'hex') AND block_number <= ${block}
      ORDER BY block_number DESC, log_index DESC
      LIMIT 1) s`;
  return rows.map(fromRow);
}

export async function deletePoolStatesAfter(
  sql: Queryable,
  chainId: number,
  ancestor: number,
): Promise<void> {
  await sql`DELETE FROM pool_states WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
}
