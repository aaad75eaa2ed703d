import { join, resolve } from "node:path";
import type { Logger } from "../core/logger.ts";
import { connectDatabase, type Sql } from "../store/pg/database.ts";
import { startEmbeddedPostgres } from "../store/pg/embedded.ts";
import { migrate } from "../store/pg/migrate.ts";
import type { Lifecycle } from "./shutdown.ts";

export interface OpenDatabase {
  sql: Sql;
  url: string;
  embedded: boolean;
}

/**
 * Each chain's indexer holds a connection for its lock and one for the write under way, and
 * reads on a third while it prepares the next batch: with too few, writes would wait for
 * connections that locks never give back.
 */
export function poolSize(chains: number): number {
  return Math.max(20, 3 * chains + 8);
}

/**
 * The configured PostgreSQL, or the embedded one in the data directory; migrated to the current
 * schema. The connections, and the embedded server when this process started it, are released
 * by `lifecycle` when the command ends.
 */
export async function openDatabase(
  databaseUrl: string | undefined,
  dataDir: string,
  logger: Logger,
  lifecycle: Lifecycle,
  chains = 1,
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
  const sql = await connectDatabase(url, { max: poolSize(chains) });
  lifecycle.defer(() => sql.end({ timeout: 5 }));
  await migrate(url, (m) => logger.info(m));
  return { sql, url, embedded: databaseUrl === undefined };
}
