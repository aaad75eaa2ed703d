/**
 * Which database holds each chain's data, and which one the API reads it from. A bare URL is the
 * default database: API keys, and every chain not named; `chain=url` puts one chain's data in a
 * database of its own. Every rule here is pure: the commands open what it decides.
 */

const NAME_RE = /^[a-z][a-z0-9-]*$/;
const URL_RE = /^postgres(ql)?:\/\//;

/** Where each chain's data lives. */
export interface DatabaseUrls {
  /** A bare URL, else the environment's; unset: the embedded PostgreSQL. */
  default: string | undefined;
  /** Chain name → URL of the database of that chain alone. */
  chains: Readonly<Record<string, string>>;
}

/** A `[chain=]url` value: `chain` only when what precedes the first `=` is a chain name. */
export function splitChainUrl(value: string): { chain: string | undefined; url: string } {
  const eq = value.indexOf("=");
  const prefix = eq < 0 ? "" : value.slice(0, eq);
  // A URL's own `=` (in its query) comes after `postgres://`, whose colon no chain name has.
  if (eq > 0 && NAME_RE.test(prefix)) return { chain: prefix, url: value.slice(eq + 1) };
  return { chain: undefined, url: value };
}

/**
 * Parses repeated `[chain=]url` values of the flag `label` names; `fallback` (the environment's)
 * is the default database unless a bare value is given. Problems are added to `problems`, each
 * naming the flag.
 */
export function parseDatabaseUrls(
  values: string | readonly string[] | undefined,
  fallback: string | undefined,
  label: string,
  problems: string[],
): DatabaseUrls {
  const list = values === undefined ? [] : typeof values === "string" ? [values] : values;
  let bare: string | undefined;
  const chains: Record<string, string> = {};
  for (const value of list) {
    const { chain, url } = splitChainUrl(value);
    if (!URL_RE.test(url)) {
      problems.push(
        `${label}: ${chain === undefined ? "" : `${chain}: `}must be a postgres:// or postgresql:// URL`,
      );
      continue;
    }
    if (chain === undefined) {
      if (bare !== undefined)
        problems.push(`${label}: two URLs without a chain; give one, and chain=url for the others`);
      bare = url;
    } else {
      if (chains[chain] !== undefined) problems.push(`${label}: ${chain} is given two URLs`);
      chains[chain] = url;
    }
  }
  const fallbackUrl = fallback === "" ? undefined : fallback;
  if (bare === undefined && fallbackUrl !== undefined && !URL_RE.test(fallbackUrl)) {
    problems.push(`${label}: must be a postgres:// or postgresql:// URL`);
  }
  return { default: bare ?? fallbackUrl, chains };
}

/** Adds a problem for each chain given a database that is not among `known` (what this command indexes or serves). */
export function checkChainNames(
  urls: DatabaseUrls,
  known: readonly string[],
  label: string,
  problems: string[],
  what = "configured",
): void {
  for (const chain of Object.keys(urls.chains)) {
    if (!known.includes(chain)) {
      problems.push(
        `${label}: ${chain} is not a chain ${what} here (${known.length > 0 ? known.join(", ") : "none"})`,
      );
    }
  }
}

/** The URL of the database holding `chain`'s data; undefined: the embedded PostgreSQL. */
export function databaseUrlOf(urls: DatabaseUrls, chain: string): string | undefined {
  return urls.chains[chain] ?? urls.default;
}

/**
 * Checks the replicas the API reads from (`--read-database-url`) against the databases written
 * to: a replica is named for a chain indexed here, or bare for the default database, and never
 * for the embedded PostgreSQL, which has no replica.
 */
export function checkReadUrls(
  read: DatabaseUrls,
  written: DatabaseUrls,
  chains: readonly string[],
  label: string,
  problems: string[],
): void {
  checkChainNames(read, chains, label, problems, "indexed");
  if (read.default !== undefined && written.default === undefined) {
    problems.push(
      `${label}: the default database is the embedded PostgreSQL, which has no replica; give --database-url`,
    );
  }
  for (const chain of Object.keys(read.chains)) {
    if (chains.includes(chain) && databaseUrlOf(written, chain) === undefined) {
      problems.push(
        `${label}: ${chain}'s data is in the embedded PostgreSQL, which has no replica; give --database-url`,
      );
    }
  }
}

/** The URL the API reads `chain`'s data from: its replica, else the default's replica when the chain is in the default database, else where it is written. */
export function readUrlOf(read: DatabaseUrls, written: DatabaseUrls, chain: string): string | undefined {
  const own = read.chains[chain];
  if (own !== undefined) return own;
  if (written.chains[chain] === undefined && read.default !== undefined) return read.default;
  return databaseUrlOf(written, chain);
}
