import type { Address } from "../../core/hex.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

export interface Owner {
  address: Address;
  /** Units of the collection held: tokens of an ERC-721, units across all ids of an ERC-1155. */
  units: bigint;
}

export interface OwnersQuery {
  limit: number;
  offset: number;
  /**
   * By units held. Ties go by address ascending under DESC and descending under ASC, so that ASC
   * is DESC reversed row for row, and both walk the index on (collection, units DESC, holder).
   */
  direction: "asc" | "desc";
}

interface Row {
  holder: Uint8Array;
  units: string;
}

/**
 * A page of a collection's current holders. The store keeps only holders with units (the zero
 * and burn addresses never hold any), so an unknown collection has none.
 */
export async function listOwners(
  sql: Queryable,
  chainId: number,
  contract: Address,
  query: OwnersQuery,
): Promise<Owner[]> {
  const address = Buffer.from(bare(contract), "hex");
  const rows =
    query.direction === "desc"
      ? await sql<Row[]>`
          SELECT holder, units FROM collection_holders
          WHERE chain_id = ${chainId} AND contract = ${address}
          ORDER BY units DESC, holder ASC
          LIMIT ${query.limit} OFFSET ${query.offset}`
      : await sql<Row[]>`
          SELECT holder, units FROM collection_holders
          WHERE chain_id = ${chainId} AND contract = ${address}
          ORDER BY units ASC, holder DESC
          LIMIT ${query.limit} OFFSET ${query.offset}`;
  return rows.map((r) => ({ address: toHex(r.holder) as Address, units: BigInt(r.units) }));
}
