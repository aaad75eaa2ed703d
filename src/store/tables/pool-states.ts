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
    INSERT INTO pool_states (chain_id, pool, block_number, log_index, reserve0, reserve1, sqrt_price_x96)
    SELECT ${chainId}, decode(p, 'hex'), b::bigint, li::integer, nullif(r0, '')::numeric, nullif(r1, '')::numeric,
           nullif(sp, '')::numeric
    FROM ${bulkRows(sql, {
      p: joinColumn(rows.map((s) => bare(s.pool))),
      b: joinColumn(rows.map((s) => s.blockNumber)),
      li: joinColumn(rows.map((s) => s.logIndex)),
      r0: joinColumn(rows.map((s) => s.reserve0 ?? null)),
      r1: joinColumn(rows.map((s) => s.reserve1 ?? null)),
      sp: joinColumn(rows.map((s) => s.sqrtPriceX96 ?? null)),
    })}`,
  ];
}

/**
 * The last stored state of each of `pools` at or before `block`: what the exchange rates resume
 * from. One probe of the key per pool, read backwards from `block`, so the cost does not grow with
 * the table (ordering the whole table by pool and block, as a DISTINCT ON does, sorts every row).
 */
export async function latestPoolStates(
  sql: Queryable,
  chainId: number,
  pools: readonly { address: Address }[],
  block: number,
): Promise<PoolState[]> {
  if (pools.length === 0) return [];
  const rows = await sql<
    {
      pool: Uint8Array;
      block_number: string;
      log_index: number;
      reserve0: string | null;
      reserve1: string | null;
      sqrt_price_x96: string | null;
    }[]
  >`
    SELECT s.pool, s.block_number, s.log_index, s.reserve0, s.reserve1, s.sqrt_price_x96
    FROM unnest(${[...new Set(pools.map((p) => bare(p.address.toLowerCase())))]}::text[]) AS p(hex)
    CROSS JOIN LATERAL (
      SELECT pool, block_number, log_index, reserve0, reserve1, sqrt_price_x96 FROM pool_states
      WHERE chain_id = ${chainId} AND pool = decode(p.hex, 'hex') AND block_number <= ${block}
      ORDER BY block_number DESC, log_index DESC
      LIMIT 1) s`;
  return rows.map((r) => ({
    pool: toHex(r.pool) as Address,
    blockNumber: Number(r.block_number),
    logIndex: r.log_index,
    ...(r.reserve0 !== null ? { reserve0: BigInt(r.reserve0) } : {}),
    ...(r.reserve1 !== null ? { reserve1: BigInt(r.reserve1) } : {}),
    ...(r.sqrt_price_x96 !== null ? { sqrtPriceX96: BigInt(r.sqrt_price_x96) } : {}),
  }));
}

export async function deletePoolStatesAfter(
  sql: Queryable,
  chainId: number,
  ancestor: number,
): Promise<void> {
  await sql`DELETE FROM pool_states WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
}
