/**
 * Every token seen minted, with its first mint, and the metadata queue: a token minted for the first
 * time, or named by an EIP-4906 update, is queued in the batch's own transaction.
 */
import {
  deleteTokensMintedAfter,
  encodeMints,
  metadataUpdateStatements,
  mintStatements,
} from "../../store/tables/tokens.ts";
import { mergeMetadataUpdates } from "../decode/metadata-updates.ts";
import { defineProjection } from "./projection.ts";

export const tokensProjection = defineProjection({
  name: "tokens",
  tables: [
    { name: "tokens", order: "chain_id, contract, token_id" },
    // The worker owns the rest of a queued row (attempts, due time); the indexer decides which tokens are queued.
    {
      name: "metadata_queue",
      order: "chain_id, contract, token_id",
      columns: "chain_id, contract, token_id",
    },
  ],
  resume: async () => undefined,
  async prepare({ batch, timeOf }) {
    return {
      prepared: {
        mints: encodeMints(batch.nft, timeOf),
        updates: mergeMetadataUpdates(batch.metadataUpdates),
      },
      carry: undefined,
    };
  },
  statements: (tx, { chainId }, prepared) => [
    ...mintStatements(tx, chainId, prepared.mints),
    // After the mints: an update may name a token minted in the same batch.
    ...metadataUpdateStatements(tx, chainId, prepared.updates),
  ],
  undo: (tx, { chainId, ancestor }) => deleteTokensMintedAfter(tx, chainId, ancestor),
});
