import type { ContractCreation } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

/**
 * Stores contract creations as they are read, without inspecting the contracts: cheap enough for
 * the millions a traced backfill meets. The first deployment of an address is kept (an address is
 * deployed again only after a self-destruct, and its mint event is the first).
 */
export function insertCreationsStatements(
  sql: Queryable,
  chainId: number,
  creations: readonly ContractCreation[],
  source: "trace" | "receipt",
  timeOf: (blockNumber: number) => number,
): Statement[] {
  if (creations.length === 0) return [];
  return [
    sql`
      INSERT INTO contract_creations (chain_id, address, block_number, block_time, tx_hash, creator, minter, source)
      SELECT ${chainId}, decode(a, 'hex'), b::bigint, to_timestamp(t::bigint), decode(tx, 'hex'), decode(c, 'hex'),
             decode(m, 'hex'), ${source}
      FROM ${bulkRows(sql, {
        a: joinColumn(creations.map((c) => bare(c.address))),
        b: joinColumn(creations.map((c) => c.blockNumber)),
        t: joinColumn(creations.map((c) => timeOf(c.blockNumber))),
        tx: joinColumn(creations.map((c) => bare(c.txHash))),
        c: joinColumn(creations.map((c) => bare(c.creator))),
        m: joinColumn(creations.map((c) => bare(c.txFrom))),
      })}
      ON CONFLICT (chain_id, address) DO NOTHING`,
  ];
}

export async function deleteCreationsAfter(sql: Queryable, chainId: number, block: number): Promise<void> {
  await sql`DELETE FROM contract_creations WHERE chain_id = ${chainId} AND block_number > ${block}`;
}
