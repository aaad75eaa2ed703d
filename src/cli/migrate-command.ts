import type { Command } from "commander";
import { parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { parseDatabasePooler, requireDirectDatabase } from "../config/pooler-config.ts";
import { createLogger } from "../core/logger.ts";
import { openChainDatabases } from "./chain-databases.ts";
import { COMMAND_POOL } from "./open-database.ts";
import { collect } from "./repeatable.ts";
import type { Lifecycle } from "./shutdown.ts";

/** `mintlens migrate`: every database configured, the default one and each chain's own, one after another. */
export function registerMigrateCommand(
  program: Command,
  lifecycle: Lifecycle,
  environment: Environment,
): void {
  program
    .command("migrate")
    .description("apply the database migrations to every configured database and exit")
    .option(
      "--database-url <[chain=]url>",
      "PostgreSQL 15+ URL: url for the default database, chain=url for a chain's own; repeatable (env DATABASE_URL); default: the embedded PostgreSQL",
      collect,
    )
    .option("--data-dir <dir>", "data directory of the embedded PostgreSQL (default .mintlens)")
    .action(async (flags: { databaseUrl?: string[]; dataDir?: string }) => {
      requireDirectDatabase("mintlens migrate", parseDatabasePooler({}, environment.variables));
      const config = parseDatabaseConfig(flags, environment.variables);
      const logger = createLogger(config.logLevel);
      const chains = Object.keys(config.chainDatabaseUrls);
      await openChainDatabases(config, chains, logger, lifecycle, {
        schema: "migrate",
        pool: COMMAND_POOL,
        // Only chains' own URLs given: the embedded PostgreSQL is not what the operator meant.
        withDefault: config.databaseUrl !== undefined || chains.length === 0,
      });
    });
}
