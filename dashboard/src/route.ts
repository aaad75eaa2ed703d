/**
 * The dashboard's pages, as URL hashes: every page has a link that can be shared (it holds no
 * key). Parsing and making links are pure, so the links on a page and the router agree.
 */

export const METRICS = [
  "METRIC_SALES_VOLUME",
  "METRIC_SALES_QUANTITY",
  "METRIC_MAX_PRICE",
  "METRIC_AVG_PRICE",
] as const;
export type Metric = (typeof METRICS)[number];

export const DURATIONS = [
  "DURATION_1_HOUR",
  "DURATION_1_DAY",
  "DURATION_7_DAYS",
  "DURATION_30_DAYS",
  "DURATION_365_DAYS",
] as const;
export type Duration = (typeof DURATIONS)[number];

export const PERIODS = [
  "GROUP_BY_PERIOD_15_MINUTES",
  "GROUP_BY_PERIOD_1_HOUR",
  "GROUP_BY_PERIOD_1_DAY",
] as const;
export type Period = (typeof PERIODS)[number];

const DURATION_MINUTES: Record<Duration, number> = {
  DURATION_1_HOUR: 60,
  DURATION_1_DAY: 1_440,
  DURATION_7_DAYS: 10_080,
  DURATION_30_DAYS: 43_200,
  DURATION_365_DAYS: 525_600,
};
const PERIOD_MINUTES: Record<Period, number> = {
  GROUP_BY_PERIOD_15_MINUTES: 15,
  GROUP_BY_PERIOD_1_HOUR: 60,
  GROUP_BY_PERIOD_1_DAY: 1_440,
};
/** The most points a series may have: the API refuses more. */
const MAX_POINTS = 10_000;

/** The periods the API accepts for a duration: no longer than it, and at most 10,000 points. */
export function periodsFor(duration: Duration): Period[] {
  const minutes = DURATION_MINUTES[duration];
  return PERIODS.filter((p) => PERIOD_MINUTES[p] <= minutes && minutes / PERIOD_MINUTES[p] <= MAX_POINTS);
}

/** The period shown first for a duration: the one that gives a readable number of points. */
export function defaultPeriod(duration: Duration): Period {
  if (duration === "DURATION_1_HOUR") return "GROUP_BY_PERIOD_15_MINUTES";
  if (duration === "DURATION_1_DAY") return "GROUP_BY_PERIOD_1_HOUR";
  return "GROUP_BY_PERIOD_1_DAY";
}

export type Route =
  | { page: "top"; metric: Metric; duration: Duration }
  | { page: "collection"; address: string; duration: Duration; period: Period }
  | { page: "nft"; address: string; tokenId: string }
  | { page: "wallet"; address: string; includeSpam: boolean }
  | { page: "unknown"; hash: string };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOKEN_ID = /^\d{1,78}$/;

function oneOf<T extends string>(values: readonly T[], value: string | null, fallback: T): T {
  return (values as readonly string[]).includes(value ?? "") ? (value as T) : fallback;
}

/** The page a URL hash names; an unknown one is a page of its own, which says so. */
export function parseRoute(hash: string): Route {
  const [path = "", query = ""] = hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter((p) => p !== "");
  const [page, a, b] = parts;
  if (page === undefined) {
    return {
      page: "top",
      metric: oneOf(METRICS, params.get("metric"), "METRIC_SALES_VOLUME"),
      duration: oneOf(DURATIONS, params.get("duration"), "DURATION_7_DAYS"),
    };
  }
  if (page === "collection" && a !== undefined && ADDRESS.test(a) && parts.length === 2) {
    const duration = oneOf(DURATIONS, params.get("duration"), "DURATION_7_DAYS");
    const period = oneOf(periodsFor(duration), params.get("period"), defaultPeriod(duration));
    return { page: "collection", address: a.toLowerCase(), duration, period };
  }
  if (page === "nft" && a !== undefined && b !== undefined && ADDRESS.test(a) && TOKEN_ID.test(b)) {
    return { page: "nft", address: a.toLowerCase(), tokenId: b.replace(/^0+(?=\d)/, "") };
  }
  if (page === "wallet" && a !== undefined && ADDRESS.test(a) && parts.length === 2) {
    return { page: "wallet", address: a.toLowerCase(), includeSpam: params.get("spam") === "1" };
  }
  return { page: "unknown", hash };
}

/** The hash of a page. */
export function routeHash(route: Route): string {
  switch (route.page) {
    case "top":
      return `#/?metric=${route.metric}&duration=${route.duration}`;
    case "collection":
      return `#/collection/${route.address}?duration=${route.duration}&period=${route.period}`;
    case "nft":
      return `#/nft/${route.address}/${route.tokenId}`;
    case "wallet":
      return `#/wallet/${route.address}${route.includeSpam ? "?spam=1" : ""}`;
    case "unknown":
      return route.hash;
  }
}

export const collectionHash = (address: string) => `#/collection/${address.toLowerCase()}`;
export const nftHash = (address: string, tokenId: string) => `#/nft/${address.toLowerCase()}/${tokenId}`;
export const walletHash = (address: string) => `#/wallet/${address.toLowerCase()}`;

/** What a search box entry asks for: an address (a collection or a wallet) or one token. */
export type SearchTarget =
  | { kind: "address"; address: string }
  | { kind: "nft"; address: string; tokenId: string }
  | { kind: "invalid" };

/** `0x…` is an address; `0x… 123`, `0x…/123` and `0x…#123` are a token of a collection. */
export function parseSearch(text: string): SearchTarget {
  const match = /^\s*(0x[0-9a-fA-F]{40})(?:\s*[\s/#:]\s*(\d{1,78}))?\s*$/.exec(text);
  if (!match?.[1]) return { kind: "invalid" };
  const address = match[1].toLowerCase();
  if (match[2] !== undefined) return { kind: "nft", address, tokenId: match[2].replace(/^0+(?=\d)/, "") };
  return { kind: "address", address };
}
