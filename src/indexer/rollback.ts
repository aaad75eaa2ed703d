import type { WriteSession } from "../store/pg/session.ts";
import { forgetBlocksAfter, setNextBlock } from "../store/tables/chain-state.ts";
import { deleteContractsDiscoveredAfter } from "../store/tables/contracts.ts";
import { deleteCreationsAfter } from "../store/tables/creations.ts";
import { rebuildDaysAfter } from "../store/tables/days.ts";
import { applyOwnership, holderUnits, pruneAfterRollback } from "../store/tables/ownership.ts";
import { deletePoolStatesAfter } from "../store/tables/pool-states.ts";
import { deletePunkBidsAfter, rollbackSalesAfter } from "../store/tables/sales.ts";
import { deleteSkippedLogsAfter } from "../store/tables/skipped-logs.ts";
import { deleteTokensMintedAfter } from "../store/tables/tokens.ts";
import { deleteTransfersAfter, nftTransfersAfter } from "../store/tables/transfers.ts";
import { computeEffects, touchedHolders, unitsBeforeTransfers } from "./effects.ts";

/**
 * Undoes everything derived from blocks after `ancestor`, in one transaction. The stored
 * transfers are the journal: replaying them from the units held before them gives exactly
 * the changes to take back.
 */
export async function rollbackAfter(
  session: WriteSession,
  chainId: number,
  ancestor: number,
): Promise<number> {
  return session.transaction(async (tx) => {
    const { transfers, times } = await nftTransfersAfter(tx, chainId, ancestor);
    const pairs = touchedHolders(transfers);
    const current = await holderUnits(tx, chainId, pairs);
    const before = unitsBeforeTransfers(transfers, (c, h) => current.get(c + h) ?? 0n);
    const effects = computeEffects(
      transfers,
      (block) => {
        const time = times.get(block);
        if (time === undefined) throw new Error(`no time for block ${block}`);
        return time;
      },
      before,
    );
    const restored = pairs.map((p) => ({ ...p, units: before(p.contract, p.holder) }));
    await rollbackSalesAfter(tx, chainId, ancestor);
    await deletePunkBidsAfter(tx, chainId, ancestor);
    await deletePoolStatesAfter(tx, chainId, ancestor);
    await applyOwnership(tx, chainId, { ...effects, holders: restored }, -1);
    await deleteTransfersAfter(tx, chainId, ancestor);
    await deleteTokensMintedAfter(tx, chainId, ancestor);
    await pruneAfterRollback(tx, chainId, effects);
    // While the ancestor's header is still known (blocks after it are forgotten below).
    await rebuildDaysAfter(tx, chainId, ancestor);
    await deleteContractsDiscoveredAfter(tx, chainId, ancestor);
    await deleteCreationsAfter(tx, chainId, ancestor);
    await deleteSkippedLogsAfter(tx, chainId, ancestor);
    await forgetBlocksAfter(tx, chainId, ancestor);
    await setNextBlock(tx, chainId, ancestor + 1);
    return transfers.length;
  });
}
