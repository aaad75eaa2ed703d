import { isBurnAddress } from "../../core/burn.ts";
import type { MetadataUpdate, NftTransfer } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

/** A batch's mints, first of each token, as the columns of the statement that records them. */
export interface EncodedMints {
  rows: number;
  contracts: string;
  tokenIds: string;
  blocks: string;
  logIndexes: string;
  seqs: string;
  txHashes: string;
  times: string;
  /** Where the batch's mints are, as runs of whole blocks holding at most `MINTS_PER_RANGE` of them. */
  rangeFirsts: string;
  rangeLasts: string;
}

/**
 * The most mints one recorded range holds (more only when one block holds more): the most tokens a
 * worker moves into the queue at once.
 */
export const MINTS_PER_RANGE = 1_000;

/** Runs of whole blocks of chain-ordered mints, each holding at most `perRange` of them (or one block). */
export function mintRanges(
  blocks: readonly number[],
  perRange: number = MINTS_PER_RANGE,
): { first: number; last: number }[] {
  const ranges: { first: number; last: number }[] = [];
  let first = -1;
  let last = -1;
  let held = 0;
  for (let i = 0; i < blocks.length; ) {
    const block = blocks[i] as number;
    let end = i + 1;
    while (blocks[end] === block) end++;
    if (held > 0 && held + (end - i) > perRange) {
      ranges.push({ first, last });
      held = 0;
    }
    if (held === 0) first = block;
    last = block;
    held += end - i;
    i = end;
  }
  if (held > 0) ranges.push({ first, last });
  return ranges;
}

/** The first mint of each token in chain-ordered transfers: a transfer from the zero or a burn address. */
export function encodeMints(
  transfers: readonly NftTransfer[],
  timeOf: (block: number) => number,
): EncodedMints {
  const seen = new Set<string>();
  const mints: NftTransfer[] = [];
  for (const t of transfers) {
    if (!isBurnAddress(t.from)) continue;
    const key = `${t.contract}:${t.tokenId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    mints.push(t);
  }
  const ranges = mintRanges(mints.map((t) => t.blockNumber));
  return {
    rows: mints.length,
    contracts: joinColumn(mints.map((t) => bare(t.contract))),
    tokenIds: joinColumn(mints.map((t) => t.tokenId)),
    blocks: joinColumn(mints.map((t) => t.blockNumber)),
    logIndexes: joinColumn(mints.map((t) => t.logIndex)),
    seqs: joinColumn(mints.map((t) => t.seq)),
    txHashes: joinColumn(mints.map((t) => bare(t.txHash))),
    times: joinColumn(mints.map((t) => timeOf(t.blockNumber))),
    rangeFirsts: joinColumn(ranges.map((r) => r.first)),
    rangeLasts: joinColumn(ranges.map((r) => r.last)),
  };
}

/**
 * Records tokens minted for the first time (a token already known keeps its first mint), and the
 * block ranges of the batch's mints: the metadata worker queues the tokens first minted in a range
 * when it gets to it, so a mint costs the indexer no queue row.
 */
export function mintStatements(sql: Queryable, chainId: number, e: EncodedMints): Statement[] {
  if (e.rows === 0) return [];
  return [
    sql`
    INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
    SELECT ${chainId}, decode(c, 'hex'), tid::numeric, b::bigint, li::integer, sq::integer, decode(tx, 'hex'),
           to_timestamp(tm::bigint)
    FROM ${bulkRows(sql, { c: e.contracts, tid: e.tokenIds, b: e.blocks, li: e.logIndexes, sq: e.seqs, tx: e.txHashes, tm: e.times })}
    ON CONFLICT (chain_id, contract, token_id) DO NOTHING`,
    // Ranges never overlap (batches do not, and a rollback cuts those it reaches); one starting where
    // another is recorded is merged into it rather than failing the batch.
    sql`
    INSERT INTO metadata_mint_ranges (chain_id, first_block, last_block)
    SELECT ${chainId}, f::bigint, l::bigint FROM ${bulkRows(sql, { f: e.rangeFirsts, l: e.rangeLasts })}
    ON CONFLICT (chain_id, first_block) DO UPDATE
      SET last_block = greatest(metadata_mint_ranges.last_block, excluded.last_block)`,
  ];
}

/**
 * Queues again the known tokens in EIP-4906 update ranges (merged: no token is named twice). Only
 * tokens the store knows are queued, so a range of "every token" costs what the collection holds,
 * not 2^256; tokens already due are left out before anything is written or locked, which keeps a
 * contract announcing updates in every block cheap while the worker is behind. A token being
 * worked on, or waiting out a backoff, is due again at once; its attempts still count, so a
 * contract announcing updates of a token whose host is down cannot keep it from failing.
 */
export function metadataUpdateStatements(
  sql: Queryable,
  chainId: number,
  updates: readonly MetadataUpdate[],
): Statement[] {
  if (updates.length === 0) return [];
  return [
    sql`
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT ${chainId}::bigint, t.contract, t.token_id, 'update'
    FROM ${bulkRows(sql, {
      c: joinColumn(updates.map((u) => bare(u.contract))),
      lo: joinColumn(updates.map((u) => u.fromTokenId)),
      hi: joinColumn(updates.map((u) => u.toTokenId)),
    })}
    JOIN tokens t ON t.chain_id = ${chainId} AND t.contract = decode(u.c, 'hex')
                 AND t.token_id BETWEEN u.lo::numeric AND u.hi::numeric
    WHERE NOT EXISTS (SELECT 1 FROM metadata_queue q
                      WHERE q.chain_id = ${chainId} AND q.contract = t.contract AND q.token_id = t.token_id
                        AND q.due_at <= now())
    ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET due_at = now(), reason = excluded.reason`,
  ];
}

/**
 * Forgets tokens first minted after `block`, with their pending metadata work (ranges and queue)
 * and what was fetched for them: a token minted again on the new branch is queued again by its
 * mint, and its URI there may differ. Tokens minted earlier keep their metadata.
 *
 * In this order, against a worker moving a range into the queue or storing an outcome meanwhile:
 * the ranges first, which waits for a worker moving one of them to commit (its tokens are then
 * queued, and forgotten by the next statement) and keeps the rest from being moved until this
 * commits; then the queue, which a worker storing an outcome locks first, so that worker either
 * committed before the queue is looked at (and its outcome is forgotten with the rest) or finds its
 * token no longer queued (and stores nothing); then what was fetched, then the tokens.
 */
export async function deleteTokensMintedAfter(sql: Queryable, chainId: number, block: number): Promise<void> {
  await sql`DELETE FROM metadata_mint_ranges WHERE chain_id = ${chainId} AND first_block > ${block}`;
  await sql`
    UPDATE metadata_mint_ranges SET last_block = ${block} WHERE chain_id = ${chainId} AND last_block > ${block}`;
  const minted = sql`
    SELECT contract, token_id FROM tokens WHERE chain_id = ${chainId} AND block_number > ${block}`;
  await sql`
    DELETE FROM metadata_queue WHERE chain_id = ${chainId} AND (contract, token_id) IN (${minted})`;
  await sql`
    DELETE FROM token_metadata WHERE chain_id = ${chainId} AND (contract, token_id) IN (${minted})`;
  await sql`DELETE FROM tokens WHERE chain_id = ${chainId} AND block_number > ${block}`;
}

/**
 * The tokens whose metadata is pending, as a query of (chain_id, contract, token_id) in order:
 * those queued, and those first minted in a recorded range (a token fetched meanwhile, by an
 * update or a refresh, is skipped when its range is moved). Unlike the ranges themselves, which
 * follow where batches ended, a function of the chain and the worker's progress alone.
 */
export const PENDING_METADATA_SQL = `
  SELECT chain_id, contract, token_id FROM metadata_queue
  UNION
  SELECT t.chain_id, t.contract, t.token_id
  FROM metadata_mint_ranges r
  JOIN tokens t ON t.chain_id = r.chain_id AND t.block_number BETWEEN r.first_block AND r.last_block
  ORDER BY chain_id, contract, token_id`;
