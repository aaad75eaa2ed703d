import type { Address } from "../core/hex.ts";
import { rememberBlocks, setNextBlock } from "../store/chain-state.ts";
import type { ContractRecord } from "../store/contracts.ts";
import { upsertContracts } from "../store/contracts.ts";
import type { Sql } from "../store/database.ts";
import { applyOwnership, holderUnits } from "../store/ownership.ts";
import { insertFungibleTransfers, insertNftTransfers } from "../store/transfers.ts";
import { type FetchedBatch, timeOfBatch } from "./batch.ts";
import { computeEffects, touchedHolders } from "./effects.ts";
import type { ContractRegistry } from "./registry.ts";

/** Headers kept for reorg detection: more than any reorg the confirmation depths leave room for. */
export const RECENT_BLOCKS_KEPT = 256;

/**
 * Commits a batch and its checkpoint in one transaction: after a crash at any instant the
 * store holds either all of the batch or none of it, and indexing resumes at the checkpoint.
 */
export async function commitBatch(
  sql: Sql,
  chainId: number,
  batch: FetchedBatch,
  registry: ContractRegistry,
): Promise<void> {
  const timeOf = timeOfBatch(batch);
  // The indexer is the chain's only writer (it holds the chain's lock), so units read before
  // the transaction are still current inside it.
  const pairs = touchedHolders(batch.nft);
  const units = await holderUnits(sql, chainId, pairs);
  const effects = computeEffects(batch.nft, timeOf, (c, h) => units.get(c + h) ?? 0n);
  const records = registry.pendingRecords(batch.referenced, mintOf(batch));

  await sql.begin(async (tx) => {
    // Losing the last commits in a server crash only moves the checkpoint back with them (the
    // batch and its checkpoint are one transaction), so there is no need to wait for the flush.
    await tx`SET LOCAL synchronous_commit = off`;
    await insertNftTransfers(tx, chainId, batch.nft, timeOf);
    await insertFungibleTransfers(tx, chainId, batch.fungible, timeOf);
    await upsertContracts(tx, chainId, records);
    await applyOwnership(tx, chainId, effects);
    await rememberBlocks(tx, chainId, batch.headers, RECENT_BLOCKS_KEPT);
    await setNextBlock(tx, chainId, batch.to + 1);
  });
  registry.markStored(records);
}

function mintOf(batch: FetchedBatch): (address: Address) => ContractRecord["mint"] | undefined {
  const timeOf = timeOfBatch(batch);
  const created = new Map(batch.creations.map((c) => [c.address, c]));
  return (address) => {
    const creation = created.get(address);
    if (creation) {
      return {
        txHash: creation.txHash,
        blockNumber: creation.blockNumber,
        time: timeOf(creation.blockNumber),
        minter: creation.txFrom,
        creator: creation.creator,
        source: batch.creationSource,
      };
    }
    const seen = batch.firstSeen.get(address);
    if (!seen) return undefined;
    return {
      txHash: seen.txHash,
      blockNumber: seen.blockNumber,
      time: timeOf(seen.blockNumber),
      minter: seen.minter,
      creator: undefined,
      source: "first_event",
    };
  };
}
