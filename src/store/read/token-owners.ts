import type { Address } from "../../core/hex.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

export interface TokenOwner {
  address: Address;
  /** Units of the token held: 1 for an ERC-721 token, any positive number for an ERC-1155 one. */
  quantity: bigint;
}

export interface TokenOwnersQuery {
  limit: number;
  offset: number;
  /** Only holders after this address: the page after the one that ended there. */
  after?: Address | undefined;
}

interface Row {
  holder: Uint8Array;
  amount: string;
}

/**
 * The query of a page of one token's current holders, unsent: `listTokenOwners` runs it, and a test
 * can ask PostgreSQL for its plan. The list is in the order of token_balances' primary key
 * (chain, contract, token id, holder), so it goes by address, "after this holder" bounds the range,
 * and every page is one range of that key of at most offset + limit rows, at any depth. Ordering
 * by units held instead would need an index of its own, written on every transfer.
 *
 * Indexed from a start block, a holder that got units before it and sent them since is stored
 * with a negative amount (what it holds is not known): such rows are passed over.
 */
export function tokenOwnersQuery(
  sql: Queryable,
  chainId: number,
  contract: Address,
  tokenId: bigint,
  query: TokenOwnersQuery,
) {
  const after =
    query.after === undefined ? sql`` : sql`AND holder > ${Buffer.from(bare(query.after), "hex")}`;
  return sql<Row[]>`
    SELECT holder, amount::text AS amount FROM token_balances
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(contract), "hex")}
      AND token_id = ${tokenId.toString()}::numeric AND amount > 0 ${after}
    ORDER BY holder
    LIMIT ${query.limit} OFFSET ${query.offset}`;
}

/**
 * A page of one token's current holders (see `tokenOwnersQuery`), or undefined for a token the
 * indexer never saw minted and nobody holds, as `nftDetails` decides it.
 */
export async function listTokenOwners(
  sql: Queryable,
  chainId: number,
  contract: Address,
  tokenId: bigint,
  query: TokenOwnersQuery,
): Promise<TokenOwner[] | undefined> {
  const rows = await tokenOwnersQuery(sql, chainId, contract, tokenId, query);
  if (rows.length === 0 && !(await tokenExists(sql, chainId, contract, tokenId))) return undefined;
  return rows.map((r) => ({ address: toHex(r.holder) as Address, quantity: BigInt(r.amount) }));
}

/** Whether the token was seen minted or somebody holds units of it: two lookups by key. */
async function tokenExists(sql: Queryable, chainId: number, contract: Address, tokenId: bigint) {
  const address = Buffer.from(bare(contract), "hex");
  const id = tokenId.toString();
  const [row] = await sql<{ known: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM tokens
                   WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric)
        OR EXISTS (SELECT 1 FROM token_balances
                   WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric
                     AND amount > 0) AS known`;
  return row?.known === true;
}
