import type { Address, Hex } from "../../core/hex.ts";
import type { FungibleTransfer, NftTransfer, TransferStandard } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

type TimeOf = (blockNumber: number) => number;

/**
 * Token movements as the columns of the statement that inserts them, each one comma-joined text
 * (see `column`), built before the transaction while the previous one runs.
 */
export interface EncodedTransfers {
  rows: number;
  contracts: string;
  blocks: string;
  logIndexes: string;
  froms: string;
  tos: string;
  amounts: string;
  txHashes: string;
  txIndexes: string;
  times: string;
}

export interface EncodedNftTransfers extends EncodedTransfers {
  seqs: string;
  tokenIds: string;
  standards: string;
}

/** The columns every movement has, NFT or fungible. */
export function encodeFungibleTransfers(
  transfers: readonly FungibleTransfer[],
  timeOf: TimeOf,
): EncodedTransfers {
  return {
    rows: transfers.length,
    contracts: joinColumn(transfers.map((t) => bare(t.contract))),
    blocks: joinColumn(transfers.map((t) => t.blockNumber)),
    logIndexes: joinColumn(transfers.map((t) => t.logIndex)),
    froms: joinColumn(transfers.map((t) => bare(t.from))),
    tos: joinColumn(transfers.map((t) => bare(t.to))),
    amounts: joinColumn(transfers.map((t) => t.amount)),
    txHashes: joinColumn(transfers.map((t) => bare(t.txHash))),
    txIndexes: joinColumn(transfers.map((t) => t.txIndex)),
    times: joinColumn(transfers.map((t) => timeOf(t.blockNumber))),
  };
}

export function encodeNftTransfers(transfers: readonly NftTransfer[], timeOf: TimeOf): EncodedNftTransfers {
  return {
    ...encodeFungibleTransfers(transfers, timeOf),
    seqs: joinColumn(transfers.map((t) => t.seq)),
    tokenIds: joinColumn(transfers.map((t) => t.tokenId)),
    standards: joinColumn(transfers.map((t) => t.standard)),
  };
}

/** Inserts encoded NFT transfers. A row stored twice violates the primary key: it fails loudly. */
export function nftTransferStatements(sql: Queryable, chainId: number, e: EncodedNftTransfers): Statement[] {
  if (e.rows === 0) return [];
  const rows = bulkRows(sql, {
    c: e.contracts,
    b: e.blocks,
    li: e.logIndexes,
    sq: e.seqs,
    tid: e.tokenIds,
    f: e.froms,
    t: e.tos,
    a: e.amounts,
    tx: e.txHashes,
    ti: e.txIndexes,
    tm: e.times,
    st: e.standards,
  });
  return [
    sql`
    INSERT INTO nft_transfers (chain_id, contract, block_number, log_index, seq, token_id, from_address, to_address,
                               amount, tx_hash, tx_index, block_time, standard)
    SELECT ${chainId}, decode(c, 'hex'), b::bigint, li::integer, sq::integer, tid::numeric, decode(f, 'hex'),
           decode(t, 'hex'), a::numeric, decode(tx, 'hex'), ti::integer, to_timestamp(tm::bigint), st
    FROM ${rows}`,
  ];
}

export function fungibleTransferStatements(
  sql: Queryable,
  chainId: number,
  e: EncodedTransfers,
): Statement[] {
  if (e.rows === 0) return [];
  const rows = bulkRows(sql, {
    c: e.contracts,
    b: e.blocks,
    li: e.logIndexes,
    f: e.froms,
    t: e.tos,
    a: e.amounts,
    tx: e.txHashes,
    ti: e.txIndexes,
    tm: e.times,
  });
  return [
    sql`
    INSERT INTO fungible_transfers (chain_id, contract, block_number, log_index, from_address, to_address, amount,
                                    tx_hash, tx_index, block_time)
    SELECT ${chainId}, decode(c, 'hex'), b::bigint, li::integer, decode(f, 'hex'), decode(t, 'hex'), a::numeric,
           decode(tx, 'hex'), ti::integer, to_timestamp(tm::bigint)
    FROM ${rows}`,
  ];
}

interface TransferRow {
  contract: Uint8Array;
  block_number: string;
  log_index: number;
  seq: number;
  token_id: string;
  from_address: Uint8Array;
  to_address: Uint8Array;
  amount: string;
  tx_hash: Uint8Array;
  tx_index: number;
  block_time: Date;
  standard: TransferStandard;
}

/** NFT transfers in blocks after `block`, in chain order, with their block times. */
export async function nftTransfersAfter(
  sql: Queryable,
  chainId: number,
  block: number,
): Promise<{ transfers: NftTransfer[]; times: Map<number, number> }> {
  const rows = await sql<TransferRow[]>`
    SELECT contract, block_number, log_index, seq, token_id, from_address, to_address, amount, tx_hash, tx_index,
           block_time, standard
    FROM nft_transfers WHERE chain_id = ${chainId} AND block_number > ${block}
    ORDER BY block_number, log_index, seq`;
  const times = new Map<number, number>();
  const transfers = rows.map((r): NftTransfer => {
    const blockNumber = Number(r.block_number);
    times.set(blockNumber, Math.floor(r.block_time.getTime() / 1000));
    return {
      contract: toHex(r.contract) as Address,
      tokenId: BigInt(r.token_id),
      from: toHex(r.from_address) as Address,
      to: toHex(r.to_address) as Address,
      amount: BigInt(r.amount),
      blockNumber,
      logIndex: r.log_index,
      seq: r.seq,
      txHash: toHex(r.tx_hash) as Hex,
      txIndex: r.tx_index,
      standard: r.standard,
    };
  });
  return { transfers, times };
}

export async function deleteTransfersAfter(sql: Queryable, chainId: number, block: number): Promise<void> {
  await sql`DELETE FROM nft_transfers WHERE chain_id = ${chainId} AND block_number > ${block}`;
  await sql`DELETE FROM fungible_transfers WHERE chain_id = ${chainId} AND block_number > ${block}`;
}
