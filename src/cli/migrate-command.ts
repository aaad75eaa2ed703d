import type { Command } from "commander";
import { parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { parseDatabasePooler, requireDirectDatabase } from "../config/pooler-config.ts";
import { createLogger } from "../core/logger.ts";
import { COMMAND_POOL, openDatabase } from "./open-database.ts";
import type { Lifecycle } from "./shutdown.ts";

export function registerMigrateCommand(
  program: Command,
  lifecycle: Lifecycle,
  environment: Environment,
): void {
  program
    .command("migrate")
    .description("apply the database migrations and exit")
    .option("--database-url <url>", "PostgreSQL 15+ URL (env DATABASE_URL); default: the embedded PostgreSQL")
    .option("--data-dir <dir>", "data directory of the embedded PostgreSQL (default .mintlens)")
    .action(async (flags: { databaseUrl?: string; dataDir?: string }) => {
      requireDirectDatabase("mintlens migrate", parseDatabasePooler({}, environment.variables));
      const config = parseDatabaseConfig(flags, environment.variables);
      const logger = createLogger(config.logLevel);
      await openDatabase(config.databaseUrl, config.dataDir, logger, lifecycle, {
        schema: "migrate",
        pool: COMMAND_POOL,
      });
    });
}
