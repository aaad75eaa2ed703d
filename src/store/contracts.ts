import type { Address, Hex } from "../core/hex.ts";
import type { ContractType } from "../core/types.ts";
import { bare, type Queryable, toHex } from "./database.ts";
import type { Statement } from "./pipeline.ts";

export type MintSource = "trace" | "receipt" | "first_event";

export interface ContractRecord {
  address: Address;
  types: ContractType[];
  name: string;
  symbol: string;
  decimals: number;
  mint: {
    txHash: Hex;
    blockNumber: number;
    /** Unix seconds. */
    time: number;
    /** The transaction's sender. */
    minter: Address;
    /** The account whose CREATE made the contract, when a deployment was observed. */
    creator: Address | undefined;
    source: MintSource;
  };
  discoveredBlock: number;
}

/** Types of the given contracts that are already stored. */
export async function storedContractTypes(
  sql: Queryable,
  chainId: number,
  addresses: readonly Address[],
): Promise<Map<Address, ContractType[]>> {
  const found = new Map<Address, ContractType[]>();
  if (addresses.length === 0) return found;
  const rows = await sql<{ address: Uint8Array; types: ContractType[] }[]>`
    SELECT address, types FROM contracts
    WHERE chain_id = ${chainId} AND address IN (SELECT decode(a, 'hex') FROM unnest(${addresses.map(bare)}::text[]) AS a)`;
  for (const row of rows) found.set(toHex(row.address), row.types);
  return found;
}

/**
 * Stores contracts. A contract already stored keeps its row, except that an observed
 * deployment replaces a first-seen guess and types only ever accumulate.
 */
export function upsertContractsStatements(
  sql: Queryable,
  chainId: number,
  records: readonly ContractRecord[],
): Statement[] {
  if (records.length === 0) return [];
  const statement = sql`
    INSERT INTO contracts (chain_id, address, types, name, symbol, decimals, mint_tx, mint_block, mint_time,
                           minter, creator, mint_source, discovered_block)
    SELECT ${chainId}, decode(a, 'hex'), string_to_array(ty, ',')::text[], n, s, d::int, decode(tx, 'hex'), b::bigint,
           to_timestamp(t::bigint), decode(m, 'hex'), decode(nullif(c, ''), 'hex'), src, disc::bigint
    FROM unnest(${records.map((r) => bare(r.address))}::text[], ${records.map((r) => r.types.join(","))}::text[],
                ${records.map((r) => r.name)}::text[], ${records.map((r) => r.symbol)}::text[],
                ${records.map((r) => r.decimals)}::int[], ${records.map((r) => bare(r.mint.txHash))}::text[],
                ${records.map((r) => r.mint.blockNumber)}::bigint[], ${records.map((r) => r.mint.time)}::bigint[],
                ${records.map((r) => bare(r.mint.minter))}::text[],
                ${records.map((r) => (r.mint.creator ? bare(r.mint.creator) : ""))}::text[],
                ${records.map((r) => r.mint.source)}::text[], ${records.map((r) => r.discoveredBlock)}::bigint[])
      AS u(a, ty, n, s, d, tx, b, t, m, c, src, disc)
    ON CONFLICT (chain_id, address) DO UPDATE SET
      types = ARRAY(SELECT DISTINCT x FROM unnest(contracts.types || excluded.types) AS x ORDER BY x),
      name = CASE WHEN contracts.name = '' THEN excluded.name ELSE contracts.name END,
      symbol = CASE WHEN contracts.symbol = '' THEN excluded.symbol ELSE contracts.symbol END,
      mint_tx = CASE WHEN contracts.mint_source = 'first_event' AND excluded.mint_source <> 'first_event'
                     THEN excluded.mint_tx ELSE contracts.mint_tx END,
      mint_block = CASE WHEN contracts.mint_source = 'first_event' AND excluded.mint_source <> 'first_event'
                        THEN excluded.mint_block ELSE contracts.mint_block END,
      mint_time = CASE WHEN contracts.mint_source = 'first_event' AND excluded.mint_source <> 'first_event'
                       THEN excluded.mint_time ELSE contracts.mint_time END,
      minter = CASE WHEN contracts.mint_source = 'first_event' AND excluded.mint_source <> 'first_event'
                    THEN excluded.minter ELSE contracts.minter END,
      creator = coalesce(contracts.creator, excluded.creator),
      mint_source = CASE WHEN contracts.mint_source = 'first_event' THEN excluded.mint_source
                         ELSE contracts.mint_source END`;
  return [statement];
}

export async function deleteContractsDiscoveredAfter(
  sql: Queryable,
  chainId: number,
  block: number,
): Promise<void> {
  await sql`DELETE FROM contracts WHERE chain_id = ${chainId} AND discovered_block > ${block}`;
}
