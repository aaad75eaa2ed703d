import type { Command } from "commander";
import { createLogger } from "../core/logger.ts";
import { openDatabase } from "./open-database.ts";
import type { Lifecycle } from "./shutdown.ts";

export function registerMigrateCommand(program: Command, lifecycle: Lifecycle): void {
  program
    .command("migrate")
    .description("apply the database migrations and exit")
    .option("--database-url <url>", "PostgreSQL 15+ URL (env DATABASE_URL); default: the embedded PostgreSQL")
    .option("--data-dir <dir>", "data directory of the embedded PostgreSQL (default .mintlens)")
    .action(async (flags: { databaseUrl?: string; dataDir?: string }) => {
      const logger = createLogger(process.env.MINTLENS_LOG_LEVEL ?? "info");
      await openDatabase(
        flags.databaseUrl ?? process.env.DATABASE_URL,
        flags.dataDir ?? process.env.MINTLENS_DATA_DIR ?? ".mintlens",
        logger,
        lifecycle,
      );
    });
}
