import type { Address, Hex } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { type Queryable, toHex } from "../pg/database.ts";

export interface ContractListing {
  address: Address;
  name: string;
  symbol: string;
  decimals: number;
  types: ContractType[];
  mintEvent: {
    /** When the contract was minted; undefined when no block of its creation was seen. */
    blockTime: Date | undefined;
    txHash: Hex | undefined;
    minter: Address | undefined;
  };
}

export interface ContractQuery {
  limit: number;
  offset: number;
  /** By mint time, ties by address in the same direction: DESC is ASC reversed, row for row. */
  direction: "asc" | "desc";
  /** Contracts of any of these types; all contracts when empty. */
  types: readonly ContractType[];
  /** Only contracts minted strictly after this instant. */
  mintedAfter: Date | undefined;
}

interface Row {
  address: Uint8Array;
  name: string;
  symbol: string;
  decimals: number;
  types: ContractType[];
  mint_time: Date | null;
  mint_tx: Uint8Array | null;
  minter: Uint8Array | null;
}

/**
 * A page of the chain's contracts in mint order. Both directions walk the index on
 * (chain, mint time, address), so a page costs its offset and limit, not the table.
 */
export async function listContracts(
  sql: Queryable,
  chainId: number,
  query: ContractQuery,
): Promise<ContractListing[]> {
  const types = query.types.length === 0 ? null : [...query.types];
  const after = query.mintedAfter ?? null;
  const rows =
    query.direction === "asc"
      ? await sql<Row[]>`
          SELECT address, name, symbol, decimals, types, mint_time, mint_tx, minter FROM contracts
          WHERE chain_id = ${chainId}
            AND (${types}::text[] IS NULL OR types && ${types}::text[])
            AND (${after}::timestamptz IS NULL OR mint_time > ${after}::timestamptz)
          ORDER BY mint_time ASC, address ASC
          LIMIT ${query.limit} OFFSET ${query.offset}`
      : await sql<Row[]>`
          SELECT address, name, symbol, decimals, types, mint_time, mint_tx, minter FROM contracts
          WHERE chain_id = ${chainId}
            AND (${types}::text[] IS NULL OR types && ${types}::text[])
            AND (${after}::timestamptz IS NULL OR mint_time > ${after}::timestamptz)
          ORDER BY mint_time DESC, address DESC
          LIMIT ${query.limit} OFFSET ${query.offset}`;
  return rows.map((r) => ({
    address: toHex(r.address) as Address,
    name: r.name,
    symbol: r.symbol,
    decimals: r.decimals,
    types: r.types,
    mintEvent: {
      blockTime: r.mint_time ?? undefined,
      txHash: r.mint_tx ? (toHex(r.mint_tx) as Hex) : undefined,
      minter: r.minter ? (toHex(r.minter) as Address) : undefined,
    },
  }));
}
