/**
 * Balances per (token, holder), units per (collection, holder) and each collection's totals, from a
 * replay of the batch's transfers over the units held before them. The carry is the units after the
 * previous batch, which may not be written yet; every other holder's units are read from the store.
 */
import {
  applyOwnership,
  encodeOwnership,
  holderUnits,
  ownershipStatements,
  pruneCollectionsAfterRollback,
} from "../../store/tables/ownership.ts";
import { computeEffects, touchedHolders } from "../effects.ts";
import { defineProjection } from "./projection.ts";

/** Holder units after a batch, keyed by contract + holder. */
type UnitsAfter = ReadonlyMap<string, bigint>;

export const ownershipProjection = defineProjection({
  name: "ownership",
  tables: [
    { name: "token_balances", order: "chain_id, contract, token_id, holder" },
    { name: "collection_holders", order: "chain_id, contract, holder" },
    { name: "collection_stats", order: "chain_id, contract" },
    // The histories before the start block (indexer/ownership-history.ts) are written between
    // batches, not by them, and hold blocks no reorganisation reaches: nothing here undoes them.
    { name: "ownership_histories", order: "chain_id, contract" },
    { name: "ownership_history_balances", order: "chain_id, contract, token_id, holder" },
  ],
  resume: async (): Promise<UnitsAfter> => new Map(),
  async prepare({ sql, chainId, batch, timeOf, facts }, carry: UnitsAfter) {
    const pairs = touchedHolders(batch.nft).filter((p) => !carry.has(p.contract + p.holder));
    const stored = await holderUnits(sql, chainId, pairs);
    const effects = computeEffects(batch.nft, timeOf, (c, h) => carry.get(c + h) ?? stored.get(c + h) ?? 0n);
    facts.effects = effects;
    return {
      prepared: encodeOwnership(effects),
      carry: new Map(effects.holders.map((h) => [h.contract + h.holder, h.units])) as UnitsAfter,
    };
  },
  statements: (tx, { chainId }, prepared) => ownershipStatements(tx, chainId, prepared),
  async undo(tx, { chainId, journal }) {
    await applyOwnership(tx, chainId, journal.effects, -1);
    await pruneCollectionsAfterRollback(tx, chainId, journal.effects);
  },
});
