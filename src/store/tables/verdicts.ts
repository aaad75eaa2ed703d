/**
 * Wash rules that fired on a sale after it was stored (migration 0016): each verdict appends its
 * rule to the sale's flags and is kept with the block that gave it, so that a rollback to before
 * that block takes the rule out again. A verdict is recorded only for a rule the sale did not carry,
 * so taking it out restores the flags the sale had.
 */
import type { SaleClass } from "../../core/sale-classes.ts";
import type { SaleKey, SaleVerdict } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";
import { type SaleKeyRow, saleKeyOf } from "./sales.ts";

export interface EncodedVerdicts {
  count: number;
  columns: Record<"b" | "li" | "sq" | "s" | "r" | "vb", string>;
}

export function encodeVerdicts(verdicts: readonly SaleVerdict[]): EncodedVerdicts {
  return {
    count: verdicts.length,
    columns: {
      b: joinColumn(verdicts.map((v) => v.sale.blockNumber)),
      li: joinColumn(verdicts.map((v) => v.sale.logIndex)),
      sq: joinColumn(verdicts.map((v) => v.sale.seq)),
      s: joinColumn(verdicts.map((v) => bare(v.sale.seller))),
      // Rule names are plain identifiers: no comma.
      r: joinColumn(verdicts.map((v) => v.rule)),
      vb: joinColumn(verdicts.map((v) => v.blockNumber)),
    },
  };
}

/**
 * Records the verdicts whose sale does not carry their rule yet and appends the rules to the sales'
 * flags, in the order of the blocks that gave them (then by name): the flags come out the same
 * whichever batches the blocks fell into. Runs after the batch's sales are written.
 */
export function verdictStatements(sql: Queryable, chainId: number, encoded: EncodedVerdicts): Statement[] {
  if (encoded.count === 0) return [];
  return [
    sql`
    WITH v AS (
      SELECT b::bigint AS block_number, li::int AS log_index, sq::int AS seq, decode(s, 'hex') AS seller, r AS rule,
             vb::bigint AS verdict_block
      FROM ${bulkRows(sql, encoded.columns, { joined: true })}),
    fresh AS (
      INSERT INTO sale_verdicts (chain_id, block_number, log_index, seq, seller, rule, verdict_block)
      SELECT ${chainId}, v.block_number, v.log_index, v.seq, v.seller, v.rule, v.verdict_block
      FROM v JOIN sales s ON s.chain_id = ${chainId} AND s.block_number = v.block_number
        AND s.log_index = v.log_index AND s.seq = v.seq AND s.seller = v.seller
      WHERE s.kind = 'sale' AND NOT (v.rule = ANY (s.flags))
      ON CONFLICT DO NOTHING
      RETURNING block_number, log_index, seq, seller, rule, verdict_block)
    UPDATE sales s SET flags = s.flags || f.rules
    FROM (SELECT block_number, log_index, seq, seller, array_agg(rule ORDER BY verdict_block, rule) AS rules
          FROM fresh GROUP BY 1, 2, 3, 4) f
    WHERE s.chain_id = ${chainId} AND s.block_number = f.block_number AND s.log_index = f.log_index
      AND s.seq = f.seq AND s.seller = f.seller`,
  ];
}

/** A sale whose flags a rollback changed: its key, what its bucket counts of it, and its classes. */
export interface RevokedSale extends SaleKey {
  quantity: bigint;
  totalNative: bigint;
  was: SaleClass;
  now: SaleClass;
}

/**
 * Takes back the verdicts given after `ancestor`: their rules leave the flags of the sales that
 * remain (those of the orphaned blocks are deleted with them). The sales whose flags changed, for
 * the rollups to move them back.
 */
export async function revokeVerdictsAfter(
  sql: Queryable,
  chainId: number,
  ancestor: number,
): Promise<RevokedSale[]> {
  const rows = await sql<
    (SaleKeyRow & { quantity: string; total_native: string; was: SaleClass; now: SaleClass })[]
  >`
    WITH gone AS (
      DELETE FROM sale_verdicts WHERE chain_id = ${chainId} AND verdict_block > ${ancestor}
      RETURNING block_number, log_index, seq, seller, rule),
    target AS (
      SELECT s.block_number, s.log_index, s.seq, s.seller, s.flags AS before, array_agg(g.rule) AS rules
      FROM gone g JOIN sales s ON s.chain_id = ${chainId} AND s.block_number = g.block_number
        AND s.log_index = g.log_index AND s.seq = g.seq AND s.seller = g.seller
      WHERE g.block_number <= ${ancestor}
      GROUP BY 1, 2, 3, 4, 5)
    UPDATE sales s
    SET flags = ARRAY(SELECT f FROM unnest(t.before) WITH ORDINALITY AS x(f, o) WHERE f <> ALL (t.rules) ORDER BY o)
    FROM target t
    WHERE s.chain_id = ${chainId} AND s.block_number = t.block_number AND s.log_index = t.log_index
      AND s.seq = t.seq AND s.seller = t.seller
    RETURNING s.contract, s.block_number, s.log_index, s.seq, s.seller, extract(epoch FROM s.block_time)::bigint AS time,
              s.quantity, s.total_native, mintlens_sale_class(t.before) AS was, mintlens_sale_class(s.flags) AS now`;
  return rows.map((r) => ({
    ...saleKeyOf(r),
    quantity: BigInt(r.quantity),
    totalNative: BigInt(r.total_native),
    was: r.was,
    now: r.now,
  }));
}
