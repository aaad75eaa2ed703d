import type { Address, Hex } from "../core/hex.ts";
import type { FungibleTransfer, NftTransfer, TransferStandard } from "../core/types.ts";
import { copyBytea, copyTimeOf, writeCopyRows } from "./copy.ts";
import { type Queryable, toHex } from "./database.ts";

type TimeOf = (blockNumber: number) => number;

/** Bulk-inserts NFT transfers with COPY. A row stored twice violates the primary key: it fails loudly. */
export async function insertNftTransfers(
  sql: Queryable,
  chainId: number,
  transfers: readonly NftTransfer[],
  timeOf: TimeOf,
): Promise<void> {
  if (transfers.length === 0) return;
  const stream = await sql`
    COPY nft_transfers (chain_id, contract, block_number, log_index, seq, token_id, from_address, to_address, amount,
                        tx_hash, tx_index, block_time, standard) FROM STDIN`.writable();
  const chain = String(chainId);
  const timeText = copyTimeOf(timeOf);
  await writeCopyRows(
    stream,
    transfers,
    (t) =>
      `${chain}\t${copyBytea(t.contract)}\t${t.blockNumber}\t${t.logIndex}\t${t.seq}\t${t.tokenId}\t${copyBytea(t.from)}\t${copyBytea(t.to)}\t${t.amount}\t${copyBytea(t.txHash)}\t${t.txIndex}\t${timeText(t.blockNumber)}\t${t.standard}`,
  );
}

export async function insertFungibleTransfers(
  sql: Queryable,
  chainId: number,
  transfers: readonly FungibleTransfer[],
  timeOf: TimeOf,
): Promise<void> {
  if (transfers.length === 0) return;
  const stream = await sql`
    COPY fungible_transfers (chain_id, contract, block_number, log_index, from_address, to_address, amount, tx_hash,
                             tx_index, block_time) FROM STDIN`.writable();
  const chain = String(chainId);
  const timeText = copyTimeOf(timeOf);
  await writeCopyRows(
    stream,
    transfers,
    (t) =>
      `${chain}\t${copyBytea(t.contract)}\t${t.blockNumber}\t${t.logIndex}\t${copyBytea(t.from)}\t${copyBytea(t.to)}\t${t.amount}\t${copyBytea(t.txHash)}\t${t.txIndex}\t${timeText(t.blockNumber)}`,
  );
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
