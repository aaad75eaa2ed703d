/**
 * The requests of each operation the scale benchmark measures, one operation per question whose
 * cost could grow with the store: each ranking metric on its shortest and longest window, each
 * series on 1 day by 15 minutes and 365 days by 1 day, the contracts list plain and filtered by
 * type, the largest collection's owners, a collection's figures and floor, a token's owners and a
 * wallet's NFTs (`holdings.ts`, as `bench:api` asks them), and first pages against the 1000th.
 * Series end at the start of the store's last day, so a store built days ago is asked about its
 * own last day.
 */
import type { Address } from "../../src/core/hex.ts";
import { Prng } from "../../src/demo/prng.ts";
import { type Queryable, toHex } from "../../src/store/pg/database.ts";
import { type DeepList, type DeepPair, deepList } from "../bench-api/deep-pages.ts";
import { drawHoldings, type Holdings, holdingDeepLists, holdingOperations } from "../bench-api/holdings.ts";
import type { Operation } from "../bench-api/operations.ts";

const POPULAR = 100;
const TOKENS = 1000;
const CONTRACT_PAGES = 50;
const METRICS = [
  ["volume", "METRIC_SALES_VOLUME"],
  ["sales", "METRIC_SALES_QUANTITY"],
  ["max price", "METRIC_MAX_PRICE"],
  ["avg price", "METRIC_AVG_PRICE"],
] as const;
const WINDOWS = [
  ["1 day", "DURATION_1_DAY"],
  ["365 days", "DURATION_365_DAYS"],
] as const;
const SERIES_SHAPES = [
  ["1d/15min", "DURATION_1_DAY/GROUP_BY_PERIOD_15_MINUTES"],
  ["365d/1d", "DURATION_365_DAYS/GROUP_BY_PERIOD_1_DAY"],
] as const;

export interface ScaleOperations {
  operations: Operation[];
  deepLists: DeepList[];
  /** Filled once the deep pages are found on the running server. */
  pairs: DeepPair[];
  /** What the operations were drawn from, for the report. */
  facts: {
    largest: Address;
    holders: number;
    contracts: number;
    endDay: string;
    holdings: Holdings;
    notes: string[];
  };
}

/** `whales`: the market's busiest wallets, the first holding the collector's vault in a store built with one. */
export async function scaleOperationsFor(
  sql: Queryable,
  chainId: number,
  seed: string,
  whales: Address[],
): Promise<ScaleOperations> {
  const notes: string[] = [];
  const [chain] = await sql<{ end: string }[]>`
    SELECT extract(epoch FROM window_end)::bigint AS end FROM chains WHERE chain_id = ${chainId}`;
  if (!chain) throw new Error(`chain ${chainId} has no ranked windows: is the store built?`);
  const endDay = new Date(Math.floor(Number(chain.end) / 86_400) * 86_400 * 1000).toISOString();
  const popular = (
    await sql<{ contract: Uint8Array }[]>`
      SELECT contract FROM collection_windows WHERE chain_id = ${chainId} AND window_seconds = 31536000
      ORDER BY sales DESC, contract LIMIT ${POPULAR}`
  ).map((r) => toHex(r.contract) as Address);
  // The collection with the most holders (often airdropped spam, as on mainnet): the longest owners list.
  const [stats] = await sql<{ contract: Uint8Array; n: string }[]>`
    SELECT contract, holders::text AS n FROM collection_stats WHERE chain_id = ${chainId}
    ORDER BY holders DESC, contract LIMIT 1`;
  const [counted] = await sql<{ contracts: number; tokens: number }[]>`
    SELECT (SELECT count(*)::int FROM contracts WHERE chain_id = ${chainId}) AS contracts,
           (SELECT greatest(reltuples, 1)::float8 FROM pg_class WHERE relname = 'tokens') AS tokens`;
  // Tokens spread over the whole store, the same ones on every run: a repeatable sample of pages.
  const percent = Math.min(100, (100 * 4 * TOKENS) / (counted?.tokens ?? 1));
  const tokens = (
    await sql<{ contract: Uint8Array; token_id: string }[]>`
      SELECT contract, token_id::text FROM tokens TABLESAMPLE BERNOULLI (${percent}) REPEATABLE (7)
      WHERE chain_id = ${chainId} LIMIT ${TOKENS}`
  ).map((r) => `${toHex(r.contract)}/${r.token_id}`);
  if (popular.length === 0 || tokens.length === 0 || !stats)
    throw new Error("the store has no collections or tokens");
  const largest = toHex(stats.contract) as Address;
  const holders = Number(stats.n);
  const contracts = counted?.contracts ?? 0;

  const random = new Prng(`${seed}:scale-requests`);
  const shuffled = (paths: string[]) => random.sample(paths, paths.length);
  const firstPages = (base: string, size: number, pages: number) =>
    shuffled(Array.from({ length: pages }, (_, page) => `${base}limit=${size}&offset=${page * size}`));
  const keyed = (name: string, kind: Operation["kind"], paths: string[]): Operation => ({
    name,
    kind,
    keyed: true,
    paths,
  });
  const contractsBase = "/foundational/v1beta2/contracts?sortDirection=SORT_DIRECTION_ASC&";
  const ownersBase = `/collections/v1beta2/${largest}/owners_list?`;
  const operations: Operation[] = [
    { name: "healthz (bare route)", kind: "bare", keyed: false, paths: ["/healthz"] },
    keyed("contracts", "list", firstPages(contractsBase, 20, CONTRACT_PAGES)),
    keyed(
      "contracts ERC-1155",
      "list",
      firstPages(`${contractsBase}contractTypes=TYPE_ERC1155&`, 20, CONTRACT_PAGES),
    ),
  ];
  for (const [label, metric] of METRICS) {
    for (const [window, duration] of WINDOWS) {
      operations.push(
        keyed(`top ${label} ${window}`, "top", [`/collections/v1beta2/top/${metric}/${duration}?limit=20`]),
      );
    }
  }
  operations.push(keyed("owners of the largest", "list", [`${ownersBase}limit=100`]));
  for (const what of ["supply", "owners_count", "prices", "sales_volume"]) {
    for (const [label, shape] of SERIES_SHAPES) {
      operations.push(
        keyed(
          `${what} ${label}`,
          "series",
          shuffled(popular.map((c) => `/collections/v1beta2/${c}/${what}/${shape}?timestampLt=${endDay}`)),
        ),
      );
    }
  }
  operations.push(
    keyed(
      "nft details",
      "nft",
      tokens.map((t) => `/foundational/v1beta2/nfts/${t}/details`),
    ),
  );
  operations.push(
    keyed(
      "nft raw_metadata",
      "nft",
      tokens.map((t) => `/foundational/v1beta2/nfts/${t}/raw_metadata`),
    ),
  );

  const holdings = await drawHoldings(sql, chainId, { tokens, whales });
  operations.push(...holdingOperations(holdings, shuffled));

  // The 1000th page against the first, at the largest page size that still has 1000 pages.
  const deepLists = [
    deepList("contracts", contractsBase, contracts, notes),
    deepList("owners of the largest", ownersBase, holders, notes),
  ].filter((l): l is DeepList => l !== undefined);
  deepLists.push(...holdingDeepLists(holdings, notes));
  return {
    operations,
    deepLists,
    pairs: [],
    facts: { largest, holders, contracts, endDay, holdings, notes },
  };
}
