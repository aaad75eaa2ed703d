import type { Hex } from "../../core/hex.ts";
import type { BlockHeader, Rate } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

export interface ChainIdentity {
  chainId: number;
  name: string;
  nativeSymbol: string;
  startBlock: number;
}

/**
 * Registers the chain on first use. Returns the first block not yet indexed and the block the
 * chain was first indexed from: a start block applies to a chain's first run only.
 */
export async function ensureChain(
  sql: Queryable,
  chain: ChainIdentity,
): Promise<{ nextBlock: number; startBlock: number }> {
  const [row] = await sql<{ next_block: string; start_block: string }[]>`
    INSERT INTO chains (chain_id, name, native_symbol, start_block, next_block)
    VALUES (${chain.chainId}, ${chain.name}, ${chain.nativeSymbol}, ${chain.startBlock}, ${chain.startBlock})
    ON CONFLICT (chain_id) DO UPDATE SET name = excluded.name, native_symbol = excluded.native_symbol
    RETURNING next_block, start_block`;
  if (!row) throw new Error(`chain ${chain.chainId} could not be registered`);
  return { nextBlock: Number(row.next_block), startBlock: Number(row.start_block) };
}

export async function nextBlock(sql: Queryable, chainId: number): Promise<number> {
  const [row] = await sql<
    { next_block: string }[]
  >`SELECT next_block FROM chains WHERE chain_id = ${chainId}`;
  if (!row) throw new Error(`chain ${chainId} is not registered`);
  return Number(row.next_block);
}

export async function setNextBlock(sql: Queryable, chainId: number, next: number): Promise<void> {
  await setNextBlockStatement(sql, chainId, next);
}

export function setNextBlockStatement(sql: Queryable, chainId: number, next: number): Statement {
  return sql`UPDATE chains SET next_block = ${next}, updated_at = now() WHERE chain_id = ${chainId}`;
}

/**
 * Records the node's head as the indexer last read it, with the depth it keeps behind it, and the
 * time (the indexer's heartbeat, which the API's readiness reads). One single-row UPDATE outside
 * any batch; `updated_at`, the served data's version, is left alone so no cached answer is dropped.
 */
export async function recordHead(
  sql: Queryable,
  chainId: number,
  head: number,
  confirmations: number,
): Promise<void> {
  await sql`
    UPDATE chains
    SET head_block = ${head}, confirmations = ${confirmations}, heartbeat_at = now(),
        head_moved_at = CASE WHEN head_block IS DISTINCT FROM ${head} OR head_moved_at IS NULL THEN now()
                             ELSE head_moved_at END
    WHERE chain_id = ${chainId}`;
}

/** The stored hash of an indexed block, if it is still among the recent ones. */
export async function storedBlockHash(
  sql: Queryable,
  chainId: number,
  number: number,
): Promise<Hex | undefined> {
  const [row] = await sql<{ hash: Uint8Array }[]>`
    SELECT hash FROM recent_blocks WHERE chain_id = ${chainId} AND number = ${number}`;
  return row ? toHex(row.hash) : undefined;
}

/** The stored time (Unix seconds) of an indexed block, if it is still among the recent ones. */
export async function storedBlockTime(
  sql: Queryable,
  chainId: number,
  number: number,
): Promise<number | undefined> {
  const [row] = await sql<{ t: string }[]>`
    SELECT extract(epoch FROM block_time)::bigint::text AS t FROM recent_blocks
    WHERE chain_id = ${chainId} AND number = ${number}`;
  return row ? Number(row.t) : undefined;
}

/** Stored hashes of the recent blocks in [from, to]. */
export async function storedBlockHashes(
  sql: Queryable,
  chainId: number,
  from: number,
  to: number,
): Promise<Map<number, Hex>> {
  const rows = await sql<{ number: string; hash: Uint8Array }[]>`
    SELECT number, hash FROM recent_blocks WHERE chain_id = ${chainId} AND number BETWEEN ${from} AND ${to}`;
  return new Map(rows.map((r) => [Number(r.number), toHex(r.hash)]));
}

export async function oldestRecentBlock(sql: Queryable, chainId: number): Promise<number | undefined> {
  const [row] = await sql<
    { n: string | null }[]
  >`SELECT min(number) AS n FROM recent_blocks WHERE chain_id = ${chainId}`;
  return row?.n == null ? undefined : Number(row.n);
}

/** Remembers the newest headers and forgets those older than `keep` blocks behind the newest. */
export function rememberBlocksStatements(
  sql: Queryable,
  chainId: number,
  headers: readonly BlockHeader[],
  keep: number,
  /** Dollars per wei at each block, when the chain has a dollar rate there. */
  usdPerWeiAt: (block: number) => Rate | undefined = () => undefined,
): Statement[] {
  const newest = headers.at(-1);
  if (!newest) return [];
  const recent = headers.slice(-keep);
  const rates = recent.map((b) => usdPerWeiAt(b.number));
  return [
    sql`
    INSERT INTO recent_blocks (chain_id, number, hash, parent_hash, block_time, usd_per_wei_num, usd_per_wei_den)
    SELECT ${chainId}, n::bigint, decode(h, 'hex'), decode(p, 'hex'), to_timestamp(t::bigint),
           nullif(un, '')::numeric, nullif(ud, '')::numeric
    FROM ${bulkRows(sql, {
      n: joinColumn(recent.map((b) => b.number)),
      h: joinColumn(recent.map((b) => bare(b.hash))),
      p: joinColumn(recent.map((b) => bare(b.parentHash))),
      t: joinColumn(recent.map((b) => b.timestamp)),
      un: joinColumn(rates.map((r) => r?.num ?? null)),
      ud: joinColumn(rates.map((r) => r?.den ?? null)),
    })}
    ON CONFLICT (chain_id, number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash,
      block_time = excluded.block_time, usd_per_wei_num = excluded.usd_per_wei_num,
      usd_per_wei_den = excluded.usd_per_wei_den`,
    sql`DELETE FROM recent_blocks WHERE chain_id = ${chainId} AND number <= ${newest.number - keep}`,
  ];
}

export async function forgetBlocksAfter(sql: Queryable, chainId: number, block: number): Promise<void> {
  await sql`DELETE FROM recent_blocks WHERE chain_id = ${chainId} AND number > ${block}`;
}

/**
 * The dollar rate at the newest indexed block (see migration 0030): undefined when the chain had
 * none there.
 */
export async function newestUsdPerWei(sql: Queryable, chainId: number): Promise<Rate | undefined> {
  const [row] = await sql<{ num: string | null; den: string | null }[]>`
    SELECT usd_per_wei_num::text AS num, usd_per_wei_den::text AS den FROM recent_blocks
    WHERE chain_id = ${chainId} ORDER BY number DESC LIMIT 1`;
  return row?.num && row.den ? { num: BigInt(row.num), den: BigInt(row.den) } : undefined;
}
