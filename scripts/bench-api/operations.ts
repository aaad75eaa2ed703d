/**
 * The requests of each REST operation the benchmark measures. Each operation rotates over many
 * paths (the most traded collections, collections, tokens and holders picked across the whole
 * dataset, every window and series shape) so that it measures the service rather than one cached
 * answer.
 */
import type { Address } from "../../src/core/hex.ts";
import { Prng } from "../../src/demo/prng.ts";
import { type Queryable, toHex } from "../../src/store/pg/database.ts";
import type { DeepList } from "./deep-pages.ts";
import { drawHoldings, holdingDeepLists, holdingOperations } from "./holdings.ts";

/**
 * How the verdicts treat an operation: series and rankings must scale with the data. A
 * `collection` operation reads a collection's figures by key.
 */
export type OperationKind = "bare" | "list" | "top" | "series" | "nft" | "collection";

export interface Operation {
  name: string;
  kind: OperationKind;
  /** Whether it carries the API key (the bare route does not). */
  keyed: boolean;
  paths: string[];
}

const POPULAR = 100;
const TOKENS = 1000;
const CONTRACT_PAGES = 50;
const METRICS = ["METRIC_SALES_VOLUME", "METRIC_SALES_QUANTITY", "METRIC_MAX_PRICE", "METRIC_AVG_PRICE"];
const DURATIONS = [
  "DURATION_1_HOUR",
  "DURATION_1_DAY",
  "DURATION_7_DAYS",
  "DURATION_30_DAYS",
  "DURATION_365_DAYS",
];
const SERIES_SHAPES = [
  "DURATION_1_DAY/GROUP_BY_PERIOD_15_MINUTES",
  "DURATION_7_DAYS/GROUP_BY_PERIOD_1_HOUR",
  "DURATION_30_DAYS/GROUP_BY_PERIOD_1_DAY",
  "DURATION_365_DAYS/GROUP_BY_PERIOD_1_DAY",
];

/** Every operation measured on a dataset. */
export async function operationsFor(sql: Queryable, chainId: number, seed: string): Promise<Operation[]> {
  return (await benchOperations(sql, chainId, seed)).operations;
}

/**
 * Every operation measured on a dataset, and the lists whose 1000th page is compared with their
 * first once the server runs (`deepPageOperations`), with notes on what was drawn.
 */
export async function benchOperations(
  sql: Queryable,
  chainId: number,
  seed: string,
): Promise<{ operations: Operation[]; deepLists: DeepList[]; notes: string[] }> {
  const popular = (
    await sql<{ contract: Uint8Array }[]>`
      SELECT contract FROM collection_days WHERE chain_id = ${chainId}
      GROUP BY contract ORDER BY sum(sales) DESC, contract LIMIT ${POPULAR}`
  ).map((r) => toHex(r.contract) as Address);
  // Spread over the whole dataset, the same ones on every run of a size.
  const tokens = (
    await sql<{ contract: Uint8Array; token_id: string }[]>`
      SELECT contract, token_id::text FROM tokens WHERE chain_id = ${chainId}
      ORDER BY md5(contract::text || token_id::text) LIMIT ${TOKENS}`
  ).map((r) => `${toHex(r.contract)}/${r.token_id}`);
  const [contracts] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM contracts WHERE chain_id = ${chainId}`;
  if (popular.length === 0 || tokens.length === 0)
    throw new Error("the dataset has no collections or tokens");

  const random = new Prng(`${seed}:requests`);
  const shuffled = (paths: string[]) => random.sample(paths, paths.length);
  const pages = Math.max(1, Math.min(CONTRACT_PAGES, Math.floor((contracts?.n ?? 0) / 20)));
  const holdings = await drawHoldings(sql, chainId, { tokens });
  const notes: string[] = [];
  const deepLists = holdingDeepLists(holdings, notes);
  const series = (what: string) =>
    shuffled(
      popular.flatMap((c) => SERIES_SHAPES.map((shape) => `/collections/v1beta2/${c}/${what}/${shape}`)),
    );
  const operations: Operation[] = [
    { name: "healthz (bare route)", kind: "bare", keyed: false, paths: ["/healthz"] },
    {
      name: "contracts",
      kind: "list",
      keyed: true,
      paths: shuffled(
        Array.from(
          { length: pages },
          (_, page) =>
            `/foundational/v1beta2/contracts?limit=20&offset=${page * 20}&sortDirection=SORT_DIRECTION_ASC`,
        ),
      ),
    },
    {
      name: "top collections",
      kind: "top",
      keyed: true,
      paths: shuffled(
        METRICS.flatMap((m) => DURATIONS.map((d) => `/collections/v1beta2/top/${m}/${d}?limit=20`)),
      ),
    },
    {
      name: "owners_list",
      kind: "list",
      keyed: true,
      paths: shuffled(popular.map((c) => `/collections/v1beta2/${c}/owners_list?limit=100`)),
    },
    { name: "supply", kind: "series", keyed: true, paths: series("supply") },
    { name: "owners_count", kind: "series", keyed: true, paths: series("owners_count") },
    { name: "prices", kind: "series", keyed: true, paths: series("prices") },
    { name: "sales_volume", kind: "series", keyed: true, paths: series("sales_volume") },
    {
      name: "nft details",
      kind: "nft",
      keyed: true,
      paths: tokens.map((t) => `/foundational/v1beta2/nfts/${t}/details`),
    },
    {
      name: "nft raw_metadata",
      kind: "nft",
      keyed: true,
      paths: tokens.map((t) => `/foundational/v1beta2/nfts/${t}/raw_metadata`),
    },
    ...holdingOperations(holdings, shuffled),
  ];
  return { operations, deepLists, notes };
}
