import type postgres from "postgres";
import { BURN_ADDRESSES } from "../../core/burn.ts";
import { type Address, type Hex, ZERO_ADDRESS } from "../../core/hex.ts";
import { MARKET_LABELS, type TradeFacts, type TransferLabel } from "../../core/transfer-labels.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

/** What a transfer's trades were paid, added up: the buyer side's payment, in base units. */
export interface TransferPrice {
  nativePaid: bigint;
  fungiblePaid: bigint;
  totalNative: bigint;
  /** USD at the block's rate as an exact decimal; undefined when any trade has no USD value. */
  totalUsd: string | undefined;
  attributedBy: string;
  /** Each ERC-20 paid, in its base units, with its decimals when the token's contract is known. */
  payments: { token: Address; amount: bigint; decimals: number | undefined }[];
}

/** A stored trade keyed by a transfer: its facts for the labels, and its price. */
export interface TransferTrade extends TradeFacts {
  seller: Address;
  price: TransferPrice;
}

export interface NftTransferRow {
  blockNumber: bigint;
  logIndex: number;
  seq: number;
  txHash: Hex;
  blockTime: Date;
  contract: Address;
  tokenId: bigint;
  /** The event's standard: `erc721`, `erc1155`, `erc721_legacy` or `cryptopunks`. */
  standard: string;
  quantity: bigint;
  from: Address;
  to: Address;
  /** The trades this transfer delivered (sales, paid mints, returns), by seller. */
  trades: TransferTrade[];
  /** Its collection is judged spam now (verdict or override, as `spamVerdicts` in ./spam.ts serves it). */
  spam: boolean;
}

/** Where a page ended: the position of its last transfer. */
export interface TransferPosition {
  blockNumber: bigint;
  logIndex: number;
  seq: number;
}

export interface NftTransfersQuery {
  limit: number;
  offset: number;
  direction: "asc" | "desc";
  contract?: Address | undefined;
  /** Only with `contract`. */
  tokenId?: bigint | undefined;
  sender?: Address | undefined;
  recipient?: Address | undefined;
  /** Only transfers in blocks at or after this one (a time bound resolved by `blockBounds`). */
  fromBlock?: bigint | undefined;
  /** Only transfers in blocks before this one. */
  toBlock?: bigint | undefined;
  /** Only transfers carrying one of these labels; every transfer when empty. */
  labels: readonly TransferLabel[];
  after?: TransferPosition | undefined;
}

/** The labels that only a trade of the transfer gives: a list asking only for these walks the trades. */
const TRADE_LABELS: ReadonlySet<TransferLabel> = new Set<TransferLabel>([
  "LABEL_SALE",
  "LABEL_BUNDLE",
  ...Object.values(MARKET_LABELS),
  "LABEL_PAID_MINT",
  "LABEL_RETURN",
  "LABEL_WASH",
  "LABEL_RATE_OUTLIER",
  "LABEL_UNPRICED",
  "LABEL_ORGANIC",
]);

const hex = (address: Address) => Buffer.from(bare(address), "hex");
/** The zero address as a constant of the query's text, as the sender index's predicate has it. */
const NOT_MINT_SENDER = `'\\x${bare(ZERO_ADDRESS)}'::bytea`;
const BURNS = [...BURN_ADDRESSES].map(hex);

/**
 * Whether the trade row `s` gives `label`: the SQL of `transferLabels` (src/core/transfer-labels.ts)
 * for one trade.
 */
function tradeCondition(sql: Queryable, label: TransferLabel): Fragment {
  switch (label) {
    case "LABEL_PAID_MINT":
      return sql`s.kind = 'mint'`;
    case "LABEL_RETURN":
      return sql`s.kind = 'return'`;
    case "LABEL_SALE":
      return sql`s.kind = 'sale'`;
    case "LABEL_BUNDLE":
      return sql`(s.kind = 'sale' AND EXISTS (
        SELECT 1 FROM sales o
        WHERE o.chain_id = s.chain_id AND o.block_number = s.block_number AND o.tx_hash = s.tx_hash
          AND o.buyer = s.buyer AND o.kind = 'sale' AND (o.log_index, o.seq) <> (s.log_index, s.seq)))`;
    case "LABEL_WASH":
      return sql`(s.kind = 'sale' AND EXISTS (SELECT 1 FROM unnest(s.flags) AS f WHERE f LIKE 'wash%'))`;
    case "LABEL_RATE_OUTLIER":
      return sql`(s.kind = 'sale' AND 'rate_outlier' = ANY (s.flags))`;
    case "LABEL_UNPRICED":
      return sql`(s.kind = 'sale' AND 'unpriced' = ANY (s.flags))`;
    case "LABEL_ORGANIC":
      return sql`(s.kind = 'sale' AND mintlens_sale_class(s.flags) = 'organic')`;
    default: {
      const markets = Object.entries(MARKET_LABELS)
        .filter(([, l]) => l === label)
        .map(([market]) => market);
      return markets.length === 0 ? sql`false` : sql`(s.kind = 'sale' AND s.market IN ${sql(markets)})`;
    }
  }
}

type Fragment = postgres.PendingQuery<postgres.Row[]>;

const or = (sql: Queryable, parts: readonly Fragment[]): Fragment =>
  parts.reduce((all, part) => sql`${all} OR ${part}`);

/** Whether the transfer `t` carries one of `labels`. */
function transferCondition(sql: Queryable, labels: readonly TransferLabel[]): Fragment {
  const parts: Fragment[] = [];
  const trade = labels.filter((l) => TRADE_LABELS.has(l));
  if (labels.includes("LABEL_MINT")) parts.push(sql`t.from_address = ${hex(ZERO_ADDRESS)}`);
  if (labels.includes("LABEL_BURN")) parts.push(sql`t.to_address IN ${sql(BURNS)}`);
  if (labels.includes("LABEL_TRANSFER")) {
    parts.push(sql`(t.from_address <> ${hex(ZERO_ADDRESS)} AND t.to_address NOT IN ${sql(BURNS)}
      AND NOT EXISTS (SELECT 1 FROM sales s WHERE s.chain_id = t.chain_id AND s.block_number = t.block_number
                      AND s.log_index = t.log_index AND s.seq = t.seq AND s.kind = 'sale'))`);
  }
  if (labels.includes("LABEL_SPAM")) {
    // An operator's override wins over the computed verdict; a contract never judged is not spam.
    parts.push(sql`coalesce(
      (SELECT o.is_spam FROM spam_overrides o WHERE o.chain_id = t.chain_id AND o.contract = t.contract),
      (SELECT v.is_spam FROM spam_verdicts v WHERE v.chain_id = t.chain_id AND v.contract = t.contract),
      false)`);
  }
  if (trade.length > 0) {
    parts.push(sql`EXISTS (SELECT 1 FROM sales s WHERE s.chain_id = t.chain_id AND s.block_number = t.block_number
                      AND s.log_index = t.log_index AND s.seq = t.seq
                      AND (${or(
                        sql,
                        trade.map((l) => tradeCondition(sql, l)),
                      )}))`);
  }
  return sql`AND (${or(sql, parts)})`;
}

interface KeyRow {
  block_number: string;
  log_index: number;
  seq: number;
}

interface Row extends KeyRow {
  contract: Uint8Array;
  token_id: string;
  from_address: Uint8Array;
  to_address: Uint8Array;
  amount: string;
  tx_hash: Uint8Array;
  block_time: Date;
  standard: string;
  trades: TradeJson[] | null;
  spam: boolean;
}

interface TradeJson {
  seller: string;
  kind: TradeFacts["kind"];
  market: string;
  flags: string[];
  bundled: boolean;
  attributed_by: string;
  native_paid: string;
  fungible_paid: string;
  total_native: string;
  total_usd: string | null;
  payments: { token: string; amount: string; decimals: number | null }[];
}

/**
 * Which index walk serves a query. Every filter is a range of one index in block order, so a page
 * costs its own rows, not its depth: a token by `nft_transfers_by_token`, a sender or a recipient
 * by theirs, a collection by `nft_transfers_by_contract`, the whole chain by the key. A list asking
 * only for trade labels (the sales list) walks the trades instead (`sales`' key, or
 * `sales_by_contract`): sales are a small share of the transfers, so walking the transfers for them
 * would read many rows per row kept.
 */
export function walksTrades(query: NftTransfersQuery): boolean {
  return (
    query.labels.length > 0 &&
    query.labels.every((l) => TRADE_LABELS.has(l)) &&
    query.tokenId === undefined &&
    query.sender === undefined &&
    query.recipient === undefined
  );
}

/**
 * The query of a page of transfers, unsent: `listNftTransfers` runs it, and a test can ask
 * PostgreSQL for its plan. The page's positions come from one range of one index (see
 * `walksTrades`), cut at offset + limit rows; then each row of the page reads its transfer, its
 * trades and their payments by key.
 */
export function nftTransfersQuery(sql: Queryable, chainId: number, query: NftTransfersQuery) {
  const asc = query.direction === "asc";
  const dir = asc ? "ASC" : "DESC";
  const trades = walksTrades(query);
  const alias = trades ? "s" : "t";
  // Column names of the walked table, as fresh fragments: one fragment cannot stand in two places.
  const col = (name: string) => sql.unsafe(`${alias}.${name}`);
  const conditions: Fragment[] = [];
  if (query.contract !== undefined) conditions.push(sql`AND ${col("contract")} = ${hex(query.contract)}`);
  if (query.tokenId !== undefined)
    conditions.push(sql`AND t.token_id = ${query.tokenId.toString()}::numeric`);
  if (query.sender !== undefined) {
    conditions.push(sql`AND t.from_address = ${hex(query.sender)}`);
    // The sender index leaves the mints out (migration 0026): the planner uses it only when the
    // query says, in constants it can match, that the sender is not the zero address.
    if (query.sender !== ZERO_ADDRESS)
      conditions.push(sql.unsafe(`AND t.from_address <> ${NOT_MINT_SENDER}`));
  }
  if (query.recipient !== undefined) conditions.push(sql`AND t.to_address = ${hex(query.recipient)}`);
  if (query.fromBlock !== undefined) {
    conditions.push(sql`AND ${col("block_number")} >= ${query.fromBlock.toString()}::bigint`);
  }
  if (query.toBlock !== undefined) {
    conditions.push(sql`AND ${col("block_number")} < ${query.toBlock.toString()}::bigint`);
  }
  if (query.after !== undefined) {
    const { blockNumber, logIndex, seq } = query.after;
    conditions.push(
      sql`AND (${col("block_number")}, ${col("log_index")}, ${col("seq")}) ${sql.unsafe(asc ? ">" : "<")}
              (${blockNumber.toString()}::bigint, ${logIndex}::integer, ${seq}::integer)`,
    );
  }
  // An empty list would be sent as a parameter: no conditions are no fragment.
  const where = () => (conditions.length === 0 ? sql`` : sql`${conditions}`);
  const order = () =>
    sql.unsafe(`${alias}.block_number ${dir}, ${alias}.log_index ${dir}, ${alias}.seq ${dir}`);
  const keys = trades
    ? // A transfer that delivered units of several sellers keys one trade each: once in the page.
      sql`SELECT DISTINCT ON (s.block_number, s.log_index, s.seq) s.block_number, s.log_index, s.seq
          FROM sales s
          WHERE s.chain_id = ${chainId} ${where()}
            AND (${or(
              sql,
              query.labels.map((l) => tradeCondition(sql, l)),
            )})
          ORDER BY ${order()}`
    : sql`SELECT t.block_number, t.log_index, t.seq FROM nft_transfers t
          WHERE t.chain_id = ${chainId} ${where()}
            ${query.labels.length === 0 ? sql`` : transferCondition(sql, query.labels)}
          ORDER BY ${order()}`;
  return sql<Row[]>`
    SELECT k.block_number::text AS block_number, k.log_index, k.seq, t.contract, t.token_id::text AS token_id,
           t.from_address, t.to_address, t.amount::text AS amount, t.tx_hash, t.block_time, t.standard, x.trades,
           -- As spamVerdicts (./spam.ts) serves it: an operator's override, else the computed verdict, else not spam.
           coalesce(
             (SELECT o.is_spam FROM spam_overrides o WHERE o.chain_id = ${chainId} AND o.contract = t.contract),
             (SELECT v.is_spam FROM spam_verdicts v WHERE v.chain_id = ${chainId} AND v.contract = t.contract),
             false) AS spam
    FROM (${keys} LIMIT ${query.limit} OFFSET ${query.offset}) k
    -- Lateral with a limit, so that each is a lookup by key per row of the page.
    JOIN LATERAL (SELECT * FROM nft_transfers t
                  WHERE t.chain_id = ${chainId} AND t.block_number = k.block_number AND t.log_index = k.log_index
                    AND t.seq = k.seq LIMIT 1) t ON true
    LEFT JOIN LATERAL (
      SELECT json_agg(json_build_object(
               'seller', encode(s.seller, 'hex'), 'kind', s.kind, 'market', s.market, 'flags', s.flags,
               'bundled', s.kind = 'sale' AND EXISTS (
                 SELECT 1 FROM sales o
                 WHERE o.chain_id = s.chain_id AND o.block_number = s.block_number AND o.tx_hash = s.tx_hash
                   AND o.buyer = s.buyer AND o.kind = 'sale' AND (o.log_index, o.seq) <> (s.log_index, s.seq)),
               'attributed_by', s.attributed_by, 'native_paid', s.native_paid::text,
               'fungible_paid', s.fungible_paid::text, 'total_native', s.total_native::text,
               'total_usd', s.total_usd::text,
               'payments', (SELECT coalesce(json_agg(json_build_object(
                                'token', encode(p.token, 'hex'), 'amount', p.amount::text, 'decimals', c.decimals)
                                ORDER BY p.token), '[]'::json)
                            FROM sale_payments p
                            LEFT JOIN contracts c ON c.chain_id = p.chain_id AND c.address = p.token
                            WHERE p.chain_id = s.chain_id AND p.block_number = s.block_number
                              AND p.log_index = s.log_index AND p.seq = s.seq AND p.seller = s.seller))
             ORDER BY s.seller) AS trades
      FROM sales s
      WHERE s.chain_id = ${chainId} AND s.block_number = k.block_number AND s.log_index = k.log_index
        AND s.seq = k.seq) x ON true
    ORDER BY ${sql.unsafe(`k.block_number ${dir}, k.log_index ${dir}, k.seq ${dir}`)}`;
}

/** A page of NFT transfers (see `nftTransfersQuery`), each with the trades it delivered. */
export async function listNftTransfers(
  sql: Queryable,
  chainId: number,
  query: NftTransfersQuery,
): Promise<NftTransferRow[]> {
  const rows = await nftTransfersQuery(sql, chainId, query);
  return rows.map((r) => ({
    blockNumber: BigInt(r.block_number),
    logIndex: r.log_index,
    seq: r.seq,
    txHash: toHex(r.tx_hash) as Hex,
    blockTime: r.block_time,
    contract: toHex(r.contract) as Address,
    tokenId: BigInt(r.token_id),
    standard: r.standard,
    quantity: BigInt(r.amount),
    from: toHex(r.from_address) as Address,
    to: toHex(r.to_address) as Address,
    trades: (r.trades ?? []).map(tradeOf),
    spam: r.spam,
  }));
}

function tradeOf(j: TradeJson): TransferTrade {
  return {
    seller: `0x${j.seller}` as Address,
    kind: j.kind,
    market: j.market,
    flags: j.flags,
    bundled: j.bundled,
    price: {
      nativePaid: BigInt(j.native_paid),
      fungiblePaid: BigInt(j.fungible_paid),
      totalNative: BigInt(j.total_native),
      totalUsd: j.total_usd ?? undefined,
      attributedBy: j.attributed_by,
      payments: j.payments.map((p) => ({
        token: `0x${p.token}` as Address,
        amount: BigInt(p.amount),
        decimals: p.decimals ?? undefined,
      })),
    },
  };
}

/**
 * The blocks a time range covers: the first block after `after` and the first at or after
 * `before`, found by a binary search over the transfers' key (about 30 probes of one index descent
 * each, in one statement). Block times never go down along a chain, so the transfers strictly
 * between the two instants are those of blocks in [fromBlock, toBlock).
 */
export async function blockBounds(
  sql: Queryable,
  chainId: number,
  range: { after?: Date | undefined; before?: Date | undefined },
): Promise<{ fromBlock: bigint | undefined; toBlock: bigint | undefined }> {
  const first = async (time: Date, strict: boolean): Promise<bigint> => {
    const cmp = sql.unsafe(strict ? ">" : ">=");
    const [row] = await sql<{ block: string }[]>`
      WITH RECURSIVE search(lo, hi) AS (
        SELECT 0::bigint,
               coalesce((SELECT block_number + 1 FROM nft_transfers WHERE chain_id = ${chainId}
                         ORDER BY block_number DESC LIMIT 1), 0)
        UNION ALL
        SELECT CASE WHEN found THEN lo ELSE mid + 1 END, CASE WHEN found THEN mid ELSE hi END
        FROM (SELECT lo, hi, (lo + hi) / 2 AS mid,
                     coalesce((SELECT block_time ${cmp} ${time} FROM nft_transfers
                               WHERE chain_id = ${chainId} AND block_number >= (lo + hi) / 2
                               ORDER BY block_number LIMIT 1), true) AS found
              FROM search WHERE lo < hi) step
      )
      SELECT min(lo)::text AS block FROM search WHERE lo >= hi`;
    return BigInt(row?.block ?? 0);
  };
  return {
    fromBlock: range.after === undefined ? undefined : await first(range.after, true),
    toBlock: range.before === undefined ? undefined : await first(range.before, false),
  };
}
