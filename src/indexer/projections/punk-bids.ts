/**
 * CryptoPunks bid events, kept as history so that a rollback restores the bids open before it: an
 * accepted bid's `PunkBought` logs no value, and the bid is what the buyer paid. The carry is the
 * latest bid of each punk the previous batch touched (it may not be written yet); older ones are read
 * from the store for the punks whose bids the batch accepts.
 */
import type { Address } from "../../core/hex.ts";
import {
  deletePunkBidsAfter,
  latestPunkBids,
  type OpenBid,
  punkBidStatements,
  punkKey,
} from "../../store/tables/sales.ts";
import type { FetchedBatch } from "../batch.ts";
import { defineProjection } from "./projection.ts";

type BidsAfter = ReadonlyMap<string, OpenBid>;

export const punkBidsProjection = defineProjection({
  name: "punk bids",
  tables: [{ name: "punk_bids", order: "chain_id, contract, punk_index, block_number, log_index" }],
  resume: async (): Promise<BidsAfter> => new Map(),
  async prepare({ sql, chainId, batch, facts }, carry: BidsAfter) {
    const stored = await latestPunkBids(
      sql,
      chainId,
      acceptedBids(batch).filter((p) => !carry.has(punkKey(p.contract, p.punkIndex))),
    );
    facts.bidBefore = (key) => carry.get(key) ?? stored.get(key);
    const after = new Map<string, OpenBid>();
    for (const e of batch.punkBids)
      after.set(punkKey(e.contract, e.punkIndex), { bidder: e.bidder, value: e.value });
    return { prepared: batch.punkBids, carry: after as BidsAfter };
  },
  statements: (tx, { chainId }, prepared) => punkBidStatements(tx, chainId, prepared),
  undo: (tx, { chainId, ancestor }) => deletePunkBidsAfter(tx, chainId, ancestor),
});

/** The punks whose `PunkBought` logs no value: an accepted bid, paid what the bid was. */
function acceptedBids(batch: FetchedBatch): { contract: Address; punkIndex: bigint }[] {
  const punks: { contract: Address; punkIndex: bigint }[] = [];
  for (const m of batch.markets) {
    if (m.punk && m.punk.value === 0n) punks.push({ contract: m.contract, punkIndex: m.punk.index });
  }
  return punks;
}
