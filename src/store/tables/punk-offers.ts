/**
 * CryptoPunks public offers, kept as the history of each punk's offer (see migration 0021): the
 * batch appends, a rollback deletes what came after its ancestor, and the open offers are each
 * punk's latest row that has a price.
 */
import type { Address } from "../../core/hex.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

/** One change of a punk's public offer: its minimum price in wei, or null when it ended. */
export interface PunkOfferRow {
  contract: Address;
  punkIndex: bigint;
  minValue: bigint | null;
  blockNumber: number;
  logIndex: number;
}

export function punkOfferStatements(
  sql: Queryable,
  chainId: number,
  offers: readonly PunkOfferRow[],
): Statement[] {
  if (offers.length === 0) return [];
  return [
    sql`
    INSERT INTO punk_offers (chain_id, contract, punk_index, block_number, log_index, min_value)
    SELECT ${chainId}, decode(c, 'hex'), p::numeric, b::bigint, li::integer, NULLIF(v, '')::numeric
    FROM ${bulkRows(sql, {
      c: joinColumn(offers.map((o) => bare(o.contract))),
      p: joinColumn(offers.map((o) => o.punkIndex)),
      b: joinColumn(offers.map((o) => o.blockNumber)),
      li: joinColumn(offers.map((o) => o.logIndex)),
      v: joinColumn(offers.map((o) => o.minValue)),
    })}`,
  ];
}

export async function deletePunkOffersAfter(
  sql: Queryable,
  chainId: number,
  ancestor: number,
): Promise<void> {
  await sql`DELETE FROM punk_offers WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
}

/** The lowest open public offer of a punks contract, in wei; undefined when none is open. */
export async function lowestPunkOffer(
  sql: Queryable,
  chainId: number,
  contract: Address,
): Promise<bigint | undefined> {
  const rows = await sql<{ floor: string | null }[]>`
    SELECT min(l.min_value)::text AS floor FROM (
      SELECT DISTINCT ON (punk_index) min_value FROM punk_offers
      WHERE chain_id = ${chainId} AND contract = decode(${bare(contract)}, 'hex')
      ORDER BY punk_index, block_number DESC, log_index DESC) l`;
  const floor = rows[0]?.floor;
  return floor === null || floor === undefined ? undefined : BigInt(floor);
}
