import type { Address, Hex } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";
import type { NftDetails, NftMetadataFields } from "./nft.ts";
import { type FiredSignal, type ServedSpamVerdict, servedVerdict } from "./spam.ts";

/** A token an address holds: the NFT as its details show it, without metrics or sale, and the units held. */
export interface WalletNft
  extends Pick<NftDetails, "contract" | "tokenId" | "types" | "collectionName" | "mint" | "metadata"> {
  /** Units held: 1 for an ERC-721 token, any positive number for an ERC-1155 one. */
  quantity: bigint;
  /** Its collection's spam verdict. */
  spam: ServedSpamVerdict;
}

/** Where a page ended: the contract and token id of its last holding. */
export interface HoldingPosition {
  contract: Address;
  tokenId: bigint;
}

export interface WalletNftsQuery {
  limit: number;
  offset: number;
  /** Only the holdings of this collection. */
  contract?: Address | undefined;
  /** Only holdings after this one: the page after the one that ended there. */
  after?: HoldingPosition | undefined;
  /** List the holdings of collections judged spam too; without it they are left out. */
  includeSpam?: boolean | undefined;
}

interface Row {
  contract: Uint8Array;
  token_id: string;
  amount: string;
  types: ContractType[] | null;
  collection_name: string | null;
  tx_hash: Uint8Array | null;
  log_index: number | null;
  block_time: Date | null;
  uri: string | null;
  mime_type: string | null;
  name: string | null;
  description: string | null;
  image_uri: string | null;
  image_uri_original: string | null;
  image_mime_type: string | null;
  score: number | null;
  is_spam: boolean | null;
  signals: FiredSignal[] | null;
  override: boolean | null;
}

/**
 * The query of a page of an address's holdings, unsent: `listWalletNfts` runs it, and a test can
 * ask PostgreSQL for its plan. With spam included, the page is one range of
 * `token_balances_by_holder` (migration 0020: chain, holder, contract, token id, only rows with
 * units), cut at offset + limit rows; a contract filter and "after this holding" narrow the same
 * range. Each row of the page then looks up its collection, mint, metadata and spam verdict by key,
 * and only the page's rows do.
 *
 * Without spam, the holder's contracts are walked one by one along the same index (each the next
 * contract after the previous one: one index descent per contract, however many tokens of it the
 * address holds), each contract's verdict looked up by key, and only the tokens of contracts that
 * are not spam read, as ranges of the index. A wallet of 100,000 tokens of spam collections and 10
 * others reads 10 holdings and one descent per collection it holds, not 100,000 rows.
 */
export function walletNftsQuery(sql: Queryable, chainId: number, holder: Address, query: WalletNftsQuery) {
  const holderBytes = Buffer.from(bare(holder), "hex");
  const contract =
    query.contract === undefined ? sql`` : sql`AND contract = ${Buffer.from(bare(query.contract), "hex")}`;
  const after =
    query.after === undefined
      ? sql``
      : sql`AND (contract, token_id) > (${Buffer.from(bare(query.after.contract), "hex")}, ${query.after.tokenId.toString()}::numeric)`;
  const holdings = query.includeSpam
    ? sql`
      SELECT contract, token_id, amount FROM token_balances
      WHERE chain_id = ${chainId} AND holder = ${holderBytes} AND amount > 0 ${contract} ${after}
      ORDER BY contract, token_id
      LIMIT ${query.limit} OFFSET ${query.offset}`
    : sql`
      WITH RECURSIVE held (contract) AS (
        (SELECT contract FROM token_balances
         WHERE chain_id = ${chainId} AND holder = ${holderBytes} AND amount > 0 ${contract}
           ${query.after === undefined ? sql`` : sql`AND contract >= ${Buffer.from(bare(query.after.contract), "hex")}`}
         ORDER BY contract LIMIT 1)
        UNION ALL
        SELECT (SELECT n.contract FROM token_balances n
                WHERE n.chain_id = ${chainId} AND n.holder = ${holderBytes} AND n.amount > 0
                  AND n.contract > held.contract ${query.contract === undefined ? sql`` : sql`AND n.contract = ${Buffer.from(bare(query.contract), "hex")}`}
                ORDER BY n.contract LIMIT 1)
        FROM held WHERE held.contract IS NOT NULL
      )
      SELECT b.contract, b.token_id, b.amount FROM held
      CROSS JOIN LATERAL (
        SELECT (SELECT is_spam FROM spam_overrides WHERE chain_id = ${chainId} AND contract = held.contract) AS override,
               (SELECT is_spam FROM spam_verdicts WHERE chain_id = ${chainId} AND contract = held.contract) AS is_spam) v
      -- The contracts come in order and each one's tokens in order: the rows are in (contract,
      -- token id) order as they are produced, so the limit stops the walk (no sort reads them all).
      CROSS JOIN LATERAL (
        SELECT contract, token_id, amount FROM token_balances
        WHERE chain_id = ${chainId} AND holder = ${holderBytes} AND amount > 0 AND contract = held.contract ${after}
        ORDER BY token_id) b
      WHERE held.contract IS NOT NULL AND NOT coalesce(v.override, v.is_spam, false)
      LIMIT ${query.limit} OFFSET ${query.offset}`;
  return sql<Row[]>`
    SELECT b.contract, b.token_id::text AS token_id, b.amount::text AS amount, c.types, c.name AS collection_name,
           t.tx_hash, t.log_index, t.block_time, m.uri, m.mime_type, m.name, m.description, m.image_uri,
           m.image_uri_original, m.image_mime_type, s.score, s.is_spam, s.signals, o.is_spam AS override
    FROM (${holdings}) b
    -- Lateral with a limit, so that each is a lookup by key per row of the page, whatever the
    -- planner makes of the tables' sizes.
    LEFT JOIN LATERAL (SELECT types, name FROM contracts
                       WHERE chain_id = ${chainId} AND address = b.contract LIMIT 1) c ON true
    LEFT JOIN LATERAL (SELECT tx_hash, log_index, block_time FROM tokens
                       WHERE chain_id = ${chainId} AND contract = b.contract AND token_id = b.token_id LIMIT 1) t ON true
    LEFT JOIN LATERAL (SELECT uri, mime_type, name, description, image_uri, image_uri_original, image_mime_type
                       FROM token_metadata
                       WHERE chain_id = ${chainId} AND contract = b.contract AND token_id = b.token_id AND status = 'ok'
                       LIMIT 1) m ON true
    LEFT JOIN LATERAL (SELECT score, is_spam, signals FROM spam_verdicts
                       WHERE chain_id = ${chainId} AND contract = b.contract LIMIT 1) s ON true
    LEFT JOIN LATERAL (SELECT is_spam FROM spam_overrides
                       WHERE chain_id = ${chainId} AND contract = b.contract LIMIT 1) o ON true
    ORDER BY b.contract, b.token_id`;
}

/**
 * A page of the tokens an address holds now, by contract and token id (see `walletNftsQuery`): every
 * holding of collections not judged spam, or every holding with `includeSpam`; an address that
 * holds nothing has none.
 */
export async function listWalletNfts(
  sql: Queryable,
  chainId: number,
  holder: Address,
  query: WalletNftsQuery,
): Promise<WalletNft[]> {
  const rows = await walletNftsQuery(sql, chainId, holder, query);
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    tokenId: BigInt(r.token_id),
    quantity: BigInt(r.amount),
    types: r.types ?? [],
    collectionName: r.collection_name ?? "",
    mint:
      r.tx_hash === null || r.log_index === null || r.block_time === null
        ? undefined
        : { txHash: toHex(r.tx_hash) as Hex, logIndex: r.log_index, blockTime: r.block_time },
    metadata: r.uri === null ? undefined : metadataOf(r),
    spam: servedVerdict(r),
  }));
}

function metadataOf(r: Row): NftMetadataFields {
  return {
    uri: r.uri ?? "",
    mimeType: r.mime_type ?? "",
    name: r.name ?? "",
    description: r.description ?? "",
    imageUri: r.image_uri ?? "",
    imageUriOriginal: r.image_uri_original ?? "",
    imageMimeType: r.image_mime_type ?? "",
  };
}
