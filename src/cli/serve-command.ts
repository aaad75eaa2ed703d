import { join } from "node:path";
import type { Command } from "commander";
import {
  type ApiConfigInput,
  type ApiPoolConfigInput,
  parseApiConfig,
  parseApiPoolConfig,
} from "../config/api-config.ts";
import { type BlobStoreConfigInput, parseBlobStoreConfig } from "../config/blob-store-config.ts";
import { ConfigError, parseDatabaseConfig } from "../config/config.ts";
import { checkChainNames } from "../config/database-urls.ts";
import type { Environment } from "../config/environment.ts";
import { type PoolerConfigInput, parseDatabasePooler } from "../config/pooler-config.ts";
import { UserFacingError } from "../core/errors.ts";
import { createLogger } from "../core/logger.ts";
import type { Sql } from "../store/pg/database.ts";
import { addApiOptions, serveApi } from "./api-runner.ts";
import { type ChainDatabases, openChainDatabases } from "./chain-databases.ts";
import { openBlobStore } from "./open-blob-store.ts";
import { apiPool, type OpenDatabase } from "./open-database.ts";
import { collect } from "./repeatable.ts";
import { type Lifecycle, untilStopped } from "./shutdown.ts";

interface ServeFlags extends ApiConfigInput, ApiPoolConfigInput, BlobStoreConfigInput, PoolerConfigInput {
  chain?: string[];
  chainId?: string[];
  databaseUrl?: string[];
  dataDir?: string;
  logLevel?: string;
}

/** `mintlens serve`: the API over an existing store, for the chains indexed into it. */
export function registerServeCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  addApiOptions(
    program
      .command("serve")
      .description(
        "serve the API over an existing store: every chain indexed into it, or those named by --chain",
      ),
  )
    .option(
      "--chain <name>",
      "a chain to serve, by the name it was indexed under; repeatable (default: all)",
      collect,
    )
    .option("--chain-id <chain=id>", "the chain id of a chain not yet in the store", collect)
    .option(
      "--database-url <[chain=]url>",
      "PostgreSQL 15+ URL, a replica's as well as a primary's: url for the default database (API keys, every chain not named), chain=url for a chain's own; repeatable (env DATABASE_URL); default: the embedded PostgreSQL",
      collect,
    )
    .option(
      "--database-pooler <mode>",
      "none, or transaction when --database-url leads through a transaction pooler such as PgBouncer (env MINTLENS_DATABASE_POOLER, default none)",
    )
    .option(
      "--data-dir <dir>",
      "data directory of the embedded PostgreSQL and the generated certificate (default .mintlens)",
    )
    .option("--log-level <level>", "fatal, error, warn, info, debug or trace (env MINTLENS_LOG_LEVEL)")
    .action(async (flags: ServeFlags) => {
      const database = parseDatabaseConfig(flags, environment.variables);
      const blobConfig = parseBlobStoreConfig(flags, environment.variables, join(database.dataDir, "blobs"));
      const pool = parseApiPoolConfig(flags, environment.variables);
      const pooler = parseDatabasePooler(flags, environment.variables);
      const logger = createLogger(database.logLevel);
      const blobs = await openBlobStore(blobConfig, logger, lifecycle);
      // Reads only, so that a read-only role on a replica serves: `mintlens migrate` is run beforehand.
      const ownDatabases = Object.keys(database.chainDatabaseUrls);
      const databases = await openChainDatabases(database, ownDatabases, logger, lifecycle, {
        schema: "check",
        pool: apiPool(pool),
        pooler,
        withDefault: true,
      });
      if (lifecycle.signal.aborted) return;
      const chains = await servedChains(databases, ownDatabases, flags);
      const api = parseApiConfig(
        flags,
        environment.variables,
        chains.map((c) => c.name),
      );
      await serveApi({
        sql: (databases.default as OpenDatabase).sql,
        chains,
        api,
        dataDir: database.dataDir,
        logger,
        lifecycle,
        blobs,
        say: (line) => environment.stderr.write(`${line}\n`),
      });
      await untilStopped(lifecycle);
    });
}

/**
 * The chains to serve: those named (by their stored name, or with an explicit id), else every
 * chain stored in the default database and each chain given a database of its own; each with the
 * pool of its own database, if it has one.
 */
async function servedChains(
  databases: ChainDatabases,
  ownDatabases: readonly string[],
  flags: ServeFlags,
): Promise<{ name: string; chainId: number; sql: Sql | undefined }[]> {
  const storedIn = async (sql: Sql) =>
    sql<{ name: string; chain_id: string }[]>`SELECT name, chain_id::text FROM chains ORDER BY chain_id`;
  const inDefault = await storedIn((databases.default as OpenDatabase).sql);
  const own = new Map<string, { name: string; chain_id: string }[]>();
  for (const name of ownDatabases) own.set(name, await storedIn(databases.of(name).sql));
  const storedFor = (name: string) => own.get(name) ?? inDefault;
  const explicit = new Map<string, number>();
  const problems: string[] = [];
  for (const value of flags.chainId ?? []) {
    const [name, id] = value.split("=");
    if (name === undefined || id === undefined || !/^\d{1,15}$/.test(id)) {
      problems.push(`chain id: ${value} is not chain=id`);
    } else {
      explicit.set(name, Number(id));
    }
  }
  const named = flags.chain?.map((c) => c.split("=")[0] as string) ?? [];
  if (named.length > 0)
    checkChainNames(
      { default: undefined, chains: Object.fromEntries(ownDatabases.map((name) => [name, name])) },
      named,
      "database url",
      problems,
      "served",
    );
  const names =
    named.length > 0
      ? named
      : [...inDefault.map((r) => r.name).filter((name) => !own.has(name)), ...ownDatabases];
  if (names.length === 0) {
    if (problems.length > 0) throw new ConfigError(problems);
    throw new UserFacingError(
      "the store has no chain yet: index one first (mintlens index or mintlens start), or name it with --chain and --chain-id",
    );
  }
  const chains = names.flatMap((name) => {
    const stored = storedFor(name);
    const chainId = explicit.get(name) ?? stored.find((r) => r.name === name)?.chain_id;
    if (chainId === undefined) {
      const where = own.has(name) ? `its database (--database-url ${name}=…)` : "the store";
      problems.push(
        `chain: ${name} is not in ${where} (stored: ${stored.map((r) => r.name).join(", ") || "none"}); give --chain-id ${name}=ID`,
      );
      return [];
    }
    return [{ name, chainId: Number(chainId), sql: own.has(name) ? databases.of(name).sql : undefined }];
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return chains;
}
