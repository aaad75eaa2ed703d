import { join, resolve } from "node:path";
import type { Logger } from "../core/logger.ts";
import { connectDatabase, type Sql } from "../store/database.ts";
import { startEmbeddedPostgres } from "../store/embedded.ts";
import { migrate } from "../store/migrate.ts";

export interface OpenDatabase {
  sql: Sql;
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * Each chain's indexer holds a connection for its lock and one for the write under way, and
 * reads on a third while it prepares the next batch: with too few, writes would wait for
 * connections that locks never give back.
 */
export function poolSize(chains: number): number {
  return Math.max(20, 3 * chains + 8);
}

/** The configured PostgreSQL, or the embedded one in the data directory; migrated to the current schema. */
export async function openDatabase(
  databaseUrl: string | undefined,
  dataDir: string,
  logger: Logger,
  chains = 1,
): Promise<OpenDatabase> {
  let url = databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (url === undefined) {
    const dir = resolve(dataDir);
    logger.info({ dataDir: join(dir, "postgres") }, "starting the embedded PostgreSQL");
    const embedded = await startEmbeddedPostgres({ dataDir: dir, log: (m) => logger.info(m) });
    url = embedded.url;
    stopEmbedded = embedded.stop;
  }
  try {
    const sql = await connectDatabase(url, { max: poolSize(chains) });
    await migrate(url, (m) => logger.info(m));
    return {
      sql,
      url,
      embedded: stopEmbedded !== undefined,
      async close() {
        await sql.end({ timeout: 5 });
        await stopEmbedded?.();
      },
    };
  } catch (error) {
    await stopEmbedded?.();
    throw error;
  }
}
