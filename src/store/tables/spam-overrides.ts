/**
 * Operators' spam decisions (migration 0024, `spam_overrides`): each wins over the computed verdict
 * from the moment it is written. Every change also moves `spam_state.overrides_at`, which the API's
 * data version reads, so no cached answer outlives it.
 */
import type { Address } from "../../core/hex.ts";
import { bare, type Queryable, type Sql, toHex } from "../pg/database.ts";

export interface SpamOverride {
  chainId: number;
  contract: Address;
  isSpam: boolean;
  note: string;
  changedAt: Date;
}

/** Marks a contract spam (`isSpam` true) or not spam (false), replacing any earlier decision. */
export async function setSpamOverride(
  sql: Sql,
  chainId: number,
  contract: Address,
  isSpam: boolean,
  note: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO spam_overrides (chain_id, contract, is_spam, note, changed_at)
      VALUES (${chainId}, ${Buffer.from(bare(contract), "hex")}, ${isSpam}, ${note}, now())
      ON CONFLICT (chain_id, contract) DO UPDATE
      SET is_spam = EXCLUDED.is_spam, note = EXCLUDED.note, changed_at = EXCLUDED.changed_at`;
    await overridesChanged(tx, chainId);
  });
}

/** Removes the decision about a contract, leaving it to the computed verdict; false when there was none. */
export async function clearSpamOverride(sql: Sql, chainId: number, contract: Address): Promise<boolean> {
  return sql.begin(async (tx) => {
    const deleted = await tx`
      DELETE FROM spam_overrides WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(contract), "hex")}`;
    if (deleted.count > 0) await overridesChanged(tx, chainId);
    return deleted.count > 0;
  });
}

/** Every decision, by chain and contract. */
export async function listSpamOverrides(sql: Sql): Promise<SpamOverride[]> {
  const rows = await sql<
    { chain_id: string; contract: Uint8Array; is_spam: boolean; note: string; changed_at: Date }[]
  >`SELECT chain_id::text, contract, is_spam, note, changed_at FROM spam_overrides ORDER BY chain_id, contract`;
  return rows.map((r) => ({
    chainId: Number(r.chain_id),
    contract: toHex(r.contract) as Address,
    isSpam: r.is_spam,
    note: r.note,
    changedAt: r.changed_at,
  }));
}

async function overridesChanged(tx: Queryable, chainId: number) {
  // clock_timestamp, not now(): two changes in one transaction's time would read as one.
  await tx`
    INSERT INTO spam_state (chain_id, overrides_at) VALUES (${chainId}, clock_timestamp())
    ON CONFLICT (chain_id) DO UPDATE SET overrides_at = EXCLUDED.overrides_at`;
}
