import type { Address } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { bare, type Queryable } from "../pg/database.ts";

/** What the contract reports of itself. */
export interface CollectionIdentity {
  name: string;
  symbol: string;
  types: ContractType[];
}

/** A collection's current supply and holders, and its transfers, as the indexer keeps them. */
export interface CollectionCounts {
  minted: bigint;
  burned: bigint;
  holders: bigint;
  transfers: bigint;
}

/** A collection's sales since its first indexed block, by class; volumes in wei. */
export interface CollectionSales {
  sales: bigint;
  soldUnits: bigint;
  volume: bigint;
  flaggedSales: bigint;
  flaggedVolume: bigint;
  unpricedSales: bigint;
}

export interface CollectionFacts {
  identity: CollectionIdentity;
  counts: CollectionCounts;
  /** Only when asked for. */
  sales: CollectionSales | undefined;
}

const NO_COUNTS: CollectionCounts = { minted: 0n, burned: 0n, holders: 0n, transfers: 0n };

/**
 * A collection's identity, counts and (when asked) all-time sales, or undefined for a contract the
 * indexer never saw: neither classified nor with NFT events. Nothing here reads the collection's
 * events: the contract and its counts are one row each by primary key (`contracts`,
 * `collection_stats`, kept as blocks are indexed), and the sales one range of `collection_days` by
 * primary key, a row per day with activity, each the sum of its day's buckets.
 */
export async function collectionFacts(
  sql: Queryable,
  chainId: number,
  contract: Address,
  options: { sales: boolean },
): Promise<CollectionFacts | undefined> {
  const address = Buffer.from(bare(contract), "hex");
  const [[identity], [counts], sales] = await Promise.all([
    sql<CollectionIdentity[]>`
      SELECT name, symbol, types FROM contracts WHERE chain_id = ${chainId} AND address = ${address}`,
    sql<{ minted: string; burned: string; holders: string; transfers: string }[]>`
      SELECT minted::text, burned::text, holders::text, transfers::text FROM collection_stats
      WHERE chain_id = ${chainId} AND contract = ${address}`,
    options.sales ? collectionSales(sql, chainId, address) : undefined,
  ]);
  if (identity === undefined && counts === undefined) return undefined;
  return {
    identity: identity ?? { name: "", symbol: "", types: [] },
    counts:
      counts === undefined
        ? NO_COUNTS
        : {
            minted: BigInt(counts.minted),
            burned: BigInt(counts.burned),
            holders: BigInt(counts.holders),
            transfers: BigInt(counts.transfers),
          },
    sales,
  };
}

/** The statement of a collection's all-time sales, unsent: what `collectionFacts` runs (and tests explain). */
export function collectionSalesQuery(sql: Queryable, chainId: number, address: Uint8Array) {
  return sql<
    {
      sales: string;
      sold_units: string;
      volume: string;
      flagged_sales: string;
      flagged_volume: string;
      unpriced_sales: string;
    }[]
  >`
    SELECT coalesce(sum(sales), 0)::text AS sales, coalesce(sum(sold_units), 0)::text AS sold_units,
           coalesce(sum(volume), 0)::text AS volume, coalesce(sum(flagged_sales), 0)::text AS flagged_sales,
           coalesce(sum(flagged_volume), 0)::text AS flagged_volume,
           coalesce(sum(unpriced_sales), 0)::text AS unpriced_sales
    FROM collection_days WHERE chain_id = ${chainId} AND contract = ${address}`;
}

async function collectionSales(
  sql: Queryable,
  chainId: number,
  address: Uint8Array,
): Promise<CollectionSales> {
  const [row] = await collectionSalesQuery(sql, chainId, address);
  if (row === undefined) throw new Error("an aggregate without a row");
  return {
    sales: BigInt(row.sales),
    soldUnits: BigInt(row.sold_units),
    volume: BigInt(row.volume),
    flaggedSales: BigInt(row.flagged_sales),
    flaggedVolume: BigInt(row.flagged_volume),
    unpricedSales: BigInt(row.unpriced_sales),
  };
}
