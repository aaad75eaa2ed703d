import { isBurnAddress } from "../core/burn.ts";
import type { NftTransfer } from "../core/types.ts";
import { bare, column, type Queryable } from "./database.ts";
import type { Statement } from "./session.ts";

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
    contracts: column(mints.map((t) => bare(t.contract))),
    tokenIds: column(mints.map((t) => t.tokenId)),
    blocks: column(mints.map((t) => t.blockNumber)),
    logIndexes: column(mints.map((t) => t.logIndex)),
    seqs: column(mints.map((t) => t.seq)),
    txHashes: column(mints.map((t) => bare(t.txHash))),
    times: column(mints.map((t) => timeOf(t.blockNumber))),
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
      FROM ROWS FROM (string_to_table(${e.contracts}, ','), string_to_table(${e.tokenIds}, ','),
                  string_to_table(${e.blocks}, ','), string_to_table(${e.logIndexes}, ','),
                  string_to_table(${e.seqs}, ','), string_to_table(${e.txHashes}, ','), string_to_table(${e.times}, ','))
        AS u(c, tid, b, li, sq, tx, tm)
      ON CONFLICT (chain_id, contract, token_id) DO NOTHING
      RETURNING contract, token_id)
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT ${chainId}, contract, token_id, 'mint' FROM minted
    ON CONFLICT (chain_id, contract, token_id) DO NOTHING`,
  ];
}

export async function deleteTokensMintedAfter(sql: Queryable, chainId: number, block: number): Promise<void> {
  await sql`DELETE FROM tokens WHERE chain_id = ${chainId} AND block_number > ${block}`;
}
