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
  return {
    rows: mints.length,
    contracts: joinColumn(mints.map((t) => bare(t.contract))),
    tokenIds: joinColumn(mints.map((t) => t.tokenId)),
    blocks: joinColumn(mints.map((t) => t.blockNumber)),
    logIndexes: joinColumn(mints.map((t) => t.logIndex)),
    seqs: joinColumn(mints.map((t) => t.seq)),
    txHashes: joinColumn(mints.map((t) => bare(t.txHash))),
    times: joinColumn(mints.map((t) => timeOf(t.blockNumber))),
  };
}

/** Records tokens minted for the first time; a token already known keeps its first mint. */
export function mintStatements(sql: Queryable, chainId: number, e: EncodedMints): Statement[] {
  if (e.rows === 0) return [];
  return [
    // A token seen minted for the first time is queued for its metadata in the same transaction.
    sql`
    WITH minted AS (
      INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
      SELECT ${chainId}, decode(c, 'hex'), tid::numeric, b::bigint, li::integer, sq::integer, decode(tx, 'hex'),
             to_timestamp(tm::bigint)
      FROM ${bulkRows(sql, { c: e.contracts, tid: e.tokenIds, b: e.blocks, li: e.logIndexes, sq: e.seqs, tx: e.txHashes, tm: e.times })}
      ON CONFLICT (chain_id, contract, token_id) DO NOTHING
      RETURNING contract, token_id)
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT ${chainId}, contract, token_id, 'mint' FROM minted
    ON CONFLICT (chain_id, contract, token_id) DO NOTHING`,
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
 * Forgets tokens first minted after `block`, with their queued metadata work and what was fetched
 * for them: a token minted again on the new branch is queued again by its mint, and its URI there
 * may differ. Tokens minted earlier keep their metadata. Three statements, in this order, so a
 * worker storing an outcome meanwhile either committed before the second one looks (and is
 * forgotten with the rest) or finds its token no longer queued (and stores nothing).
 */
export async function deleteTokensMintedAfter(sql: Queryable, chainId: number, block: number): Promise<void> {
  const minted = sql`
    SELECT contract, token_id FROM tokens WHERE chain_id = ${chainId} AND block_number > ${block}`;
  await sql`
    DELETE FROM metadata_queue WHERE chain_id = ${chainId} AND (contract, token_id) IN (${minted})`;
  await sql`
    DELETE FROM token_metadata WHERE chain_id = ${chainId} AND (contract, token_id) IN (${minted})`;
  await sql`DELETE FROM tokens WHERE chain_id = ${chainId} AND block_number > ${block}`;
}
