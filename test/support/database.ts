import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { connectDatabase, type Sql } from "../../src/store/pg/database.ts";
import { startEmbeddedPostgres } from "../../src/store/pg/embedded.ts";
import { migrate } from "../../src/store/pg/migrate.ts";

export interface TestDatabase {
  url: string;
  sql: Sql;
  /** Drops the database and stops a server started for it. */
  close(): Promise<void>;
}

interface Server {
  url: string;
  stop(): Promise<void>;
}

let server: Promise<Server> | undefined;

/**
 * A PostgreSQL server for the test process: the one named by MINTLENS_TEST_DATABASE_URL
 * (CI runs the suite against Debian's PostgreSQL this way), else an embedded one in a
 * temporary directory.
 */
function testServer(): Promise<Server> {
  server ??= (async () => {
    const external = process.env.MINTLENS_TEST_DATABASE_URL;
    if (external) return { url: external, stop: async () => {} };
    const dir = mkdtempSync(join(tmpdir(), "mintlens-test-pg-"));
    const embedded = await startEmbeddedPostgres({ dataDir: dir });
    return {
      url: embedded.url,
      stop: async () => {
        await embedded.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  })();
  return server;
}

/**
 * A fresh database of its own, migrated to the current schema, or by the first `migrations` only
 * (0 for none): a store of an older version, to test the next migration on.
 */
export async function createTestDatabase(options: { migrations?: number } = {}): Promise<TestDatabase> {
  const { url: serverUrl } = await testServer();
  const name = `mintlens_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  if (options.migrations !== 0) await migrate(url.toString(), () => {}, { count: options.migrations });
  const sql = await connectDatabase(url.toString());
  return {
    url: url.toString(),
    sql,
    async close() {
      await sql.end({ timeout: 5 });
      const cleanup = postgres(serverUrl, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

/** Stops the embedded server, if this process started one. Call once, after the file's tests. */
export async function stopTestServer(): Promise<void> {
  if (!server) return;
  const s = await server;
  server = undefined;
  await s.stop();
}
