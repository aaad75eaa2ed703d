/**
 * The chain that continues a built store: fifteen-minute batches, each moving the ranked windows by
 * one bucket as a batch at the head does, drawn once when the store is built and indexed on top of
 * it by every measuring run (which rolls them back afterwards). For ingest they are merged into
 * batches of about `rows` transfers, as a backfill would take them.
 */
import type { FetchedBatch } from "../../src/indexer/batch.ts";
import type { SyntheticChain } from "../bench-api/chain.ts";
import type { StoreMeta } from "./store.ts";

const BUCKET_SECONDS = 900;

export interface ContinuationSpec {
  /** At least this many fifteen-minute batches... */
  batches: number;
  /** ...and at least this many NFT transfers. */
  transfers: number;
}

export function continuationChain(
  chain: SyntheticChain,
  meta: StoreMeta,
  spec: ContinuationSpec,
): { batches: FetchedBatch[]; transfers: number } {
  const batches: FetchedBatch[] = [];
  let transfers = 0;
  const headTime = chain.timeOf(meta.builtHead);
  for (
    let bucketEnd = (Math.floor(headTime / BUCKET_SECONDS) + 1) * BUCKET_SECONDS;
    batches.length < spec.batches || transfers < spec.transfers;
    bucketEnd += BUCKET_SECONDS
  ) {
    // The last block before the bucket's end.
    const last = chain.blockBefore(bucketEnd);
    const batch = chain.next(Number.POSITIVE_INFINITY, last);
    if (!batch) break;
    batches.push(batch);
    transfers += batch.nft.length;
  }
  return { batches, transfers };
}

/** Consecutive batches merged into batches of at least `rows` NFT transfers (the last may have fewer). */
export function mergeBatches(batches: readonly FetchedBatch[], rows: number): FetchedBatch[] {
  const merged: FetchedBatch[] = [];
  let group: FetchedBatch[] = [];
  let count = 0;
  const flush = () => {
    if (group.length > 0) merged.push(merge(group));
    group = [];
    count = 0;
  };
  for (const batch of batches) {
    group.push(batch);
    count += batch.nft.length;
    if (count >= rows) flush();
  }
  flush();
  return merged;
}

function merge(group: readonly FetchedBatch[]): FetchedBatch {
  const first = group[0] as FetchedBatch;
  const last = group.at(-1) as FetchedBatch;
  const all = <T>(pick: (b: FetchedBatch) => readonly T[] | undefined) => group.flatMap((b) => pick(b) ?? []);
  return {
    from: first.from,
    to: last.to,
    requestedTo: last.requestedTo,
    headers: all((b) => b.headers),
    nft: all((b) => b.nft),
    fungible: all((b) => b.fungible),
    creations: all((b) => b.creations),
    creationSource: first.creationSource,
    contracts: [],
    firstSeen: new Map(group.flatMap((b) => [...b.firstSeen])),
    logCount: group.reduce((sum, b) => sum + b.logCount, 0),
    skipped: all((b) => b.skipped),
    calls: new Map(group.flatMap((b) => [...b.calls])),
    native: all((b) => b.native),
    markets: all((b) => b.markets),
    punkBids: all((b) => b.punkBids),
    punkOffers: all((b) => b.punkOffers),
    poolStates: all((b) => b.poolStates),
    metadataUpdates: all((b) => b.metadataUpdates),
  };
}
