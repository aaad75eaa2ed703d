import type { Address } from "../core/hex.ts";
import type { ContractType } from "../core/types.ts";
import { type Queryable, toHex } from "./database.ts";

export interface CollectionSummary {
  address: Address;
  name: string;
  types: ContractType[];
  supply: string;
  holders: number;
  transfers: number;
}

/** NFT collections of a chain with their current supply, holders and transfer count. */
export async function collectionSummaries(sql: Queryable, chainId: number): Promise<CollectionSummary[]> {
  const rows = await sql<
    {
      address: Uint8Array;
      name: string;
      types: ContractType[];
      supply: string;
      holders: string;
      transfers: string;
    }[]
  >`
    SELECT c.address, c.name, c.types, s.supply, s.holders, s.transfers
    FROM collection_stats s JOIN contracts c ON c.chain_id = s.chain_id AND c.address = s.contract
    WHERE s.chain_id = ${chainId}
    ORDER BY s.transfers DESC, c.address`;
  return rows.map((r) => ({
    address: toHex(r.address) as Address,
    name: r.name,
    types: r.types,
    supply: r.supply,
    holders: Number(r.holders),
    transfers: Number(r.transfers),
  }));
}
