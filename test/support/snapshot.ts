import { PROJECTED_TABLES } from "../../src/indexer/projections.ts";
import type { Sql } from "../../src/store/pg/database.ts";

function normalise(value: unknown): unknown {
  if (value instanceof Uint8Array) return `0x${Buffer.from(value).toString("hex")}`;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(normalise);
  return value;
}

/** Columns that record when and what the indexer last saw of its node, not what it derived. */
const OBSERVED = new Set(["updated_at", "heartbeat_at", "head_moved_at", "head_block", "confirmations"]);

/**
 * Every row of every table a projection writes, canonically ordered: two stores are equal iff their
 * snapshots are. The tables come from the projection list itself, so a new derived table is
 * compared by every crash and reorg test without being named here.
 */
export async function snapshotStore(sql: Sql): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  for (const table of PROJECTED_TABLES) {
    if (table.snapshot === false) continue;
    const rows = await sql.unsafe(
      table.snapshot ?? `SELECT ${table.columns ?? "*"} FROM ${table.name} ORDER BY ${table.order}`,
    );
    snapshot[table.name] = rows.map((row) => {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(row)) if (!OBSERVED.has(key)) out[key] = normalise(value);
      return out;
    });
  }
  return snapshot;
}
