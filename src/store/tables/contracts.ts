import type { Address, Hex } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { bulkRows, freeText, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

export type MintSource = "trace" | "receipt" | "first_event";

/** Where a contract was first seen, for a contract whose deployment was not observed. */
export interface FirstSeenAt {
  txHash: Hex;
  blockNumber: number;
  /** Unix seconds. */
  time: number;
  /** The transaction's sender. */
  minter: Address;
}

export interface ContractRecord {
  address: Address;
  types: ContractType[];
  /** The event shapes the contract had been seen emitting when it was inspected. */
  shapes: string[];
  name: string;
  symbol: string;
  decimals: number;
  /**
   * The mint event when no deployment of the contract is stored: where it was first seen. A stored
   * deployment (contract_creations, written earlier in the same transaction at the latest) wins.
   */
  firstSeen: FirstSeenAt | undefined;
}

/** A stored contract inspected again because it emitted an event shape it had not been seen with. */
export interface ContractReclassification {
  address: Address;
  types: ContractType[];
  shapes: string[];
}

export interface StoredContract {
  types: ContractType[];
  shapes: string[];
  /** Whether the contract is in the contracts table (else only `created` may be true). */
  stored: boolean;
  /** Whether its deployment is in contract_creations. */
  created: boolean;
}

/** What the store knows of the given contracts: their row, and whether their deployment was seen. */
export async function storedContracts(
  sql: Queryable,
  chainId: number,
  addresses: readonly Address[],
): Promise<Map<Address, StoredContract>> {
  const found = new Map<Address, StoredContract>();
  if (addresses.length === 0) return found;
  const rows = await sql<
    { address: Uint8Array; types: ContractType[] | null; shapes: string[] | null; created: boolean }[]
  >`
    SELECT a.address, c.types, c.shapes, cc.address IS NOT NULL AS created
    FROM (SELECT decode(x, 'hex') AS address FROM ${bulkRows(sql, { x: joinColumn(addresses.map(bare)) }, { joined: true })}) a
    LEFT JOIN contracts c ON c.chain_id = ${chainId} AND c.address = a.address
    LEFT JOIN contract_creations cc ON cc.chain_id = ${chainId} AND cc.address = a.address`;
  for (const row of rows) {
    found.set(toHex(row.address), {
      types: row.types ?? [],
      shapes: row.shapes ?? [],
      stored: row.types !== null,
      created: row.created,
    });
  }
  return found;
}

/**
 * Stores newly inspected contracts. The mint event is the stored deployment when there is one,
 * else where the contract was first seen; a contract with neither is left for a later batch. A
 * contract already stored keeps its row, except that an observed deployment replaces a
 * first-seen guess and types and shapes only ever accumulate. A contract is discovered at its
 * mint block, so that a rollback past that block forgets it.
 */
export function upsertContractsStatements(
  sql: Queryable,
  chainId: number,
  records: readonly ContractRecord[],
): Statement[] {
  if (records.length === 0) return [];
  const seen = (r: ContractRecord) => r.firstSeen;
  const statement = sql`
    INSERT INTO contracts (chain_id, address, types, shapes, name, symbol, decimals, mint_tx, mint_block, mint_time,
                           minter, creator, mint_source, discovered_block)
    SELECT ${chainId}, u.address, string_to_array(ty, ',')::text[], string_to_array(sh, ',')::text[], n, s, d::int,
           coalesce(cc.tx_hash, decode(nullif(tx, ''), 'hex')), coalesce(cc.block_number, nullif(b, '')::bigint),
           coalesce(cc.block_time, to_timestamp(nullif(t, '')::bigint)), coalesce(cc.minter, decode(nullif(m, ''), 'hex')),
           cc.creator, coalesce(cc.source, 'first_event'), coalesce(cc.block_number, nullif(b, '')::bigint)
    FROM (SELECT decode(a, 'hex') AS address, ty, sh, n, s, d, tx, b, t, m
          FROM ${bulkRows(
            sql,
            {
              a: joinColumn(records.map((r) => bare(r.address))),
              // Lists of types and shapes are comma-joined themselves, and names and symbols any text.
              ty: freeText(records.map((r) => r.types.join(","))),
              sh: freeText(records.map((r) => r.shapes.join(","))),
              n: freeText(records.map((r) => r.name)),
              s: freeText(records.map((r) => r.symbol)),
              d: joinColumn(records.map((r) => r.decimals)),
              tx: joinColumn(records.map((r) => (seen(r) ? bare(seen(r)?.txHash ?? "0x") : null))),
              b: joinColumn(records.map((r) => seen(r)?.blockNumber ?? null)),
              t: joinColumn(records.map((r) => seen(r)?.time ?? null)),
              m: joinColumn(records.map((r) => (seen(r) ? bare(seen(r)?.minter ?? "0x") : null))),
            },
            { alias: "x" },
          )}) u
    LEFT JOIN contract_creations cc ON cc.chain_id = ${chainId} AND cc.address = u.address
    WHERE cc.address IS NOT NULL OR coalesce(u.tx, '') <> ''
    ON CONFLICT (chain_id, address) DO UPDATE SET
      types = ARRAY(SELECT DISTINCT x FROM unnest(contracts.types || excluded.types) AS x ORDER BY x),
      shapes = ARRAY(SELECT DISTINCT x FROM unnest(contracts.shapes || excluded.shapes) AS x ORDER BY x),
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

/** Adds the types and shapes found by inspecting stored contracts again. */
export function reclassifyContractsStatements(
  sql: Queryable,
  chainId: number,
  updates: readonly ContractReclassification[],
): Statement[] {
  if (updates.length === 0) return [];
  return [
    sql`
      UPDATE contracts c SET
        types = ARRAY(SELECT DISTINCT x FROM unnest(c.types || string_to_array(u.ty, ',')::text[]) AS x ORDER BY x),
        shapes = ARRAY(SELECT DISTINCT x FROM unnest(c.shapes || string_to_array(u.sh, ',')::text[]) AS x ORDER BY x)
      FROM ${bulkRows(sql, {
        a: joinColumn(updates.map((r) => bare(r.address))),
        ty: freeText(updates.map((r) => r.types.join(","))),
        sh: freeText(updates.map((r) => r.shapes.join(","))),
      })}
      WHERE c.chain_id = ${chainId} AND c.address = decode(u.a, 'hex')`,
  ];
}

export async function deleteContractsDiscoveredAfter(
  sql: Queryable,
  chainId: number,
  block: number,
): Promise<void> {
  await sql`DELETE FROM contracts WHERE chain_id = ${chainId} AND discovered_block > ${block}`;
}
