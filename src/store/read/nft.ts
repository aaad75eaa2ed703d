import type { Address, Hex } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

export interface NftSale {
  txHash: Hex;
  logIndex: number;
  seq: number;
  blockNumber: bigint;
  blockTime: Date;
  /** Wei: the native part, the ERC-20 part converted, and their sum. */
  nativePaid: bigint;
  fungiblePaid: bigint;
  totalNative: bigint;
  /** USD at the block's rate as an exact decimal, undefined without a rate. */
  totalUsd: string | undefined;
  attributedBy: string;
  /** What was found about the sale: the wash rules that fired, `rate_outlier`, `unpriced`, `tx_value`. */
  flags: string[];
  /** Each ERC-20 paid, in its base units, with its decimals when the token's contract is known. */
  payments: { token: Address; amount: bigint; decimals: number | undefined }[];
}

export interface NftDetails {
  contract: Address;
  tokenId: bigint;
  types: ContractType[];
  collectionName: string;
  /** The token's first mint, undefined when it was minted before the indexed blocks. */
  mint: { txHash: Hex; logIndex: number; blockTime: Date } | undefined;
  /** Units in existence (1 for an ERC-721 not burned) and their holders now. */
  quantity: bigint;
  ownerCount: bigint;
  lastSale: NftSale | undefined;
  /** The normalised fields of the token's metadata document; undefined until one is fetched. */
  metadata: NftMetadataFields | undefined;
  /** The token's rarity as last ranked; undefined until its collection is ranked with its document. */
  rarity?: NftRarityFields | undefined;
}

export interface NftRarityFields {
  /** Bits of information content (see `informationScores`). */
  score: number;
  rank: bigint;
  /** Tokens ranked, and when. */
  collectionSize: bigint;
  rankedAt: Date;
}

export interface NftMetadataFields {
  uri: string;
  mimeType: string;
  name: string;
  description: string;
  imageUri: string;
  imageUriOriginal: string;
  imageMimeType: string;
}

/**
 * One NFT: its mint, supply, holders and latest sale, each read by its key. Undefined for a token
 * the indexer never saw minted and nobody holds.
 */
export async function nftDetails(
  sql: Queryable,
  chainId: number,
  contract: Address,
  tokenId: bigint,
): Promise<NftDetails | undefined> {
  const address = Buffer.from(bare(contract), "hex");
  const id = tokenId.toString();
  const [[mint], [held], [collection], [sale], [metadata], [rarity]] = await Promise.all([
    sql<{ tx_hash: Uint8Array; log_index: number; block_time: Date }[]>`
      SELECT tx_hash, log_index, block_time FROM tokens
      WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric`,
    sql<{ quantity: string; owners: string }[]>`
      SELECT coalesce(sum(amount), 0)::text AS quantity, count(*)::text AS owners FROM token_balances
      WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric AND amount > 0`,
    sql<{ types: ContractType[]; name: string }[]>`
      SELECT types, name FROM contracts WHERE chain_id = ${chainId} AND address = ${address}`,
    sql<
      {
        block_number: string;
        log_index: number;
        seq: number;
        seller: Uint8Array;
        tx_hash: Uint8Array;
        block_time: Date;
        native_paid: string;
        fungible_paid: string;
        total_native: string;
        total_usd: string | null;
        attributed_by: string;
        flags: string[];
      }[]
    >`
      SELECT block_number::text, log_index, seq, seller, tx_hash, block_time, native_paid::text, fungible_paid::text,
             total_native::text, total_usd::text, attributed_by, flags
      FROM sales s
      WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric AND kind = 'sale'
      -- Qualified: the bare name would order by the text column of the same name selected above.
      ORDER BY s.block_number DESC, s.log_index DESC, s.seq DESC
      LIMIT 1`,
    sql<NftMetadataFields[]>`
      SELECT uri, mime_type AS "mimeType", name, description, image_uri AS "imageUri",
             image_uri_original AS "imageUriOriginal", image_mime_type AS "imageMimeType"
      FROM token_metadata
      WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric AND status = 'ok'`,
    sql<{ score: number; rank: string; size: string; ranked_at: Date }[]>`
      SELECT r.score, r.rank::text, t.ranked_documents::text AS size, t.ranked_at
      FROM token_rarity r
      JOIN collection_trait_totals t ON t.chain_id = r.chain_id AND t.contract = r.contract
      WHERE r.chain_id = ${chainId} AND r.contract = ${address} AND r.token_id = ${id}::numeric`,
  ]);
  const quantity = BigInt(held?.quantity ?? 0);
  if (!mint && quantity === 0n) return undefined;
  let lastSale: NftSale | undefined;
  if (sale) {
    const payments = await sql<{ token: Uint8Array; amount: string; decimals: number | null }[]>`
      SELECT p.token, p.amount::text, c.decimals
      FROM sale_payments p LEFT JOIN contracts c ON c.chain_id = p.chain_id AND c.address = p.token
      WHERE p.chain_id = ${chainId} AND p.contract = ${address} AND p.block_number = ${sale.block_number}::bigint
        AND p.log_index = ${sale.log_index} AND p.seq = ${sale.seq} AND p.seller = ${sale.seller}
      ORDER BY p.token`;
    lastSale = {
      txHash: toHex(sale.tx_hash) as Hex,
      logIndex: sale.log_index,
      seq: sale.seq,
      blockNumber: BigInt(sale.block_number),
      blockTime: sale.block_time,
      nativePaid: BigInt(sale.native_paid),
      fungiblePaid: BigInt(sale.fungible_paid),
      totalNative: BigInt(sale.total_native),
      totalUsd: sale.total_usd ?? undefined,
      attributedBy: sale.attributed_by,
      flags: sale.flags,
      payments: payments.map((p) => ({
        token: toHex(p.token) as Address,
        amount: BigInt(p.amount),
        decimals: p.decimals ?? undefined,
      })),
    };
  }
  return {
    contract,
    tokenId,
    types: collection?.types ?? [],
    collectionName: collection?.name ?? "",
    mint: mint && {
      txHash: toHex(mint.tx_hash) as Hex,
      logIndex: mint.log_index,
      blockTime: mint.block_time,
    },
    quantity,
    ownerCount: BigInt(held?.owners ?? 0),
    lastSale,
    metadata,
    rarity: rarity && {
      score: rarity.score,
      rank: BigInt(rarity.rank),
      collectionSize: BigInt(rarity.size),
      rankedAt: rarity.ranked_at,
    },
  };
}
