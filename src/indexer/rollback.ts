import type { Address } from "../core/hex.ts";
import type { Queryable } from "../store/pg/database.ts";
import type { WriteSession } from "../store/pg/session.ts";
import { holderUnits } from "../store/tables/ownership.ts";
import { salesAfter } from "../store/tables/sales.ts";
import { nftTransfersAfter } from "../store/tables/transfers.ts";
import { computeEffects, touchedHolders, unitsBeforeTransfers } from "./effects.ts";
import type { AnyProjection, RollbackJournal } from "./projections/projection.ts";

/**
 * Undoes everything derived from blocks after `ancestor`, in one transaction: every projection's
 * inverse, in list order. The stored rows of the orphaned blocks are the journal, read first:
 * replaying the transfers from the units held before them gives exactly the changes to take back.
 */
export async function rollbackAfter(
  session: WriteSession,
  chainId: number,
  ancestor: number,
  projections: readonly AnyProjection[],
): Promise<number> {
  return session.transaction(async (tx) => {
    const journal = await readJournal(tx, chainId, ancestor);
    for (const p of projections) await p.undo(tx, { chainId, ancestor, journal });
    return journal.transfers.length;
  });
}

async function readJournal(tx: Queryable, chainId: number, ancestor: number): Promise<RollbackJournal> {
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
  // Holders are set back to the units they held before the orphaned blocks.
  const restored = pairs.map((p: { contract: Address; holder: Address }) => ({
    ...p,
    units: before(p.contract, p.holder),
  }));
  const [block] = await tx<{ time: string }[]>`
    SELECT extract(epoch FROM block_time)::bigint AS time FROM recent_blocks
    WHERE chain_id = ${chainId} AND number = ${ancestor}`;
  return {
    transfers,
    times,
    effects: { ...effects, holders: restored },
    sales: await salesAfter(tx, chainId, ancestor),
    ancestorTime: block === undefined ? undefined : Number(block.time),
  };
}
