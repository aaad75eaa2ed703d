import type { Address } from "../core/hex.ts";
import { rememberBlocksStatements, setNextBlockStatement } from "../store/chain-state.ts";
import {
  type FirstSeenAt,
  reclassifyContractsStatements,
  upsertContractsStatements,
} from "../store/contracts.ts";
import { insertCreationsStatements } from "../store/creations.ts";
import type { Sql } from "../store/database.ts";
import {
  type EncodedOwnership,
  encodeOwnership,
  holderUnits,
  ownershipStatements,
} from "../store/ownership.ts";
import type { WriteSession } from "../store/session.ts";
import { insertSkippedLogsStatements } from "../store/skipped-logs.ts";
import {
  type EncodedNftTransfers,
  type EncodedTransfers,
  encodeFungibleTransfers,
  encodeNftTransfers,
  fungibleTransferStatements,
  nftTransferStatements,
} from "../store/transfers.ts";
import { type FetchedBatch, timeOfBatch } from "./batch.ts";
import { computeEffects, touchedHolders } from "./effects.ts";
import type { ContractRegistry } from "./registry.ts";

/** Headers kept for reorg detection: more than any reorg the confirmation depths leave room for. */
export const RECENT_BLOCKS_KEPT = 256;

/** Holder units after a batch, keyed by contract + holder: what the next batch starts from. */
export type UnitsAfter = ReadonlyMap<string, bigint>;

/** A batch with everything it changes worked out and encoded, ready to be written. */
export interface PreparedBatch {
  batch: FetchedBatch;
  unitsAfter: UnitsAfter;
  nft: EncodedNftTransfers;
  fungible: EncodedTransfers;
  ownership: EncodedOwnership;
}

/**
 * Works out what a batch changes and encodes it for the store. `previous` holds the units after
 * a batch that may still be being written: those pairs are taken from it, every other pair
 * from the store. The indexer is the chain's only writer (it holds the chain's lock), so units
 * read outside the write's transaction are still current when it commits.
 */
export async function prepareBatch(
  sql: Sql,
  chainId: number,
  batch: FetchedBatch,
  previous: UnitsAfter | undefined,
): Promise<PreparedBatch> {
  const pairs = touchedHolders(batch.nft);
  const stored = await holderUnits(
    sql,
    chainId,
    previous ? pairs.filter((p) => !previous.has(p.contract + p.holder)) : pairs,
  );
  const timeOf = timeOfBatch(batch);
  const effects = computeEffects(
    batch.nft,
    timeOf,
    (c, h) => previous?.get(c + h) ?? stored.get(c + h) ?? 0n,
  );
  return {
    batch,
    unitsAfter: new Map(effects.holders.map((h) => [h.contract + h.holder, h.units])),
    nft: encodeNftTransfers(batch.nft, timeOf),
    fungible: encodeFungibleTransfers(batch.fungible, timeOf),
    ownership: encodeOwnership(effects),
  };
}

/**
 * Commits a prepared batch and its checkpoint in one transaction: after a crash at any instant
 * the store holds either all of the batch or none of it, and indexing resumes at the checkpoint.
 */
export async function writeBatch(
  session: WriteSession,
  chainId: number,
  prepared: PreparedBatch,
  registry: ContractRegistry,
): Promise<void> {
  const { batch } = prepared;
  const timeOf = timeOfBatch(batch);
  const taken = registry.takeRecords(batch.contracts, firstSeenAt(batch));
  const { records, reclassified } = taken;
  await session.pipelined((tx) => [
    // Losing the last commits in a server crash only moves the checkpoint back with them (the
    // batch and its checkpoint are one transaction), so there is no need to wait for the flush.
    tx`SET LOCAL synchronous_commit = off`,
    ...nftTransferStatements(tx, chainId, prepared.nft),
    ...fungibleTransferStatements(tx, chainId, prepared.fungible),
    // Creations first: the contracts written next take their mint event from them.
    ...insertCreationsStatements(tx, chainId, batch.creations, batch.creationSource, timeOf),
    ...upsertContractsStatements(tx, chainId, records),
    ...reclassifyContractsStatements(tx, chainId, reclassified),
    ...insertSkippedLogsStatements(tx, chainId, batch.skipped),
    ...ownershipStatements(tx, chainId, prepared.ownership),
    ...rememberBlocksStatements(tx, chainId, batch.headers, RECENT_BLOCKS_KEPT),
    setNextBlockStatement(tx, chainId, batch.to + 1),
  ]);
  registry.markStored(taken);
}

function firstSeenAt(batch: FetchedBatch): (address: Address) => FirstSeenAt | undefined {
  const timeOf = timeOfBatch(batch);
  return (address) => {
    const seen = batch.firstSeen.get(address);
    if (!seen) return undefined;
    return {
      txHash: seen.txHash,
      blockNumber: seen.blockNumber,
      time: timeOf(seen.blockNumber),
      minter: seen.minter,
    };
  };
}
