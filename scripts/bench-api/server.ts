/**
 * The PostgreSQL server the benchmark loads its datasets into: an embedded one in a scratch
 * directory removed afterwards, or the server of `--database-url`. Each dataset gets a fresh
 * database of its own on it, dropped once measured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { startEmbeddedPostgres } from "../../src/store/pg/embedded.ts";

export interface BenchServer {
  /** The embedded server's postmaster, for its CPU; undefined for a server given by URL. */
  pid: number | undefined;
  /** A scratch directory for logs, removed by `stop`. */
  scratch: string;
  /** Creates an empty database (dropping one of that name) and gives its URL. */
  createDatabase(name: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function openBenchServer(databaseUrl: string | undefined): Promise<BenchServer> {
  const scratch = mkdtempSync(join(tmpdir(), "mintlens-bench-api-"));
  try {
    const embedded =
      databaseUrl === undefined ? await startEmbeddedPostgres({ dataDir: scratch }) : undefined;
    const serverUrl = embedded?.url ?? (databaseUrl as string);
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    const urlOf = (name: string) => {
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      return url.toString();
    };
    return {
      pid: embedded?.pid,
      scratch,
      async createDatabase(name) {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.unsafe(`CREATE DATABASE ${name}`);
        return urlOf(name);
      },
      async dropDatabase(name) {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
      async stop() {
        try {
          await admin.end({ timeout: 5 });
          await embedded?.stop();
        } finally {
          rmSync(scratch, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}
