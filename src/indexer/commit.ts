import type { Address } from "../core/hex.ts";
import type { Sql } from "../store/pg/database.ts";
import type { WriteSession } from "../store/pg/session.ts";
import { rememberBlocksStatements, setNextBlockStatement } from "../store/tables/chain-state.ts";
import {
  type FirstSeenAt,
  reclassifyContractsStatements,
  upsertContractsStatements,
} from "../store/tables/contracts.ts";
import { insertCreationsStatements } from "../store/tables/creations.ts";
import { dayStatements, type TouchedDays, touchedDays } from "../store/tables/days.ts";
import {
  type EncodedOwnership,
  encodeOwnership,
  holderUnits,
  ownershipStatements,
} from "../store/tables/ownership.ts";
import { poolStateStatements } from "../store/tables/pool-states.ts";
import {
  type EncodedSales,
  encodeSales,
  latestPunkBids,
  type OpenBid,
  punkBidStatements,
  punkKey,
  salesStatements,
  tokenKey,
} from "../store/tables/sales.ts";
import { insertSkippedLogsStatements } from "../store/tables/skipped-logs.ts";
import {
  type EncodedMints,
  encodeMints,
  metadataUpdateStatements,
  mintStatements,
} from "../store/tables/tokens.ts";
import {
  type EncodedNftTransfers,
  type EncodedTransfers,
  encodeFungibleTransfers,
  encodeNftTransfers,
  fungibleTransferStatements,
  nftTransferStatements,
} from "../store/tables/transfers.ts";
import { type FetchedBatch, timeOfBatch } from "./batch.ts";
import { mergeMetadataUpdates } from "./decode/metadata-updates.ts";
import { computeEffects, touchedHolders } from "./effects.ts";
import type { ContractRegistry } from "./registry.ts";
import type { SaleMemory } from "./sale-memory.ts";
import { type PricesAt, tradesOfBatch } from "./trades.ts";

/** Headers kept for reorg detection: more than any reorg the confirmation depths leave room for. */
export const RECENT_BLOCKS_KEPT = 256;

/** Holder units after a batch, keyed by contract + holder: what the next batch starts from. */
export type UnitsAfter = ReadonlyMap<string, bigint>;

/** A batch with everything it changes worked out and encoded, ready to be written. */
export interface PreparedBatch {
  batch: FetchedBatch;
  unitsAfter: UnitsAfter;
  /** The latest bid of each punk the batch's bid events touched. */
  bidsAfter: ReadonlyMap<string, OpenBid>;
  nft: EncodedNftTransfers;
  mints: EncodedMints;
  fungible: EncodedTransfers;
  ownership: EncodedOwnership;
  sales: EncodedSales;
  saleBuckets: ReturnType<typeof tradesOfBatch>["buckets"];
  /** The (collection, day) pairs whose buckets the batch changes: their day rows are worked out again. */
  days: TouchedDays;
}

/** What a batch carries over to the next one, which may be prepared before it is written. */
export type Carried = Pick<PreparedBatch, "unitsAfter" | "bidsAfter">;

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
  previous: Carried | undefined,
  pricesAt: PricesAt,
  saleMemory: SaleMemory,
): Promise<PreparedBatch> {
  const pairs = touchedHolders(batch.nft);
  const units = previous?.unitsAfter;
  const bids = previous?.bidsAfter;
  const [stored, storedSales, storedBids] = await Promise.all([
    holderUnits(sql, chainId, units ? pairs.filter((p) => !units.has(p.contract + p.holder)) : pairs),
    saleMemory.lookup(sql, chainId, soldTokens(batch)),
    latestPunkBids(
      sql,
      chainId,
      acceptedBids(batch).filter((p) => !bids?.has(punkKey(p.contract, p.punkIndex))),
    ),
  ]);
  const timeOf = timeOfBatch(batch);
  const effects = computeEffects(batch.nft, timeOf, (c, h) => units?.get(c + h) ?? stored.get(c + h) ?? 0n);
  const trades = tradesOfBatch(batch, pricesAt, storedSales, (key) => bids?.get(key) ?? storedBids.get(key));
  saleMemory.remember(trades.lastSalesAfter);
  return {
    batch,
    unitsAfter: new Map(effects.holders.map((h) => [h.contract + h.holder, h.units])),
    bidsAfter: trades.bidsAfter,
    nft: encodeNftTransfers(batch.nft, timeOf),
    mints: encodeMints(batch.nft, timeOf),
    fungible: encodeFungibleTransfers(batch.fungible, timeOf),
    ownership: encodeOwnership(effects),
    sales: encodeSales(trades.rows),
    saleBuckets: trades.buckets,
    days: touchedDays([...effects.buckets, ...trades.buckets]),
  };
}

/** The punks whose `PunkBought` logs no value: an accepted bid, paid what the bid was. */
function acceptedBids(batch: FetchedBatch): { contract: Address; punkIndex: bigint }[] {
  const punks: { contract: Address; punkIndex: bigint }[] = [];
  for (const m of batch.markets) {
    if (m.punk && m.punk.value === 0n) punks.push({ contract: m.contract, punkIndex: m.punk.index });
  }
  return punks;
}

/**
 * The tokens that may be sold in a batch, for their previous sales: those whose movements came
 * with a payment in their transaction. A transaction with no call value, no native movement and
 * no ERC-20 movement pays nothing, and most transfers of a backfill are of that kind.
 */
function soldTokens(batch: FetchedBatch): { contract: Address; tokenId: bigint }[] {
  const paying = new Set<string>();
  for (const f of batch.fungible) paying.add(f.txHash);
  if (batch.native) for (const n of batch.native) paying.add(n.txHash);
  else for (const [txHash, call] of batch.calls) if (call.value > 0n) paying.add(txHash);
  const seen = new Set<string>();
  const tokens: { contract: Address; tokenId: bigint }[] = [];
  for (const t of batch.nft) {
    if (!paying.has(t.txHash)) continue;
    const key = tokenKey(t.contract, t.tokenId);
    if (seen.has(key)) continue;
    seen.add(key);
    tokens.push({ contract: t.contract, tokenId: t.tokenId });
  }
  return tokens;
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
    ...mintStatements(tx, chainId, prepared.mints),
    // After the mints: an update may name a token minted in the same batch.
    ...metadataUpdateStatements(tx, chainId, mergeMetadataUpdates(batch.metadataUpdates)),
    ...fungibleTransferStatements(tx, chainId, prepared.fungible),
    // Creations first: the contracts written next take their mint event from them.
    ...insertCreationsStatements(tx, chainId, batch.creations, batch.creationSource, timeOf),
    ...upsertContractsStatements(tx, chainId, records),
    ...reclassifyContractsStatements(tx, chainId, reclassified),
    ...insertSkippedLogsStatements(tx, chainId, batch.skipped),
    ...ownershipStatements(tx, chainId, prepared.ownership),
    ...salesStatements(tx, chainId, prepared.sales, prepared.saleBuckets),
    // After every bucket change: days are summed from their buckets.
    ...dayStatements(tx, chainId, prepared.days),
    ...punkBidStatements(tx, chainId, batch.punkBids),
    ...poolStateStatements(tx, chainId, batch.poolStates),
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
