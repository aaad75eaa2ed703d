import type { Address, Hex } from "../../core/hex.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

export type SkipReason = "malformed" | "unclassified" | "spam";

export interface SkippedLog {
  blockNumber: number;
  logIndex: number;
  contract: Address;
  txHash: Hex;
  reason: SkipReason;
  /** For spam: the tokens the event claimed. */
  tokens?: bigint | undefined;
}

/** Records the transfer-topic logs a batch read but did not index, with the reason. */
export function insertSkippedLogsStatements(
  sql: Queryable,
  chainId: number,
  logs: readonly SkippedLog[],
): Statement[] {
  if (logs.length === 0) return [];
  return [
    sql`
      INSERT INTO skipped_logs (chain_id, block_number, log_index, contract, tx_hash, reason, tokens)
      SELECT ${chainId}, b::bigint, i::integer, decode(c, 'hex'), decode(tx, 'hex'), r, nullif(n, '')::numeric
      FROM ${bulkRows(sql, {
        b: joinColumn(logs.map((l) => l.blockNumber)),
        i: joinColumn(logs.map((l) => l.logIndex)),
        c: joinColumn(logs.map((l) => bare(l.contract))),
        tx: joinColumn(logs.map((l) => bare(l.txHash))),
        r: joinColumn(logs.map((l) => l.reason)),
        n: joinColumn(logs.map((l) => l.tokens ?? null)),
      })}
      ON CONFLICT (chain_id, block_number, log_index) DO NOTHING`,
  ];
}

export async function deleteSkippedLogsAfter(sql: Queryable, chainId: number, block: number): Promise<void> {
  await sql`DELETE FROM skipped_logs WHERE chain_id = ${chainId} AND block_number > ${block}`;
}

/** How many logs of each reason are recorded for the chain. */
export async function skippedLogCounts(sql: Queryable, chainId: number): Promise<Record<SkipReason, number>> {
  const rows = await sql<{ reason: SkipReason; n: string }[]>`
    SELECT reason, count(*) AS n FROM skipped_logs WHERE chain_id = ${chainId} GROUP BY reason`;
  const counts: Record<SkipReason, number> = { malformed: 0, unclassified: 0, spam: 0 };
  for (const row of rows) counts[row.reason] = Number(row.n);
  return counts;
}
