import type { DatabaseConfig } from "../config/config.ts";
import { type DatabaseUrls, databaseUrlOf, readUrlOf } from "../config/database-urls.ts";
import type { Logger } from "../core/logger.ts";
import { redactUrl } from "../core/url.ts";
import type { PoolOptions, Sql } from "../store/pg/database.ts";
import { type OpenDatabase, openDatabase, openPool } from "./open-database.ts";
import type { Lifecycle } from "./shutdown.ts";

/** How each database is opened: as `openDatabase` opens one. */
type OpenOptions = Parameters<typeof openDatabase>[4];

/** The databases a command opened, each once, and which chains' data each holds. */
export interface ChainDatabases {
  /** The default database (API keys, and every chain not given one of its own), when it was opened. */
  default: OpenDatabase | undefined;
  /** Each database opened, with the chains whose data it holds (none for a default opened for its keys alone). */
  groups: readonly { database: OpenDatabase; chains: readonly string[] }[];
  /** The database holding `chain`'s data. */
  of(chain: string): OpenDatabase;
}

/** The URLs a database configuration names, as the pure rules read them. */
export function urlsOf(config: DatabaseConfig): DatabaseUrls {
  return { default: config.databaseUrl, chains: config.chainDatabaseUrls };
}

/**
 * Opens the database of each of `chains`, once per distinct URL (two chains named to one URL
 * share its pool), with its schema checked or migrated as `schema` says. The default database is
 * opened when a chain's data is in it, or when `withDefault` asks for it (the API reads its keys
 * there); it is the embedded PostgreSQL when no URL names it.
 */
export async function openChainDatabases(
  config: DatabaseConfig,
  chains: readonly string[],
  logger: Logger,
  lifecycle: Lifecycle,
  options: OpenOptions & { withDefault: boolean },
): Promise<ChainDatabases> {
  const urls = urlsOf(config);
  // `undefined` stands for the default database, whatever its URL.
  const keyOf = (url: string | undefined) => (url === undefined || url === urls.default ? undefined : url);
  const order: (string | undefined)[] = [];
  const members = new Map<string | undefined, string[]>();
  if (options.withDefault) {
    order.push(undefined);
    members.set(undefined, []);
  }
  for (const chain of chains) {
    const key = keyOf(databaseUrlOf(urls, chain));
    if (!members.has(key)) {
      order.push(key);
      members.set(key, []);
    }
    members.get(key)?.push(chain);
  }
  const groups: { database: OpenDatabase; chains: readonly string[] }[] = [];
  let defaultDatabase: OpenDatabase | undefined;
  for (const key of order) {
    const url = key ?? urls.default;
    if (url !== undefined)
      logger.info({ database: redactUrl(url), chains: members.get(key) }, "opening a database");
    const { withDefault: _, ...open } = options;
    const database = await openDatabase(url, config.dataDir, logger, lifecycle, open);
    groups.push({ database, chains: members.get(key) ?? [] });
    if (key === undefined) defaultDatabase = database;
    if (lifecycle.signal.aborted) break;
  }
  const byChain = new Map<string, OpenDatabase>();
  for (const group of groups) for (const chain of group.chains) byChain.set(chain, group.database);
  return {
    default: defaultDatabase,
    groups,
    of(chain) {
      const database = byChain.get(chain);
      if (database === undefined) throw new Error(`no database opened for ${chain}`);
      return database;
    },
  };
}

/** The pool of each chain's database, for the parts that take one per chain. */
export function chainPools(databases: ChainDatabases, chains: readonly string[]): Map<string, Sql> {
  return new Map(chains.map((chain) => [chain, databases.of(chain).sql]));
}

/** The API's pools: the default one (API keys) and each chain's, on its replica where one is named. */
export interface ApiPools {
  sql: Sql;
  chainSql: ReadonlyMap<string, Sql>;
}

/**
 * The API's pools of a process that also writes: a pool apart from the writers' on each database
 * opened, or on the replica `read` names for it (`--read-database-url`), whose schema is checked
 * (reading only) as `mintlens serve` does. Two chains read from one URL share one pool.
 */
export async function openApiPools(
  databases: ChainDatabases,
  written: DatabaseUrls,
  read: DatabaseUrls,
  chains: readonly string[],
  logger: Logger,
  lifecycle: Lifecycle,
  pool: PoolOptions,
): Promise<ApiPools> {
  const byUrl = new Map<string, Sql>();
  const onReplica = async (url: string) => {
    let sql = byUrl.get(url);
    if (sql === undefined) {
      logger.info({ database: redactUrl(url) }, "the API reads from a replica");
      sql = (await openDatabase(url, ".", logger, lifecycle, { schema: "check", pool })).sql;
      byUrl.set(url, sql);
    }
    return sql;
  };
  const pools = new Map<OpenDatabase, Sql>();
  const onPrimary = (database: OpenDatabase) => {
    let sql = pools.get(database);
    if (sql === undefined) {
      sql = openPool(database, lifecycle, pool);
      pools.set(database, sql);
    }
    return sql;
  };
  const defaultDatabase = databases.default;
  if (defaultDatabase === undefined) throw new Error("the API needs the default database opened");
  const sql = read.default !== undefined ? await onReplica(read.default) : onPrimary(defaultDatabase);
  const chainSql = new Map<string, Sql>();
  for (const chain of chains) {
    const replica = readUrlOf(read, written, chain);
    const primary = databaseUrlOf(written, chain);
    chainSql.set(
      chain,
      replica !== undefined && replica !== primary
        ? await onReplica(replica)
        : onPrimary(databases.of(chain)),
    );
  }
  return { sql, chainSql };
}
