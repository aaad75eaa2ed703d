/** Every NFT transfer, and the ERC-20 transfers of the transactions that moved NFTs (the candidate payments). */
import {
  deleteTransfersAfter,
  encodeFungibleTransfers,
  encodeNftTransfers,
  fungibleTransferStatements,
  nftTransferStatements,
} from "../../store/tables/transfers.ts";
import { defineProjection } from "./projection.ts";

export const transfersProjection = defineProjection({
  name: "transfers",
  tables: [
    { name: "nft_transfers", order: "chain_id, block_number, log_index, seq" },
    { name: "fungible_transfers", order: "chain_id, block_number, log_index" },
  ],
  resume: async () => undefined,
  async prepare({ batch, timeOf }) {
    return {
      prepared: {
        nft: encodeNftTransfers(batch.nft, timeOf),
        fungible: encodeFungibleTransfers(batch.fungible, timeOf),
      },
      carry: undefined,
    };
  },
  statements: (tx, { chainId }, prepared) => [
    ...nftTransferStatements(tx, chainId, prepared.nft),
    ...fungibleTransferStatements(tx, chainId, prepared.fungible),
  ],
  undo: (tx, { chainId, ancestor }) => deleteTransfersAfter(tx, chainId, ancestor),
});
