import type { Address } from "../../core/hex.ts";
import { bare, type Queryable } from "../pg/database.ts";

/** A token's metadata document as last fetched. */
export interface RawDocument {
  raw: string;
  /** Microseconds since the epoch: the stored precision, which `Date` would cut to milliseconds. */
  fetchedAtMicros: bigint;
}

/**
 * A token's raw metadata document: `undefined` for a token the indexer never saw minted and
 * nobody holds, `{ document: undefined }` for a known token whose document is not fetched yet.
 */
export async function rawMetadata(
  sql: Queryable,
  chainId: number,
  contract: Address,
  tokenId: bigint,
): Promise<{ document: RawDocument | undefined } | undefined> {
  const address = Buffer.from(bare(contract), "hex");
  const id = tokenId.toString();
  const [row] = await sql<{ known: boolean; raw: string | null; micros: string | null }[]>`
    SELECT (EXISTS (SELECT 1 FROM tokens
                    WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric)
            OR EXISTS (SELECT 1 FROM token_balances
                       WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric
                         AND amount > 0)) AS known,
           m.raw,
           (extract(epoch FROM m.fetched_at) * 1000000)::bigint::text AS micros
    FROM (SELECT 1) AS one
    LEFT JOIN token_metadata m ON m.chain_id = ${chainId} AND m.contract = ${address} AND m.token_id = ${id}::numeric
      AND m.status = 'ok'`;
  // A document of a token the store does not know (forgotten by a reorganisation) is not shown.
  if (row === undefined || !row.known) return undefined;
  if (row.raw !== null && row.micros !== null) {
    return { document: { raw: row.raw, fetchedAtMicros: BigInt(row.micros) } };
  }
  return { document: undefined };
}
