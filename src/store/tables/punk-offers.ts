/**
 * CryptoPunks public offers, kept as the history of each punk's offer (see migrations 0021 and
 * 0025): the batch appends and marks the rows it replaces, a rollback deletes what came after its
 * ancestor and reopens what that had replaced, and the open offers are the unreplaced rows that
 * have a price.
 */
import type { Address } from "../../core/hex.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, type Queryable } from "../pg/database.ts";
import type { Statement } from "../pg/session.ts";

/** One change of a punk's public offer: its minimum price in wei, or null when it ended. */
export interface PunkOfferRow {
  contract: Address;
  punkIndex: bigint;
  minValue: bigint | null;
  blockNumber: number;
  logIndex: number;
}

/**
 * Appends a batch's offer changes (in chain order) and marks each punk's row they replace with the
 * block that replaced it: first the rows open before the batch, then each new row but the punk's
 * last in the batch.
 */
export function punkOfferStatements(
  sql: Queryable,
  chainId: number,
  offers: readonly PunkOfferRow[],
): Statement[] {
  if (offers.length === 0) return [];
  const firstBlock = new Map<string, PunkOfferRow>();
  const superseded: (number | null)[] = new Array(offers.length).fill(null);
  const latest = new Map<string, number>();
  offers.forEach((offer, i) => {
    const punk = `${offer.contract}:${offer.punkIndex}`;
    if (!firstBlock.has(punk)) firstBlock.set(punk, offer);
    const before = latest.get(punk);
    if (before !== undefined) superseded[before] = offer.blockNumber;
    latest.set(punk, i);
  });
  const firsts = [...firstBlock.values()];
  return [
    sql`
    UPDATE punk_offers o SET superseded_block = f.b::bigint
    FROM ${bulkRows(
      sql,
      {
        c: joinColumn(firsts.map((o) => bare(o.contract))),
        p: joinColumn(firsts.map((o) => o.punkIndex)),
        b: joinColumn(firsts.map((o) => o.blockNumber)),
      },
      { joined: true, alias: "f" },
    )}
    WHERE o.chain_id = ${chainId} AND o.contract = decode(f.c, 'hex') AND o.punk_index = f.p::numeric
      AND o.superseded_block IS NULL`,
    sql`
    INSERT INTO punk_offers (chain_id, contract, punk_index, block_number, log_index, min_value, superseded_block)
    SELECT ${chainId}, decode(c, 'hex'), p::numeric, b::bigint, li::integer, NULLIF(v, '')::numeric,
           NULLIF(s, '')::bigint
    FROM ${bulkRows(sql, {
      c: joinColumn(offers.map((o) => bare(o.contract))),
      p: joinColumn(offers.map((o) => o.punkIndex)),
      b: joinColumn(offers.map((o) => o.blockNumber)),
      li: joinColumn(offers.map((o) => o.logIndex)),
      v: joinColumn(offers.map((o) => o.minValue)),
      s: joinColumn(superseded),
    })}`,
  ];
}

/** Undoes the blocks after `ancestor`: their rows go, and the rows they replaced are current again. */
export async function deletePunkOffersAfter(
  sql: Queryable,
  chainId: number,
  ancestor: number,
): Promise<void> {
  await sql`DELETE FROM punk_offers WHERE chain_id = ${chainId} AND block_number > ${ancestor}`;
  await sql`
    UPDATE punk_offers SET superseded_block = NULL
    WHERE chain_id = ${chainId} AND superseded_block > ${ancestor}`;
}

/** The lowest open public offer of a punks contract, in wei; undefined when none is open. */
export async function lowestPunkOffer(
  sql: Queryable,
  chainId: number,
  contract: Address,
): Promise<bigint | undefined> {
  const rows = await lowestPunkOfferQuery(sql, chainId, contract);
  const floor = rows[0]?.floor;
  return floor === undefined ? undefined : BigInt(floor);
}

/** The statement `lowestPunkOffer` runs, unsent (tests explain it): one probe of `punk_offers_open`. */
export function lowestPunkOfferQuery(sql: Queryable, chainId: number, contract: Address) {
  return sql<{ floor: string }[]>`
    SELECT min_value::text AS floor FROM punk_offers
    WHERE chain_id = ${chainId} AND contract = decode(${bare(contract)}, 'hex')
      AND superseded_block IS NULL AND min_value IS NOT NULL
    ORDER BY min_value LIMIT 1`;
}
