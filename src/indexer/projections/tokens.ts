/**
 * Every token seen minted, with its first mint, and the pending metadata work: the block ranges of a
 * batch's mints are recorded in its own transaction (the metadata worker queues their tokens), and a
 * token named by an EIP-4906 update is queued at once.
 */
import {
  deleteTokensMintedAfter,
  encodeMints,
  metadataUpdateStatements,
  mintStatements,
  PENDING_METADATA_SQL,
} from "../../store/tables/tokens.ts";
import { mergeMetadataUpdates } from "../decode/metadata-updates.ts";
import { defineProjection } from "./projection.ts";

export const tokensProjection = defineProjection({
  name: "tokens",
  tables: [
    { name: "tokens", order: "chain_id, contract, token_id" },
    // Ranges follow where batches ended, and the worker moves them into the queue: what is compared is
    // which tokens are pending, ranges and queue together (the worker owns attempts and due times).
    { name: "metadata_queue", order: "chain_id, contract, token_id", snapshot: PENDING_METADATA_SQL },
    { name: "metadata_mint_ranges", order: "chain_id, first_block", snapshot: false },
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
