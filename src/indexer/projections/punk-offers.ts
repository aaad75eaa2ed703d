/**
 * CryptoPunks public offers, kept as history so that a rollback restores the offers open before it.
 * Each batch appends its offer events and an end for every punk it moved; nothing is read back, so
 * the carry is empty.
 */
import { deletePunkOffersAfter, punkOfferStatements } from "../../store/tables/punk-offers.ts";
import { type PunkOfferEvent, punkOfferChanges } from "../decode/punk-offers.ts";
import { defineProjection } from "./projection.ts";

export const punkOffersProjection = defineProjection({
  name: "punk offers",
  tables: [{ name: "punk_offers", order: "chain_id, contract, punk_index, block_number, log_index" }],
  resume: async (): Promise<null> => null,
  prepare: async ({ batch }, carry: null) => ({
    prepared: punkOfferChanges(batch.punkOffers, batch.nft) as readonly PunkOfferEvent[],
    carry,
  }),
  statements: (tx, { chainId }, prepared) => punkOfferStatements(tx, chainId, prepared),
  undo: (tx, { chainId, ancestor }) => deletePunkOffersAfter(tx, chainId, ancestor),
});
