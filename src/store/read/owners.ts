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
   * is DESC reversed row for row, and both walk one index (see `ownersQuery`).
   */
  direction: "asc" | "desc";
  /**
   * Only holders after this one in the list's direction (its units and address are the position):
   * the page after the one that ended there.
   */
  after?: Owner | undefined;
}

interface Row {
  holder: Uint8Array;
  units: string;
}

/**
 * The query of a page of a collection's current holders, unsent: `listOwners` runs it, and a test
 * can ask PostgreSQL for its plan. The list's order is the index on (collection, -units, holder)
 * of migration 0010, forwards for DESC and backwards for ASC: negated, the units go the same way
 * as the addresses, so "after this holder" is one row comparison, and every page is one range of
 * that index of at most offset + limit rows, at any depth.
 *
 * Only holders with units are listed. Indexed from a start block, a holder that got its tokens
 * before it and sent them since is stored with negative units (what it held is not known); such
 * holders sit at the far end of the index, and the bound `-units < 0` is written on the index's
 * own expression so that it bounds the range rather than filtering rows one by one.
 */
export function ownersQuery(sql: Queryable, chainId: number, contract: Address, query: OwnersQuery) {
  const desc = query.direction === "desc";
  const after = query.after;
  const position =
    after === undefined
      ? sql``
      : sql`AND (-units, holder) ${desc ? sql`>` : sql`<`}
                (${(-after.units).toString()}::numeric, ${Buffer.from(bare(after.address), "hex")})`;
  // Backwards (ASC) after a holder, the position already ends before every negative unit, and a
  // second upper bound would be the one the scan starts from, walking the rows before the position.
  const held = !desc && after !== undefined && after.units >= 0n ? sql`` : sql`AND -units < 0`;
  return sql<Row[]>`
    SELECT holder, units FROM collection_holders
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(contract), "hex")} ${held} ${position}
    ORDER BY ${sql.unsafe(desc ? "-units ASC, holder ASC" : "-units DESC, holder DESC")}
    LIMIT ${query.limit} OFFSET ${query.offset}`;
}

/**
 * A page of a collection's current holders with units (see `ownersQuery`; the zero and burn
 * addresses never hold any), so an unknown collection has none.
 */
export async function listOwners(
  sql: Queryable,
  chainId: number,
  contract: Address,
  query: OwnersQuery,
): Promise<Owner[]> {
  const rows = await ownersQuery(sql, chainId, contract, query);
  return rows.map((r) => ({ address: toHex(r.holder) as Address, units: BigInt(r.units) }));
}
