import { join, resolve } from "node:path";
import type { ApiPoolConfig } from "../config/api-config.ts";
import type { Config } from "../config/config.ts";
import type { Logger } from "../core/logger.ts";
import {
  connectDatabase,
  type DatabasePooler,
  openPoolLike,
  type PoolOptions,
  type Sql,
} from "../store/pg/database.ts";
import { startEmbeddedPostgres } from "../store/pg/embedded.ts";
import { migrate, requireCurrentSchema } from "../store/pg/migrate.ts";
import type { Lifecycle } from "./shutdown.ts";

export interface OpenDatabase {
  /** The command's own pool, opened with the options it asked for. */
  sql: Sql;
  url: string;
  embedded: boolean;
}

/**
 * What a command does with the schema:
 * - `migrate`: apply the migrations not applied yet (`mintlens migrate`);
 * - `migrate-embedded`: the same on an embedded PostgreSQL this command runs, so that one command
 *   on a laptop stays one command; a database given by URL is only checked;
 * - `check`: refuse to start unless the schema is this version's, reading only (the API can run
 *   with a read-only role, on a replica).
 */
export type SchemaPolicy = "migrate" | "migrate-embedded" | "check";

/**
 * The configured PostgreSQL, or the embedded one in the data directory, with its schema checked
 * or migrated as `schema` says. The connections, and the embedded server when this process
 * started it, are released by `lifecycle` when the command ends.
 */
export async function openDatabase(
  databaseUrl: string | undefined,
  dataDir: string,
  logger: Logger,
  lifecycle: Lifecycle,
  options: { schema: SchemaPolicy; pool: PoolOptions; pooler?: DatabasePooler },
): Promise<OpenDatabase> {
  let url = databaseUrl;
  if (url === undefined) {
    const dir = resolve(dataDir);
    logger.info({ dataDir: join(dir, "postgres") }, "starting the embedded PostgreSQL");
    const embedded = await startEmbeddedPostgres({ dataDir: dir, log: (m) => logger.info(m) });
    lifecycle.defer(async () => {
      await embedded.stop();
      if (embedded.pid !== undefined) logger.info("stopped the embedded PostgreSQL");
    });
    url = embedded.url;
  }
  const sql = await connectDatabase(url, { ...options.pool, pooler: options.pooler ?? "none" });
  lifecycle.defer(() => sql.end({ timeout: 5 }));
  const embedded = databaseUrl === undefined;
  if (options.schema === "migrate" || (options.schema === "migrate-embedded" && embedded)) {
    await migrate(url, (m) => logger.info(m));
  } else {
    await requireCurrentSchema(sql);
  }
  return { sql, url, embedded };
}

/** Another pool to the same database, for one part of the command, released by `lifecycle`. */
export function openPool(database: OpenDatabase, lifecycle: Lifecycle, options: PoolOptions): Sql {
  const sql = openPoolLike(database.sql, options);
  lifecycle.defer(() => sql.end({ timeout: 5 }));
  return sql;
}

/** The small pool of a command that runs a few statements (keys, refresh, migrate). */
export const COMMAND_POOL: PoolOptions = { max: 2, applicationName: "mintlens" };

/** The pool the indexers read through (--indexer-pool-size); each chain writes through a connection of its own. */
export function indexerPool(config: Config): PoolOptions {
  return { max: config.indexerPoolSize, applicationName: "mintlens-indexer" };
}

/** The API's pool (--api-pool-size), whose queries the server cancels after --statement-timeout. */
export function apiPool(config: ApiPoolConfig): PoolOptions {
  return {
    max: config.poolSize,
    statementTimeoutMs: config.statementTimeoutMs,
    applicationName: "mintlens-api",
  };
}
