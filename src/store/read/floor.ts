import type { Address } from "../../core/hex.ts";
import type { Rate } from "../../core/types.ts";
import { bare, type Queryable } from "../pg/database.ts";
import { newestUsdPerWei } from "../tables/chain-state.ts";
import { lowestPunkOffer } from "../tables/punk-offers.ts";

/**
 * A collection's floor: the lowest open public offer of the CryptoPunks market (in wei; undefined
 * when none is open, as for every other collection) and the dollar rate of the newest indexed block
 * to value it at, or undefined for a contract the indexer never saw (neither classified nor with
 * NFT events, as `collectionFacts` decides).
 */
export async function floorPrice(
  sql: Queryable,
  chainId: number,
  contract: Address,
): Promise<{ lowestWei: bigint | undefined; usdPerWei: Rate | undefined } | undefined> {
  const address = Buffer.from(bare(contract), "hex");
  const [[seen], lowestWei, usdPerWei] = await Promise.all([
    sql<{ seen: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM contracts WHERE chain_id = ${chainId} AND address = ${address})
          OR EXISTS (SELECT 1 FROM collection_stats WHERE chain_id = ${chainId} AND contract = ${address}) AS seen`,
    lowestPunkOffer(sql, chainId, contract),
    newestUsdPerWei(sql, chainId),
  ]);
  return seen?.seen ? { lowestWei, usdPerWei } : undefined;
}
