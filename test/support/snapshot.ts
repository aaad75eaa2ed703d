import type { Sql } from "../../src/store/pg/database.ts";

/** Tables and the order that makes their dump canonical. */
const TABLES: Record<string, string> = {
  chains: "chain_id",
  contracts: "chain_id, address",
  contract_creations: "chain_id, address",
  skipped_logs: "chain_id, block_number, log_index",
  nft_transfers: "chain_id, contract, block_number, log_index, seq",
  fungible_transfers: "chain_id, contract, block_number, log_index",
  token_balances: "chain_id, contract, token_id, holder",
  tokens: "chain_id, contract, token_id",
  collection_holders: "chain_id, contract, holder",
  collection_stats: "chain_id, contract",
  collection_buckets: "chain_id, contract, bucket_start",
  collection_days: "chain_id, contract, day",
  recent_blocks: "chain_id, number",
  sales: "chain_id, contract, block_number, log_index, seq, seller",
  sale_payments: "chain_id, contract, block_number, log_index, seq, seller, token",
  punk_bids: "chain_id, contract, punk_index, block_number, log_index",
  pool_states: "chain_id, pool, block_number, log_index",
};

/** Tables of which only some columns are the indexer's to keep exact (the rest are the metadata worker's). */
const COLUMNS: Record<string, string> = {
  metadata_queue: "chain_id, contract, token_id",
};

function normalise(value: unknown): unknown {
  if (value instanceof Uint8Array) return `0x${Buffer.from(value).toString("hex")}`;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(normalise);
  return value;
}

/** Every stored row of every table, canonically ordered: two stores are equal iff their snapshots are. */
export async function snapshotStore(sql: Sql): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  const tables = { ...TABLES, metadata_queue: "chain_id, contract, token_id" };
  for (const [table, order] of Object.entries(tables)) {
    const rows = await sql.unsafe(`SELECT ${COLUMNS[table] ?? "*"} FROM ${table} ORDER BY ${order}`);
    snapshot[table] = rows.map((row) => {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(row)) if (key !== "updated_at") out[key] = normalise(value);
      return out;
    });
  }
  return snapshot;
}
