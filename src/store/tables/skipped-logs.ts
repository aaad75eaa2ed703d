import type { Address, Hex } from "../../core/hex.ts";
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
      SELECT ${chainId}, b, i, decode(c, 'hex'), decode(tx, 'hex'), r, nullif(n, '')::numeric
      FROM unnest(${logs.map((l) => l.blockNumber)}::bigint[], ${logs.map((l) => l.logIndex)}::int[],
                  ${logs.map((l) => bare(l.contract))}::text[], ${logs.map((l) => bare(l.txHash))}::text[],
                  ${logs.map((l) => l.reason)}::text[], ${logs.map((l) => l.tokens?.toString() ?? "")}::text[])
        AS u(b, i, c, tx, r, n)
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
