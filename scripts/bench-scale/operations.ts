/**
 * The requests of each operation the scale benchmark measures, one operation per question whose
 * cost could grow with the store: each ranking metric on its shortest and longest window, each
 * series on 1 day by 15 minutes and 365 days by 1 day, the contracts list plain and filtered by
 * type, the largest collection's owners, and first pages against the 1000th. Series end at the
 * start of the store's last day, so a store built days ago is asked about its own last day.
 */
import type { Address } from "../../src/core/hex.ts";
import { Prng } from "../../src/demo/prng.ts";
import { type Queryable, toHex } from "../../src/store/pg/database.ts";
import type { Operation } from "../bench-api/operations.ts";

const POPULAR = 100;
const TOKENS = 1000;
const CONTRACT_PAGES = 50;
const DEEP_PAGE = 1000;
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

/** A deep page and the first page of the same list and size, compared with each other. */
export interface DeepPair {
  first: string;
  deep: string;
}

/** A list whose 1000th page is measured: `base` ends with `?` or `&`. */
export interface DeepList {
  label: string;
  base: string;
  size: number;
}

export interface ScaleOperations {
  operations: Operation[];
  deepLists: DeepList[];
  /** Filled once the deep pages are found on the running server. */
  pairs: DeepPair[];
  /** What the operations were drawn from, for the report. */
  facts: { largest: Address; holders: number; contracts: number; endDay: string; notes: string[] };
}

export async function scaleOperationsFor(
  sql: Queryable,
  chainId: number,
  seed: string,
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

  // The 1000th page against the first, at the largest page size that still has 1000 pages.
  const deepLists: DeepList[] = [];
  const deep = (label: string, base: string, rows: number) => {
    const size = Math.min(20, Math.floor(rows / DEEP_PAGE));
    if (size < 1)
      notes.push(`${label}: ${rows.toLocaleString("en")} rows hold no ${DEEP_PAGE}th page; not measured`);
    else deepLists.push({ label, base, size });
  };
  deep("contracts", contractsBase, contracts);
  deep("owners of the largest", ownersBase, holders);
  return { operations, deepLists, pairs: [], facts: { largest, holders, contracts, endDay, notes } };
}

/**
 * The first and the 1000th page of each list, as operations: the 1000th reached by following
 * `nextPageToken` from the first where the API gives one, by offset where it does not.
 */
export async function deepPageOperations(
  url: string,
  apiKey: string,
  lists: readonly DeepList[],
): Promise<{ operations: Operation[]; pairs: DeepPair[]; notes: string[] }> {
  const operations: Operation[] = [];
  const pairs: DeepPair[] = [];
  const notes: string[] = [];
  const get = async (path: string): Promise<{ nextPageToken?: string }> => {
    const response = await fetch(`${url}${path}`, { headers: { "x-api-key": apiKey } });
    if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { nextPageToken?: string };
  };
  for (const { label, base, size } of lists) {
    const firstPath = `${base}limit=${size}`;
    let token = (await get(firstPath)).nextPageToken;
    let deepPath: string;
    if (token === undefined) {
      deepPath = `${base}limit=${size}&offset=${(DEEP_PAGE - 1) * size}`;
      notes.push(`${label}: no nextPageToken; page ${DEEP_PAGE} asked for by offset`);
    } else {
      for (let page = 2; page < DEEP_PAGE && token !== undefined; page++) {
        token = (await get(`${base}limit=${size}&pageToken=${encodeURIComponent(token)}`)).nextPageToken;
      }
      if (token === undefined) throw new Error(`${label}: the pages ended before page ${DEEP_PAGE}`);
      deepPath = `${base}limit=${size}&pageToken=${encodeURIComponent(token)}`;
      notes.push(`${label}: page ${DEEP_PAGE} reached by following nextPageToken`);
    }
    const first = `${label} page 1 (${size} a page)`;
    const deep = `${label} page ${DEEP_PAGE} (${size} a page)`;
    operations.push({ name: first, kind: "list", keyed: true, paths: [firstPath] });
    operations.push({ name: deep, kind: "list", keyed: true, paths: [deepPath] });
    pairs.push({ first, deep });
  }
  return { operations, pairs, notes };
}
