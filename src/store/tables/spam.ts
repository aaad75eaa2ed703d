/**
 * The spam job's tables (migration 0024): the facts each contract is judged on, read with a bound
 * on every scan; the contracts waiting to be judged again; the verdicts; the operators' overrides.
 */
import type { Address } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { bare, type Queryable, type Sql, toHex } from "../pg/database.ts";

/** Newest transfers of a contract read for sprays: the activity that changed it, not its whole history. */
export const SPRAY_WINDOW = 5_000;
/** Sales read per contract: enough to tell "almost none" from "some" for a million holders. */
export const SALES_READ = 10_000;
/** Balances read to find an ERC-1155 contract's most held token id. */
export const EDITION_BALANCES_READ = 200_000;
/** Token documents read per contract for lures. */
export const TEXTS_READ = 20;
/** Known collections compared against: the best-selling of the last 365 days. */
export const KNOWN_READ = 5_000;
const KNOWN_WINDOW_SECONDS = 365 * 86_400;

const bytes = (address: Address) => Buffer.from(bare(address), "hex");

/** What the store knows of a contract for its spam verdict (src/spam/score.ts reads it as its facts). */
export interface StoredContractFacts {
  contract: Address;
  name: string;
  symbol: string;
  holders: number;
  /** Organic sales among the first `SALES_READ` sales read. */
  organicSales: number;
  paidMints: number;
  /** The newest `SPRAY_WINDOW` transfers without a payment, by transaction. */
  spray: { largest: number; sprays: number; sprayed: number; transfers: number };
  /** Only for an ERC-1155 contract with at least `editionHolders` holders. */
  topEdition: { tokenId: bigint; holders: number; payments: number } | undefined;
  texts: { tokenNames: string[]; tokenDescriptions: string[] };
}

/** Where the figures read turn into signals: what counts as a spray, and an edition worth reading. */
export interface FactThresholds {
  sprayRecipients: number;
  editionHolders: number;
}

/** A collection with organic sales in the last 365 days. */
export interface SellingCollection {
  contract: Address;
  name: string;
  organicSales: number;
}

/** A verdict as stored: the signals are kept as the JSON the API shows. */
export interface VerdictRow {
  contract: Address;
  score: number;
  isSpam: boolean;
  signals: readonly unknown[];
}

/** The facts of one contract, each scan bounded (see the constants above). */
export async function contractFacts(
  sql: Queryable,
  chainId: number,
  contract: Address,
  thresholds: FactThresholds,
): Promise<StoredContractFacts> {
  const address = bytes(contract);
  const [[identity], [sales], [spray], texts] = await Promise.all([
    sql<
      { name: string | null; symbol: string | null; types: ContractType[] | null; holders: string | null }[]
    >`
      SELECT c.name, c.symbol, c.types, s.holders::text AS holders
      FROM (SELECT 1) one
      LEFT JOIN contracts c ON c.chain_id = ${chainId} AND c.address = ${address}
      LEFT JOIN collection_stats s ON s.chain_id = ${chainId} AND s.contract = ${address}`,
    sql<{ organic: string; paid_mints: string }[]>`
      SELECT count(*) FILTER (WHERE kind = 'sale' AND mintlens_sale_class(flags) = 'organic')::text AS organic,
             count(*) FILTER (WHERE kind = 'mint')::text AS paid_mints
      FROM (SELECT kind, flags FROM sales WHERE chain_id = ${chainId} AND contract = ${address}
            LIMIT ${SALES_READ}) s`,
    // A transfer is paid when a trade is stored under its key (a sale or a paid mint): sales are
    // keyed by the transfer that delivered the NFT.
    sql<{ largest: string; sprays: string; sprayed: string; transfers: string }[]>`
      SELECT coalesce(max(recipients), 0)::text AS largest,
             count(*) FILTER (WHERE recipients >= ${thresholds.sprayRecipients})::text AS sprays,
             coalesce(sum(recipients) FILTER (WHERE recipients >= ${thresholds.sprayRecipients}), 0)::text AS sprayed,
             coalesce(sum(n), 0)::text AS transfers
      FROM (SELECT tx_hash, count(DISTINCT to_address) FILTER (WHERE NOT paid) AS recipients, count(*) AS n
            FROM (SELECT t.tx_hash, t.to_address,
                         EXISTS (SELECT 1 FROM sales s
                                 WHERE s.chain_id = t.chain_id AND s.contract = t.contract
                                   AND s.block_number = t.block_number AND s.log_index = t.log_index
                                   AND s.seq = t.seq) AS paid
                  FROM nft_transfers t
                  WHERE t.chain_id = ${chainId} AND t.contract = ${address}
                    AND t.to_address <> '\\x0000000000000000000000000000000000000000'::bytea
                  ORDER BY t.block_number DESC, t.log_index DESC, t.seq DESC
                  LIMIT ${SPRAY_WINDOW}) t
            GROUP BY tx_hash) x`,
    sql<{ name: string; description: string }[]>`
      SELECT name, description FROM token_metadata
      WHERE chain_id = ${chainId} AND contract = ${address} AND status = 'ok'
      ORDER BY token_id LIMIT ${TEXTS_READ}`,
  ]);
  const holders = Number(identity?.holders ?? 0);
  const types = identity?.types ?? [];
  const topEdition =
    types.includes("TYPE_ERC1155") && holders >= thresholds.editionHolders
      ? await mostHeldToken(sql, chainId, address)
      : undefined;
  return {
    contract,
    name: identity?.name ?? "",
    symbol: identity?.symbol ?? "",
    holders,
    organicSales: Number(sales?.organic ?? 0),
    paidMints: Number(sales?.paid_mints ?? 0),
    spray: {
      largest: Number(spray?.largest ?? 0),
      sprays: Number(spray?.sprays ?? 0),
      sprayed: Number(spray?.sprayed ?? 0),
      transfers: Number(spray?.transfers ?? 0),
    },
    topEdition,
    texts: {
      tokenNames: texts.map((t) => t.name).filter((n) => n !== ""),
      tokenDescriptions: texts.map((t) => t.description).filter((d) => d !== ""),
    },
  };
}

async function mostHeldToken(
  sql: Queryable,
  chainId: number,
  address: Buffer,
): Promise<StoredContractFacts["topEdition"]> {
  const [top] = await sql<{ token_id: string; holders: string }[]>`
    SELECT token_id::text AS token_id, count(*)::text AS holders
    FROM (SELECT token_id FROM token_balances
          WHERE chain_id = ${chainId} AND contract = ${address} AND amount > 0
          LIMIT ${EDITION_BALANCES_READ}) b
    GROUP BY token_id ORDER BY count(*) DESC, token_id LIMIT 1`;
  if (top === undefined) return undefined;
  const [paid] = await sql<{ n: string }[]>`
    SELECT count(*)::text AS n FROM (
      SELECT 1 FROM sales WHERE chain_id = ${chainId} AND contract = ${address}
        AND token_id = ${top.token_id}::numeric AND kind IN ('sale', 'mint') LIMIT 1) p`;
  return { tokenId: BigInt(top.token_id), holders: Number(top.holders), payments: Number(paid?.n ?? 0) };
}

/**
 * The collections imitations are compared with: those with at least `minSales` organic
 * sales in the last 365 days, the best-selling `KNOWN_READ` of them (one range of
 * `collection_windows_by_sales`), each with its name.
 */
export async function sellingCollections(
  sql: Queryable,
  chainId: number,
  minSales: number,
): Promise<SellingCollection[]> {
  const rows = await sql<{ contract: Uint8Array; name: string; sales: string }[]>`
    SELECT w.contract, c.name, w.sales::text AS sales
    FROM (SELECT contract, sales FROM collection_windows
          WHERE chain_id = ${chainId} AND window_seconds = ${KNOWN_WINDOW_SECONDS} AND sales >= ${minSales}
          ORDER BY -sales, contract LIMIT ${KNOWN_READ}) w
    JOIN contracts c ON c.chain_id = ${chainId} AND c.address = w.contract
    WHERE c.name <> ''`;
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    name: r.name,
    organicSales: Number(r.sales),
  }));
}

/** What one pass found to judge again. */
export interface ChangedContracts {
  /** Blocks looked at, [from, to). */
  fromBlock: number;
  toBlock: number;
  /** Token documents looked at. */
  documents: number;
  /** Contracts added to the pending list (already pending ones not counted). */
  added: number;
}

/**
 * Adds to `spam_pending` the contracts whose activity changed: transfers (and so sales) in at most
 * `maxBlocks` blocks after the chain's cursor, up to what the indexer has committed; documents
 * fetched since the last one looked at, at most `maxDocuments`; and the `stale` contracts whose
 * verdict is older than `staleAfterMs`. After a rollback the cursor goes back to the indexed
 * block, so the contracts of the blocks indexed again are judged again.
 */
export async function markChangedContracts(
  sql: Queryable,
  chainId: number,
  limits: { maxBlocks: number; maxDocuments: number; stale: number; staleAfterMs: number },
): Promise<ChangedContracts> {
  await sql`INSERT INTO spam_state (chain_id) VALUES (${chainId}) ON CONFLICT (chain_id) DO NOTHING`;
  const [state] = await sql<{ next_block: string; metadata_since: Date; indexed: string | null }[]>`
    SELECT s.next_block::text AS next_block, s.metadata_since,
           (SELECT next_block::text FROM chains WHERE chain_id = ${chainId}) AS indexed
    FROM spam_state s WHERE s.chain_id = ${chainId}`;
  if (state === undefined) throw new Error("the spam state row was just written");
  const indexed = Number(state.indexed ?? 0);
  const fromBlock = Math.min(Number(state.next_block), indexed);
  const toBlock = Math.min(indexed, fromBlock + limits.maxBlocks);
  let added = 0;
  if (toBlock > fromBlock) {
    const result = await sql`
      INSERT INTO spam_pending (chain_id, contract)
      SELECT DISTINCT ${chainId}::bigint, contract FROM nft_transfers
      WHERE chain_id = ${chainId} AND block_number >= ${fromBlock} AND block_number < ${toBlock}
      ON CONFLICT DO NOTHING`;
    added += result.count;
  }
  const documents = await sql<{ contract: Uint8Array; fetched_at: Date }[]>`
    SELECT contract, fetched_at FROM token_metadata
    WHERE chain_id = ${chainId} AND fetched_at > ${state.metadata_since}
    ORDER BY fetched_at LIMIT ${limits.maxDocuments}`;
  if (documents.length > 0) {
    const contracts = [...new Set(documents.map((d) => bare(toHex(d.contract))))];
    const result = await sql`
      INSERT INTO spam_pending (chain_id, contract)
      SELECT ${chainId}::bigint, decode(c, 'hex') FROM unnest(${contracts}::text[]) AS u(c)
      ON CONFLICT DO NOTHING`;
    added += result.count;
  }
  const stale = await sql`
    INSERT INTO spam_pending (chain_id, contract)
    SELECT chain_id, contract FROM spam_verdicts
    WHERE chain_id = ${chainId} AND computed_at < now() - ${limits.staleAfterMs / 1000} * interval '1 second'
    ORDER BY computed_at LIMIT ${limits.stale}
    ON CONFLICT DO NOTHING`;
  added += stale.count;
  const lastDocument = documents[documents.length - 1];
  await sql`
    UPDATE spam_state SET next_block = ${toBlock},
      metadata_since = ${lastDocument?.fetched_at ?? state.metadata_since}
    WHERE chain_id = ${chainId}`;
  return { fromBlock, toBlock, documents: documents.length, added };
}

/** Up to `limit` contracts waiting for a verdict, by address. */
export async function pendingContracts(sql: Queryable, chainId: number, limit: number): Promise<Address[]> {
  const rows = await sql<{ contract: Uint8Array }[]>`
    SELECT contract FROM spam_pending WHERE chain_id = ${chainId} ORDER BY contract LIMIT ${limit}`;
  return rows.map((r) => toHex(r.contract) as Address);
}

/** Stores verdicts and takes their contracts off the pending list, in one transaction. */
export async function storeVerdicts(
  sql: Sql,
  chainId: number,
  verdicts: readonly VerdictRow[],
): Promise<void> {
  if (verdicts.length === 0) return;
  const contracts = verdicts.map((v) => bare(v.contract));
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO spam_verdicts (chain_id, contract, score, is_spam, signals, computed_at)
      SELECT ${chainId}, decode(c, 'hex'), score::integer, is_spam::boolean, signals::jsonb, now()
      FROM unnest(${contracts}::text[], ${verdicts.map((v) => String(v.score))}::text[],
                  ${verdicts.map((v) => String(v.isSpam))}::text[],
                  ${verdicts.map((v) => JSON.stringify(v.signals))}::text[]) AS u(c, score, is_spam, signals)
      ON CONFLICT (chain_id, contract) DO UPDATE
      SET score = EXCLUDED.score, is_spam = EXCLUDED.is_spam, signals = EXCLUDED.signals,
          computed_at = EXCLUDED.computed_at`;
    await tx`
      DELETE FROM spam_pending
      WHERE chain_id = ${chainId} AND contract IN (SELECT decode(c, 'hex') FROM unnest(${contracts}::text[]) AS u(c))`;
  });
}
