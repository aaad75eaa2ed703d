import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import { errorMessage, UserFacingError } from "../core/errors.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations", import.meta.url));

/**
 * Applies the versioned SQL migrations that are not applied yet. node-pg-migrate holds an
 * advisory lock meanwhile, so several processes starting at once apply each migration once.
 */
export async function migrate(databaseUrl: string, log: (message: string) => void = () => {}): Promise<void> {
  try {
    const applied = await runner({
      databaseUrl,
      dir: MIGRATIONS_DIR,
      direction: "up",
      migrationsTable: "schema_migrations",
      count: Number.POSITIVE_INFINITY,
      checkOrder: true,
      log: () => {},
      logger: { debug: () => {}, info: () => {}, warn: (m: string) => log(m), error: (m: string) => log(m) },
    });
    for (const migration of applied) log(`applied migration ${migration.name}`);
  } catch (error) {
    throw new UserFacingError(`database migration failed: ${errorMessage(error)}`);
  }
}
