/**
 * A store whose outbox holds a long history, written straight into `stream_events` in the shape the
 * indexer writes it (a transfer row per NFT transfer, a trade row after one transfer in ten, with
 * its price breakdown as JSON; 300 transfers a block), so the backfill a consumer reads is as large
 * as asked without indexing a chain of that size through anvil.
 */
import type { Sql } from "../../src/store/pg/database.ts";

const TRANSFERS_PER_BLOCK = 300;
const ROWS_PER_STATEMENT = 100_000;

/** A sale's stored content (src/core/stream-events.ts `StoredTrade`). */
const TRADE = JSON.stringify({
  kind: "sale",
  market: "opensea",
  flags: [],
  bundled: false,
  attributedBy: "ATTRIBUTED_BY_MARKET_EVENT",
  nativePaid: "1250000000000000000",
  fungiblePaid: "0",
  totalNative: "1250000000000000000",
  totalUsd: "3912.5",
  payments: [],
});

/**
 * Writes `transfers` transfers (and a trade for one in ten) for chain `chainId`, and the chain's
 * checkpoint past them. Returns the number of events a consumer reading everything receives: each
 * transfer's own, its sender's and its recipient's ownership events (mints have no sender's side),
 * and each trade.
 */
export async function writeOutboxHistory(sql: Sql, chainId: number, transfers: number): Promise<number> {
  const blocks = Math.ceil(transfers / TRANSFERS_PER_BLOCK);
  await sql`
    INSERT INTO chains (chain_id, name, native_symbol, start_block, next_block)
    VALUES (${chainId}, 'bench', 'ETH', 1, ${blocks + 1})`;
  let id = 0;
  for (let first = 0; first < transfers; first += ROWS_PER_STATEMENT) {
    const last = Math.min(transfers, first + ROWS_PER_STATEMENT) - 1;
    // Transfer g is in block g / 300 + 1; one in ten is a sale (a trade row right after it); one in
    // five is a mint (from the zero address).
    await sql`
      INSERT INTO stream_events (chain_id, id, block_number, log_index, seq, kind, contract, token_id, from_address,
                                 to_address, amount, tx_hash, block_time, standard, trade)
      SELECT ${chainId}, ${id} + row_number() OVER (ORDER BY g, k), g / ${TRANSFERS_PER_BLOCK} + 1,
             g % ${TRANSFERS_PER_BLOCK}, 0, k, decode(lpad(to_hex(g % 40 + 1), 40, '0'), 'hex'), g,
             CASE WHEN g % 5 = 0 AND k = 0 THEN '\\x0000000000000000000000000000000000000000'::bytea
                  ELSE substring(decode(md5('f' || g), 'hex') || decode(md5('F' || g), 'hex') FROM 1 FOR 20) END,
             substring(decode(md5('t' || g), 'hex') || decode(md5('T' || g), 'hex') FROM 1 FOR 20),
             1, decode(md5('x' || g) || md5('X' || g), 'hex'),
             timestamptz '2026-01-01' + (g / ${TRANSFERS_PER_BLOCK}) * interval '12 seconds',
             CASE WHEN k = 0 THEN 'erc721' END, CASE WHEN k = 1 THEN (${TRADE}::text)::json END
      FROM generate_series(${first}::bigint, ${last}::bigint) g
      CROSS JOIN LATERAL (SELECT 0 AS k UNION ALL SELECT 1 WHERE g % 10 = 3) kinds`;
    const [row] = await sql<
      { id: string }[]
    >`SELECT max(id) AS id FROM stream_events WHERE chain_id = ${chainId}`;
    id = Number(row?.id ?? 0);
  }
  await sql`ANALYZE stream_events`;
  const mints = Math.floor((transfers - 1) / 5) + 1;
  const sales = Math.floor((transfers - 4) / 10) + 1;
  return transfers * 3 - mints + sales;
}
