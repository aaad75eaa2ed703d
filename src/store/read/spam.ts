/**
 * Spam verdicts as the API serves them: an operator's override when there is one, else the verdict
 * the spam job computed, else none (a contract not judged yet is not spam).
 */
import type { Address } from "../../core/hex.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

/** A signal that fired, as the spam job stored it (src/spam/score.ts). */
export interface FiredSignal {
  name: string;
  weight: number;
  evidence: Record<string, string | number>;
}

/** Where a served verdict comes from. */
export type SpamSource = "override" | "computed" | "none";

export interface ServedSpamVerdict {
  isSpam: boolean;
  /** The computed score, 0 to 100 (0 when not judged yet), shown even when an override decides. */
  score: number;
  /** The signals that fired, with their evidence; empty when not judged or none fired. */
  signals: FiredSignal[];
  source: SpamSource;
}

export const NOT_JUDGED: ServedSpamVerdict = { isSpam: false, score: 0, signals: [], source: "none" };

/**
 * The verdicts of `contracts` on a chain, each by key: two lookups per contract, whatever the
 * tables' sizes. Every contract asked for is in the map (`NOT_JUDGED` when nothing is known).
 * What a transfer, a holding or a collection shows as its `spam` label.
 */
export async function spamVerdicts(
  sql: Queryable,
  chainId: number,
  contracts: readonly Address[],
): Promise<Map<Address, ServedSpamVerdict>> {
  const asked = [...new Set(contracts.map((c) => c.toLowerCase() as Address))];
  const result = new Map<Address, ServedSpamVerdict>();
  if (asked.length === 0) return result;
  const rows = await sql<
    {
      contract: Uint8Array;
      score: number | null;
      is_spam: boolean | null;
      signals: FiredSignal[] | null;
      override: boolean | null;
    }[]
  >`
    SELECT decode(u.c, 'hex') AS contract, v.score, v.is_spam, v.signals, o.is_spam AS override
    FROM unnest(${asked.map(bare)}::text[]) AS u(c)
    LEFT JOIN spam_verdicts v ON v.chain_id = ${chainId} AND v.contract = decode(u.c, 'hex')
    LEFT JOIN spam_overrides o ON o.chain_id = ${chainId} AND o.contract = decode(u.c, 'hex')`;
  for (const row of rows) result.set(toHex(row.contract) as Address, servedVerdict(row));
  return result;
}

/** The served verdict of a row joining a contract's computed verdict and override (either may be null). */
export function servedVerdict(row: {
  score: number | null;
  is_spam: boolean | null;
  signals: FiredSignal[] | null;
  override: boolean | null;
}): ServedSpamVerdict {
  const score = row.score ?? 0;
  const signals = row.signals ?? [];
  if (row.override !== null) return { isSpam: row.override, score, signals, source: "override" };
  if (row.is_spam !== null) return { isSpam: row.is_spam, score, signals, source: "computed" };
  return NOT_JUDGED;
}
