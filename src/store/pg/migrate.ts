import { readdir } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import pg from "pg";
import { errorMessage, UserFacingError } from "../../core/errors.ts";
import type { Queryable } from "./database.ts";

const MIGRATIONS_DIR = fileURLToPath(new URL("../../../migrations", import.meta.url));
const MIGRATIONS_TABLE = "schema_migrations";

/** Attempts when the server drops the connection (a failover, a restart): about 15 s in all. */
const ATTEMPTS = 5;

/**
 * Applies the versioned migrations that are not applied yet: SQL files, and TypeScript files for
 * migrations that must run outside a transaction (concurrent index builds). node-pg-migrate holds
 * an advisory lock meanwhile, so several processes starting at once apply each migration once.
 * Each SQL migration runs in its own transaction, so one cut short by a lost connection is applied
 * again in full by the next attempt; a migration outside a transaction is written to be run again
 * from wherever it stopped. `count` stops after that many migrations in all (a store left at an
 * older version, for tests of the next migration).
 */
export async function migrate(
  databaseUrl: string,
  log: (message: string) => void = () => {},
  options: { count?: number } = {},
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrateOnce(databaseUrl, log, options.count);
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

async function migrateOnce(
  databaseUrl: string,
  log: (message: string) => void,
  count?: number,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // Without a listener, a connection the server ends between two queries is an 'error' event
  // that ends the process; the query under way is rejected anyway.
  client.on("error", () => {});
  await client.connect();
  try {
    // An index built on a table of a billion rows takes as long as it takes: a timeout set for
    // the role (as one may be for the API's) must not cut it short.
    await client.query("SET statement_timeout = 0");
    const applied = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: "up",
      migrationsTable: MIGRATIONS_TABLE,
      count: count ?? Number.POSITIVE_INFINITY,
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

/** The migrations this version of Mintlens has, in the order they apply (as node-pg-migrate sorts them). */
export async function knownMigrations(): Promise<string[]> {
  const files = await readdir(MIGRATIONS_DIR, { withFileTypes: true });
  return files
    .filter((f) => (f.isFile() || f.isSymbolicLink()) && /^\d+_.*\.(sql|ts)$/.test(f.name))
    .map((f) => f.name.replace(/\.(sql|ts)$/, ""))
    .sort(
      (a, b) =>
        Number(/^\d+/.exec(a)?.[0]) - Number(/^\d+/.exec(b)?.[0]) ||
        a.localeCompare(b, undefined, { numeric: true, ignorePunctuation: true }),
    );
}

export interface SchemaState {
  /** Migrations applied to the database. */
  applied: string[];
  /** Known here and not applied to the database: `mintlens migrate` applies them. */
  pending: string[];
  /** Applied to the database and unknown here: a newer Mintlens migrated it. */
  unknown: string[];
}

/** How the database's applied migrations compare with this version's. Reads only. */
export async function schemaState(sql: Queryable): Promise<SchemaState> {
  const known = await knownMigrations();
  const [table] = await sql<{ exists: boolean }[]>`
    SELECT to_regclass(${MIGRATIONS_TABLE}) IS NOT NULL AS exists`;
  const applied = table?.exists
    ? (await sql<{ name: string }[]>`SELECT name FROM ${sql(MIGRATIONS_TABLE)} ORDER BY run_on, id`).map(
        (r) => r.name,
      )
    : [];
  const done = new Set(applied);
  const here = new Set(known);
  return {
    applied,
    pending: known.filter((m) => !done.has(m)),
    unknown: applied.filter((m) => !here.has(m)),
  };
}

/**
 * Refuses a database whose schema is not this version's, with one line saying what to do: every
 * command but `mintlens migrate` (and those that start their own embedded server) only reads the
 * schema's version, so the API can run with a read-only role, on a read replica.
 */
export async function requireCurrentSchema(sql: Queryable): Promise<void> {
  const { applied, pending, unknown } = await schemaState(sql);
  if (unknown.length > 0) {
    throw new UserFacingError(
      `the database was migrated by a newer Mintlens (migration${plural(unknown)} ${unknown.join(", ")} unknown to this one): run that version, or a newer one`,
    );
  }
  if (applied.length === 0) {
    throw new UserFacingError(
      "the database has no Mintlens schema yet: run `mintlens migrate` with the same database first",
    );
  }
  if (pending.length > 0) {
    throw new UserFacingError(
      `the database schema is older than this Mintlens (migration${plural(pending)} ${pending.join(", ")} not applied): run \`mintlens migrate\` with the same database first`,
    );
  }
}

const plural = (list: readonly string[]) => (list.length === 1 ? "" : "s");
