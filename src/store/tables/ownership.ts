import type { Address } from "../../core/hex.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import { runInOrder, type Statement } from "../pg/session.ts";

/**
 * Everything a run of transfers changes in ownership and supply, in the form the store applies it.
 * (Its fifteen-minute buckets are the rollups' to write.)
 */
export interface OwnershipChanges {
  balances: ReadonlyArray<{ contract: Address; tokenId: bigint; holder: Address; delta: bigint }>;
  /** New absolute units per touched (collection, holder); zero removes the holder. */
  holders: ReadonlyArray<{ contract: Address; holder: Address; units: bigint }>;
  collections: ReadonlyArray<{
    contract: Address;
    minted: bigint;
    burned: bigint;
    holders: number;
    transfers: number;
  }>;
}

/** Current units of the given (collection, holder) pairs; absent pairs hold nothing. */
export async function holderUnits(
  sql: Queryable,
  chainId: number,
  pairs: ReadonlyArray<{ contract: Address; holder: Address }>,
): Promise<Map<string, bigint>> {
  const units = new Map<string, bigint>();
  if (pairs.length === 0) return units;
  const rows = await sql<{ contract: Uint8Array; holder: Uint8Array; units: string }[]>`
    SELECT h.contract, h.holder, h.units
    FROM ${bulkRows(
      sql,
      { c: joinColumn(pairs.map((p) => bare(p.contract))), h: joinColumn(pairs.map((p) => bare(p.holder))) },
      { joined: true },
    )}
    JOIN collection_holders h
      ON h.chain_id = ${chainId} AND h.contract = decode(u.c, 'hex') AND h.holder = decode(u.h, 'hex')`;
  for (const row of rows) units.set(toHex(row.contract) + toHex(row.holder), BigInt(row.units));
  return units;
}

/**
 * Ownership changes as the parameters of the statements that apply them, built before the
 * transaction (while the previous one runs). Large columns are one comma-joined text each.
 */
export interface EncodedOwnership {
  balances?: { contracts: string; tokenIds: string; holders: string; deltas: string };
  holders?: { contracts: string; holders: string; units: string };
  collections?: { contracts: string; minted: string; burned: string; holders: string; transfers: string };
}

/** `sign` -1 encodes the changes in reverse (a rollback); holders are always set to the absolute units given. */
export function encodeOwnership(changes: OwnershipChanges, sign: 1 | -1 = 1): EncodedOwnership {
  const s = BigInt(sign);
  const { balances, holders, collections } = changes;
  return {
    balances:
      balances.length === 0
        ? undefined
        : {
            contracts: joinColumn(balances.map((b) => bare(b.contract))),
            tokenIds: joinColumn(balances.map((b) => b.tokenId)),
            holders: joinColumn(balances.map((b) => bare(b.holder))),
            deltas: joinColumn(balances.map((b) => b.delta * s)),
          },
    holders:
      holders.length === 0
        ? undefined
        : {
            contracts: joinColumn(holders.map((h) => bare(h.contract))),
            holders: joinColumn(holders.map((h) => bare(h.holder))),
            units: joinColumn(holders.map((h) => h.units)),
          },
    collections:
      collections.length === 0
        ? undefined
        : {
            contracts: joinColumn(collections.map((c) => bare(c.contract))),
            minted: joinColumn(collections.map((c) => c.minted * s)),
            burned: joinColumn(collections.map((c) => c.burned * s)),
            holders: joinColumn(collections.map((c) => c.holders * sign)),
            transfers: joinColumn(collections.map((c) => c.transfers * sign)),
          },
  };
}

export async function applyOwnership(
  sql: Queryable,
  chainId: number,
  changes: OwnershipChanges,
  sign: 1 | -1 = 1,
): Promise<void> {
  await runInOrder(ownershipStatements(sql, chainId, encodeOwnership(changes, sign)));
}

/** The statements that apply encoded changes, built but not sent: the caller runs them. */
/**
 * Adds units per (token, holder) to a table of balances (the current ones, or a history's sums before
 * a start block), deleting a row that reaches zero. Columns as `joinColumn` gives them: contract and
 * holder in hex, token id and delta in decimal.
 */
export function mergeBalances(
  sql: Queryable,
  table: "token_balances" | "ownership_history_balances",
  chainId: number,
  columns: { c: string; tid: string; h: string; d: string },
): Statement {
  return sql`
    MERGE INTO ${sql(table)} t
    USING (SELECT decode(c, 'hex') AS contract, tid::numeric AS token_id, decode(h, 'hex') AS holder, d::numeric AS delta
           FROM ${bulkRows(sql, columns, { joined: true })}) s
    ON t.chain_id = ${chainId} AND t.contract = s.contract AND t.token_id = s.token_id AND t.holder = s.holder
    WHEN MATCHED AND t.amount + s.delta = 0 THEN DELETE
    WHEN MATCHED THEN UPDATE SET amount = t.amount + s.delta
    WHEN NOT MATCHED THEN INSERT (chain_id, contract, token_id, holder, amount)
      VALUES (${chainId}, s.contract, s.token_id, s.holder, s.delta)`;
}

export function ownershipStatements(sql: Queryable, chainId: number, encoded: EncodedOwnership): Statement[] {
  const { balances, holders, collections } = encoded;
  const statements: Statement[] = [];
  if (balances) {
    statements.push(
      mergeBalances(sql, "token_balances", chainId, {
        c: balances.contracts,
        tid: balances.tokenIds,
        h: balances.holders,
        d: balances.deltas,
      }),
    );
  }
  if (holders) {
    statements.push(sql`
      MERGE INTO collection_holders t
      USING (SELECT decode(c, 'hex') AS contract, decode(h, 'hex') AS holder, n::numeric AS units
             FROM ${bulkRows(sql, { c: holders.contracts, h: holders.holders, n: holders.units }, { joined: true })}) s
      ON t.chain_id = ${chainId} AND t.contract = s.contract AND t.holder = s.holder
      WHEN MATCHED AND s.units = 0 THEN DELETE
      WHEN MATCHED THEN UPDATE SET units = s.units
      WHEN NOT MATCHED AND s.units <> 0 THEN INSERT (chain_id, contract, holder, units)
        VALUES (${chainId}, s.contract, s.holder, s.units)`);
  }
  if (collections) {
    statements.push(sql`
      INSERT INTO collection_stats AS t (chain_id, contract, minted, burned, holders, transfers)
      SELECT ${chainId}, decode(c, 'hex'), m::numeric, b::numeric, h::bigint, n::bigint
      FROM ${bulkRows(sql, {
        c: collections.contracts,
        m: collections.minted,
        b: collections.burned,
        h: collections.holders,
        n: collections.transfers,
      })}
      ON CONFLICT (chain_id, contract) DO UPDATE SET
        minted = t.minted + excluded.minted, burned = t.burned + excluded.burned,
        holders = t.holders + excluded.holders, transfers = t.transfers + excluded.transfers`);
  }
  return statements;
}

/** After a rollback: collections the rollback emptied are removed (only those it touched are looked at). */
export async function pruneCollectionsAfterRollback(
  sql: Queryable,
  chainId: number,
  changes: Pick<OwnershipChanges, "collections">,
): Promise<void> {
  await sql`
    DELETE FROM collection_stats t
    USING ${bulkRows(sql, { c: joinColumn(changes.collections.map((k) => bare(k.contract))) }, { joined: true })}
    WHERE t.chain_id = ${chainId} AND t.contract = decode(u.c, 'hex') AND t.transfers = 0`;
}
