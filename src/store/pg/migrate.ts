import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import pg from "pg";
import { errorMessage, UserFacingError } from "../../core/errors.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("../../../migrations", import.meta.url));

/** Attempts when the server drops the connection (a failover, a restart): about 15 s in all. */
const ATTEMPTS = 5;

/**
 * Applies the versioned SQL migrations that are not applied yet. node-pg-migrate holds an
 * advisory lock meanwhile, so several processes starting at once apply each migration once.
 * Each migration runs in its own transaction, so one cut short by a lost connection is applied
 * again in full by the next attempt.
 */
export async function migrate(databaseUrl: string, log: (message: string) => void = () => {}): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrateOnce(databaseUrl, log);
      return;
    } catch (error) {
      if (attempt >= ATTEMPTS || !connectionWasLost(error)) {
        throw new UserFacingError(`database migration failed: ${errorMessage(error)}`);
      }
      log(`database migration: the connection was lost (${errorMessage(error)}), trying again`);
      await sleep(500 * 2 ** attempt);
    }
  }
}

async function migrateOnce(databaseUrl: string, log: (message: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // Without a listener, a connection the server ends between two queries is an 'error' event
  // that ends the process; the query under way is rejected anyway.
  client.on("error", () => {});
  await client.connect();
  try {
    const applied = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: "up",
      migrationsTable: "schema_migrations",
      count: Number.POSITIVE_INFINITY,
      checkOrder: true,
      log: () => {},
      logger: { debug: () => {}, info: () => {}, warn: (m: string) => log(m), error: (m: string) => log(m) },
    });
    for (const migration of applied) log(`applied migration ${migration.name}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Connection-level failures of node-postgres: the socket closed or failed, or the server ended the session. */
function connectionWasLost(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string" && /^(08...|57P0[1-3]|E[A-Z]+)$/.test(code)) return true;
  return typeof message === "string" && /Connection terminated|not queryable/.test(message);
}
