/**
 * The ownership histories of collections older than the start block (migration 0014): which
 * collections have one, how far each was read, the net units read so far, and the transaction that
 * adds a finished history to the collection's ownership.
 */
import type { Address } from "../../core/hex.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import { mergeBalances } from "./ownership.ts";

/** The NFT types whose transfers make ownership. */
const NFT_TYPES = ["TYPE_ERC721", "TYPE_ERC1155", "TYPE_ERC721_LEGACY", "TYPE_CRYPTOPUNKS"];

/**
 * Gives every NFT collection that may be older than the start block a history to read: those whose
 * deployment was not observed (their mint event is where they were first seen). A deployment that
 * was observed is at or after the start block, so that collection's history is complete already.
 */
export async function registerHistories(
  sql: Queryable,
  chainId: number,
  endBlock: number,
  /** Only contracts discovered at or after this block (those before were registered already). */
  discoveredFrom: number,
): Promise<number> {
  const rows = await sql`
    INSERT INTO ownership_histories (chain_id, contract, end_block, next_block)
    SELECT chain_id, address, ${endBlock}, 0 FROM contracts
    WHERE chain_id = ${chainId} AND discovered_block >= ${discoveredFrom}
      AND mint_source = 'first_event' AND types && ${NFT_TYPES}::text[]
    ON CONFLICT (chain_id, contract) DO NOTHING
    RETURNING contract`;
  return rows.length;
}

export interface HistoryGroup {
  /** The first block not yet read, the same for every collection of the group. */
  from: number;
  end: number;
  contracts: Address[];
  /** The types of each collection, to read its logs with. */
  types: Map<Address, string[]>;
}

/** Up to `limit` collections whose reading is furthest behind and at the same block, read together. */
export async function nextHistoryGroup(
  sql: Queryable,
  chainId: number,
  limit: number,
): Promise<HistoryGroup | undefined> {
  const rows = await sql<{ contract: Uint8Array; next_block: string; end_block: string; types: string[] }[]>`
    SELECT h.contract, h.next_block::text, h.end_block::text, c.types
    FROM ownership_histories h JOIN contracts c ON c.chain_id = h.chain_id AND c.address = h.contract
    WHERE h.chain_id = ${chainId} AND h.next_block < h.end_block
      AND h.next_block = (SELECT min(next_block) FROM ownership_histories
                          WHERE chain_id = ${chainId} AND next_block < end_block)
    ORDER BY h.contract LIMIT ${limit}`;
  const first = rows[0];
  if (!first) return undefined;
  const types = new Map(rows.map((r) => [toHex(r.contract) as Address, r.types]));
  return {
    from: Number(first.next_block),
    end: Number(first.end_block),
    contracts: [...types.keys()],
    types,
  };
}

/** What reading blocks [from, to] of a group of collections found. */
export interface HistoryChunk {
  contracts: readonly Address[];
  to: number;
  balances: ReadonlyArray<{ contract: Address; tokenId: bigint; holder: Address; delta: bigint }>;
  totals: ReadonlyArray<{
    contract: Address;
    minted: bigint;
    burned: bigint;
    transfers: number;
    skipped: number;
  }>;
}

/** Adds a chunk's net units and totals, and moves its collections' reading past it: one transaction. */
export async function storeHistoryChunk(tx: Queryable, chainId: number, chunk: HistoryChunk): Promise<void> {
  const { balances, totals } = chunk;
  if (balances.length > 0) {
    await mergeBalances(tx, "ownership_history_balances", chainId, {
      c: joinColumn(balances.map((b) => bare(b.contract))),
      tid: joinColumn(balances.map((b) => b.tokenId)),
      h: joinColumn(balances.map((b) => bare(b.holder))),
      d: joinColumn(balances.map((b) => b.delta)),
    });
  }
  const byContract = new Map(totals.map((t) => [t.contract, t]));
  const rows = chunk.contracts.map(
    (contract) => byContract.get(contract) ?? { contract, minted: 0n, burned: 0n, transfers: 0, skipped: 0 },
  );
  await tx`
    UPDATE ownership_histories h SET next_block = ${chunk.to + 1},
      minted = h.minted + s.m::numeric, burned = h.burned + s.b::numeric,
      transfers = h.transfers + s.n::bigint, skipped = h.skipped + s.k::bigint
    FROM ${bulkRows(
      tx,
      {
        c: joinColumn(rows.map((r) => bare(r.contract))),
        m: joinColumn(rows.map((r) => r.minted)),
        b: joinColumn(rows.map((r) => r.burned)),
        n: joinColumn(rows.map((r) => r.transfers)),
        k: joinColumn(rows.map((r) => r.skipped)),
      },
      { joined: true, alias: "s" },
    )}
    WHERE h.chain_id = ${chainId} AND h.contract = decode(s.c, 'hex')`;
}

/** Collections read to their end block whose history is not yet part of their ownership. */
export async function readHistories(sql: Queryable, chainId: number): Promise<Address[]> {
  const rows = await sql<{ contract: Uint8Array }[]>`
    SELECT contract FROM ownership_histories
    WHERE chain_id = ${chainId} AND next_block >= end_block AND applied_at IS NULL
    ORDER BY contract`;
  return rows.map((r) => toHex(r.contract) as Address);
}

/**
 * Adds a collection's read history to its ownership, in the caller's transaction (the indexer's,
 * between two batches): its net units to the balances and the holders, its mints, burns and
 * transfers to the totals, and the holder count counted again. Whatever order the two parts were
 * read in, the sums are the units held now; the count is of the holders left with units.
 */
export async function applyHistory(
  tx: Queryable,
  chainId: number,
  contract: Address,
  next: number,
): Promise<void> {
  const address = Buffer.from(bare(contract), "hex");
  await tx`
    MERGE INTO token_balances t
    USING (SELECT token_id, holder, amount FROM ownership_history_balances
           WHERE chain_id = ${chainId} AND contract = ${address}) s
    ON t.chain_id = ${chainId} AND t.contract = ${address} AND t.token_id = s.token_id AND t.holder = s.holder
    WHEN MATCHED AND t.amount + s.amount = 0 THEN DELETE
    WHEN MATCHED THEN UPDATE SET amount = t.amount + s.amount
    WHEN NOT MATCHED THEN INSERT (chain_id, contract, token_id, holder, amount)
      VALUES (${chainId}, ${address}, s.token_id, s.holder, s.amount)`;
  await tx`
    MERGE INTO collection_holders t
    USING (SELECT holder, sum(amount) AS units FROM ownership_history_balances
           WHERE chain_id = ${chainId} AND contract = ${address}
           GROUP BY holder HAVING sum(amount) <> 0) s
    ON t.chain_id = ${chainId} AND t.contract = ${address} AND t.holder = s.holder
    WHEN MATCHED AND t.units + s.units = 0 THEN DELETE
    WHEN MATCHED THEN UPDATE SET units = t.units + s.units
    WHEN NOT MATCHED THEN INSERT (chain_id, contract, holder, units) VALUES (${chainId}, ${address}, s.holder, s.units)`;
  await tx`
    INSERT INTO collection_stats AS t (chain_id, contract, minted, burned, holders, transfers)
    SELECT chain_id, contract, minted, burned, 0, transfers FROM ownership_histories
    WHERE chain_id = ${chainId} AND contract = ${address}
    ON CONFLICT (chain_id, contract) DO UPDATE SET
      minted = t.minted + excluded.minted, burned = t.burned + excluded.burned, transfers = t.transfers + excluded.transfers`;
  // The count as the indexer keeps it: the holders with units (one range of the owners index).
  await tx`
    UPDATE collection_stats SET holders = (
      SELECT count(*) FROM collection_holders WHERE chain_id = ${chainId} AND contract = ${address} AND -units < 0)
    WHERE chain_id = ${chainId} AND contract = ${address}`;
  await tx`DELETE FROM ownership_history_balances WHERE chain_id = ${chainId} AND contract = ${address}`;
  await tx`
    UPDATE ownership_histories SET applied_at = ${next} WHERE chain_id = ${chainId} AND contract = ${address}`;
  // The served data changed without a batch: its version moves, so no cached answer outlives it.
  await tx`UPDATE chains SET updated_at = clock_timestamp() WHERE chain_id = ${chainId}`;
}
