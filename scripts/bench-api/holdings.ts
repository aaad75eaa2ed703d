/**
 * The operations over a collection's figures, its floor and traits, a token's owners, a wallet's
 * NFTs and the transfers list (by collection, token, sender, recipient and the sales label),
 * shared by the API and scale benchmarks: what they rotate over is drawn from the store by
 * statements that stay cheap on a store of 100,000,000 transfers (samples of pages, ranges of
 * keys, the few collections with the most holders), and each operation is one entry of a list.
 */
import type { Address } from "../../src/core/hex.ts";
import { bare, type Queryable, toHex } from "../../src/store/pg/database.ts";
import { type DeepList, deepList } from "./deep-pages.ts";
import type { Operation } from "./operations.ts";

/** What the operations rotate over. */
export interface Holdings {
  /** Collections across the store; the one with the most transfers first. */
  collections: Address[];
  /** The collection with the most NFT transfers, and how many. */
  busiest: { contract: Address; transfers: number } | undefined;
  /** Tokens across the store, as `contract/tokenId`. */
  tokens: string[];
  /** The tokens with the most owners, most first, as `contract/tokenId`, and their owners. */
  crowded: { token: string; owners: number }[];
  /** Holders across the store. */
  holders: Address[];
  /** The wallets holding the most NFTs, most first, and how many the first holds. */
  whales: Address[];
  whaleNfts: number;
  /** Collections with CryptoPunks public offers. */
  offered: Address[];
}

const COLLECTIONS = 200;
const TRANSFERS = "/foundational/v1beta2/transfers/nft";
const HOLDERS = 1000;
const WHALES = 100;
const CROWDED = 100;
/** ERC-1155 collections, the most held first, whose tokens are counted for the most owned. */
const CROWDED_COLLECTIONS = 10;

/**
 * Draws what the operations rotate over. `tokens` are the caller's own sample of tokens; `whales`,
 * when the caller knows the busiest wallets (the market's first ones), spares counting every
 * holder's NFTs, which a large store cannot afford.
 */
export async function drawHoldings(
  sql: Queryable,
  chainId: number,
  options: { tokens: string[]; whales?: Address[] },
): Promise<Holdings> {
  const hex = (rows: { a: Uint8Array }[]) => rows.map((r) => toHex(r.a) as Address);
  const [busiestRow] = await sql<{ a: Uint8Array; n: string }[]>`
    SELECT contract AS a, transfers::text AS n FROM collection_stats WHERE chain_id = ${chainId}
    ORDER BY transfers DESC, contract LIMIT 1`;
  const busiest = busiestRow && {
    contract: toHex(busiestRow.a) as Address,
    transfers: Number(busiestRow.n),
  };
  const spread = hex(
    await sql<{ a: Uint8Array }[]>`
      SELECT contract AS a FROM collection_stats WHERE chain_id = ${chainId}
      ORDER BY md5(contract::text) LIMIT ${COLLECTIONS}`,
  );
  const collections = busiest ? [busiest.contract, ...spread.filter((c) => c !== busiest.contract)] : spread;

  // Pages sampled across token_balances: a repeatable sample that reads a few thousand rows, not the table.
  const [counted] = await sql<{ n: number }[]>`
    SELECT greatest(reltuples, 1)::float8 AS n FROM pg_class WHERE relname = 'token_balances'`;
  const percent = Math.min(100, (100 * 4 * HOLDERS) / (counted?.n ?? 1));
  const holders = hex(
    await sql<{ a: Uint8Array }[]>`
      SELECT DISTINCT holder AS a FROM token_balances TABLESAMPLE SYSTEM (${percent}) REPEATABLE (7)
      WHERE chain_id = ${chainId} AND amount > 0 LIMIT ${HOLDERS}`,
  );

  let whales = options.whales;
  if (whales === undefined) {
    whales = hex(
      await sql<{ a: Uint8Array }[]>`
        SELECT holder AS a FROM token_balances WHERE chain_id = ${chainId} AND amount > 0
        GROUP BY holder ORDER BY count(*) DESC, holder LIMIT ${WHALES}`,
    );
  }
  let whaleNfts = 0;
  const [whale] = whales;
  if (whale !== undefined) {
    const [row] = await sql<{ n: string }[]>`
      SELECT count(*) AS n FROM token_balances
      WHERE chain_id = ${chainId} AND holder = ${Buffer.from(bare(whale), "hex")} AND amount > 0`;
    whaleNfts = Number(row?.n ?? 0);
  }

  // The most owned tokens are ERC-1155 ones of the collections with the most holders (airdropped
  // spam, as on mainnet): their tokens are counted, one range of token_balances' key each.
  const crowded = (
    await sql<{ a: Uint8Array; token_id: string; n: string }[]>`
      SELECT b.contract AS a, b.token_id::text, count(*) AS n
      FROM (SELECT s.contract FROM collection_stats s
            JOIN contracts c ON c.chain_id = s.chain_id AND c.address = s.contract
            WHERE s.chain_id = ${chainId} AND 'TYPE_ERC1155' = ANY (c.types)
            ORDER BY s.holders DESC, s.contract LIMIT ${CROWDED_COLLECTIONS}) top
      JOIN token_balances b ON b.chain_id = ${chainId} AND b.contract = top.contract AND b.amount > 0
      GROUP BY b.contract, b.token_id HAVING count(*) > 1
      ORDER BY count(*) DESC, b.contract, b.token_id LIMIT ${CROWDED}`
  ).map((r) => ({ token: `${toHex(r.a)}/${r.token_id}`, owners: Number(r.n) }));

  const offered = hex(
    await sql<{ a: Uint8Array }[]>`
      SELECT DISTINCT contract AS a FROM punk_offers WHERE chain_id = ${chainId} LIMIT 10`,
  );
  return { collections, busiest, tokens: options.tokens, crowded, holders, whales, whaleNfts, offered };
}

/**
 * One operation per question, each rotating over its paths (`shuffled` fixes their order per run);
 * an operation with nothing to ask of this store is left out. A new operation is one entry here.
 */
export function holdingOperations(h: Holdings, shuffled: (paths: string[]) => string[]): Operation[] {
  const op = (name: string, kind: Operation["kind"], paths: string[]): Operation => ({
    name,
    kind,
    keyed: true,
    paths: shuffled(paths),
  });
  const floors = (collections: Address[]) => collections.map((c) => `/marketplaces/v1beta2/floors/${c}`);
  const operations = [
    op(
      "collection metadata",
      "collection",
      h.collections.map((c) => `/collections/v1beta2/${c}/metadata?includeStats=true`),
    ),
    op(
      "collection totals",
      "collection",
      h.collections.map((c) => `/collections/v1beta2/${c}/totals`),
    ),
    // Read by key however many transfers it has (about 9 million on the largest scale store).
    op(
      "collection totals, busiest collection",
      "collection",
      h.busiest ? [`/collections/v1beta2/${h.busiest.contract}/totals`] : [],
    ),
    // Collections without punk offers answer every price null: a lookup of the contract and an
    // empty range of punk_offers.
    op("floor price, no offers", "collection", floors(h.collections.filter((c) => !h.offered.includes(c)))),
    op("floor price, punk offers", "collection", floors(h.offered)),
    op(
      "token owners",
      "list",
      h.tokens.map((t) => `/foundational/v1beta2/nfts/${t}/owners?limit=100`),
    ),
    op(
      "token owners, most owned",
      "list",
      h.crowded.map(({ token }) => `/foundational/v1beta2/nfts/${token}/owners?limit=100`),
    ),
    op(
      "wallet nfts",
      "list",
      h.holders.map((a) => `/wallets/v1beta2/${a}/nfts?limit=100`),
    ),
    op(
      "wallet nfts, busiest wallets",
      "list",
      h.whales.map((a) => `/wallets/v1beta2/${a}/nfts?limit=100`),
    ),
    op("transfers, newest of the chain", "list", [`${TRANSFERS}?limit=100`]),
    op(
      "transfers of a collection",
      "list",
      h.collections.map((c) => `${TRANSFERS}?contractAddress=${c}&limit=100`),
    ),
    op(
      "transfers of a collection, 20 a page",
      "list",
      h.collections.map((c) => `${TRANSFERS}?contractAddress=${c}`),
    ),
    op(
      "sales of a collection",
      "list",
      h.collections.map((c) => `${TRANSFERS}?contractAddress=${c}&labelsAny=LABEL_SALE&limit=100`),
    ),
    op(
      "transfers of a token",
      "list",
      h.tokens.map((t) => {
        const [contract, id] = t.split("/");
        return `${TRANSFERS}?contractAddress=${contract}&tokenId=${id}&limit=100`;
      }),
    ),
    op(
      "transfers to a wallet",
      "list",
      h.holders.map((a) => `${TRANSFERS}?recipientAddress=${a}&limit=100`),
    ),
    op(
      "transfers from the busiest wallets",
      "list",
      h.whales.map((a) => `${TRANSFERS}?senderAddress=${a}&limit=100`),
    ),
    // Traits come from fetched documents; a store without them answers empty lists, a key range each.
    op(
      "string traits of a collection",
      "collection",
      h.collections.map((c) => `/collections/v1beta2/${c}/traits/string?limit=100`),
    ),
  ];
  return operations.filter((o) => o.paths.length > 0);
}

/** The lists whose 1000th page is compared with their first: the most owned token's owners, the largest wallet's NFTs. */
export function holdingDeepLists(h: Holdings, notes: string[]): DeepList[] {
  const lists: (DeepList | undefined)[] = [];
  const [crowded] = h.crowded;
  if (crowded) {
    notes.push(`the most owned token: ${crowded.token}, ${crowded.owners.toLocaleString("en")} owners`);
    lists.push(
      deepList(
        "owners of the most owned token",
        `/foundational/v1beta2/nfts/${crowded.token}/owners?`,
        crowded.owners,
        notes,
      ),
    );
  }
  const [whale] = h.whales;
  if (whale) {
    notes.push(`the largest wallet: ${whale}, ${h.whaleNfts.toLocaleString("en")} NFTs`);
    lists.push(deepList("NFTs of the largest wallet", `/wallets/v1beta2/${whale}/nfts?`, h.whaleNfts, notes));
  }
  if (h.busiest) {
    notes.push(
      `the busiest collection: ${h.busiest.contract}, ${h.busiest.transfers.toLocaleString("en")} transfers`,
    );
    lists.push(
      deepList(
        "transfers of the busiest collection",
        `${TRANSFERS}?contractAddress=${h.busiest.contract}&`,
        h.busiest.transfers,
        notes,
      ),
    );
  }
  return lists.filter((l): l is DeepList => l !== undefined);
}
