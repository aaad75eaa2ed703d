import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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

const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations", import.meta.url));

/** Named by the migrations' contents: a changed or added migration makes a template of its own. */
function templateName(): string {
  const hash = createHash("sha256");
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(file).update(readFileSync(join(MIGRATIONS_DIR, file)));
  }
  return `mintlens_template_${hash.digest("hex").slice(0, 16)}`;
}

let template: Promise<string> | undefined;

/**
 * A database migrated to the current schema, made once per server and copied for each test
 * database: copying takes tens of milliseconds where migrating takes over a second. The files of a
 * run share one server, so the first to need it builds it under an advisory lock and the others
 * wait for it; it is built under another name and renamed when complete, so a run killed halfway
 * leaves nothing a later run would copy.
 */
function migratedTemplate(serverUrl: string): Promise<string> {
  template ??= (async () => {
    const name = templateName();
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    try {
      await admin`SELECT pg_advisory_lock(hashtext(${name}))`;
      const [found] = await admin`SELECT 1 FROM pg_database WHERE datname = ${name}`;
      if (found === undefined) {
        const building = `${name}_building`;
        await admin.unsafe(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await admin.unsafe(`CREATE DATABASE ${building}`);
        const url = new URL(serverUrl);
        url.pathname = `/${building}`;
        await migrate(url.toString(), () => {});
        await admin.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
      await admin`SELECT pg_advisory_unlock(hashtext(${name}))`;
      return name;
    } finally {
      await admin.end();
    }
  })();
  return template;
}

/**
 * A fresh database of its own, migrated to the current schema, or by the first `migrations` only
 * (0 for none): a store of an older version, to test the next migration on.
 */
export async function createTestDatabase(options: { migrations?: number } = {}): Promise<TestDatabase> {
  const { url: serverUrl } = await testServer();
  const name = `mintlens_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const current = options.migrations === undefined;
  const source = current ? await migratedTemplate(serverUrl) : undefined;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(source ? `CREATE DATABASE ${name} TEMPLATE ${source}` : `CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  if (!current && options.migrations !== 0) {
    await migrate(url.toString(), () => {}, { count: options.migrations });
  }
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
  template = undefined;
  await s.stop();
}
