/**
 * Contract creations (stored as read, never inspected), the contracts classified when they first
 * matter, and the transfer logs read but not indexed. The rows of contracts come from the registry,
 * which classifies them while batches are fetched: they are taken when the batch is written.
 */
import type { Address } from "../../core/hex.ts";
import {
  deleteContractsDiscoveredAfter,
  type FirstSeenAt,
  reclassifyContractsStatements,
  upsertContractsStatements,
} from "../../store/tables/contracts.ts";
import { deleteCreationsAfter, insertCreationsStatements } from "../../store/tables/creations.ts";
import { deleteSkippedLogsAfter, insertSkippedLogsStatements } from "../../store/tables/skipped-logs.ts";
import { defineProjection } from "./projection.ts";

export const contractsProjection = defineProjection({
  name: "contracts",
  tables: [
    { name: "contract_creations", order: "chain_id, address" },
    { name: "contracts", order: "chain_id, address" },
    { name: "skipped_logs", order: "chain_id, block_number, log_index" },
  ],
  resume: async () => undefined,
  prepare: async () => ({ prepared: undefined, carry: undefined }),
  statements: (tx, { chainId, batch, timeOf, contracts }) => [
    // Creations first: the contracts written next take their mint event from them.
    ...insertCreationsStatements(tx, chainId, batch.creations, batch.creationSource, timeOf),
    ...upsertContractsStatements(tx, chainId, contracts.records),
    ...reclassifyContractsStatements(tx, chainId, contracts.reclassified),
    ...insertSkippedLogsStatements(tx, chainId, batch.skipped),
  ],
  async undo(tx, { chainId, ancestor }) {
    await deleteContractsDiscoveredAfter(tx, chainId, ancestor);
    await deleteCreationsAfter(tx, chainId, ancestor);
    await deleteSkippedLogsAfter(tx, chainId, ancestor);
  },
});

/** Where the batch's contracts whose deployment is not stored were first seen: their mint event. */
export function firstSeenIn(
  batch: import("../batch.ts").FetchedBatch,
  timeOf: (block: number) => number,
): (address: Address) => FirstSeenAt | undefined {
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
