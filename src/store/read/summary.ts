import type { Address } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { type Queryable, toHex } from "../pg/database.ts";

export interface CollectionSummary {
  address: Address;
  name: string;
  types: ContractType[];
  supply: string;
  holders: number;
  transfers: number;
  sales: number;
  /** Sales volume in wei. */
  volume: string;
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
      sales: string;
      volume: string;
    }[]
  >`
    SELECT c.address, c.name, c.types, s.supply, s.holders, s.transfers,
           coalesce(b.sales, 0) AS sales, coalesce(b.volume, 0) AS volume
    FROM collection_stats s JOIN contracts c ON c.chain_id = s.chain_id AND c.address = s.contract
    LEFT JOIN (
      SELECT contract, sum(sales) AS sales, sum(volume) AS volume FROM collection_buckets
      WHERE chain_id = ${chainId} GROUP BY contract) b ON b.contract = s.contract
    WHERE s.chain_id = ${chainId}
    ORDER BY s.transfers DESC, c.address`;
  return rows.map((r) => ({
    address: toHex(r.address) as Address,
    name: r.name,
    types: r.types,
    supply: r.supply,
    holders: Number(r.holders),
    transfers: Number(r.transfers),
    sales: Number(r.sales),
    volume: r.volume,
  }));
}
