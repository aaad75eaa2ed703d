/**
 * PgBouncer in transaction pooling mode in front of a test PostgreSQL: a temporary directory, an
 * ini listening on a free loopback port, stopped by its PID. As root it runs as `nobody` (it
 * refuses to run as root).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";

export const PGBOUNCER_BINARY = process.env.MINTLENS_PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer";

/** Why the PgBouncer tests cannot run here, or undefined when they can. */
export function pgbouncerMissing(): string | undefined {
  return existsSync(PGBOUNCER_BINARY)
    ? undefined
    : `no PgBouncer at ${PGBOUNCER_BINARY} (apt-get install pgbouncer, or set MINTLENS_PGBOUNCER_BIN)`;
}

export interface RunningPgBouncer {
  /** `url` with its host and port replaced by PgBouncer's. */
  url: string;
  /** PgBouncer's admin console (`SHOW POOLS`, `SHOW SERVERS`…), simple queries only. */
  admin(command: string): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Server connections per database and user pair. */
  poolSize: number;
  /** Most client connections PgBouncer accepts. */
  maxClients?: number;
}

async function freePort(): Promise<number> {
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

/** Starts PgBouncer in front of the server of `url` (any of its databases), in transaction mode. */
export async function startPgBouncer(url: string, options: PgBouncerOptions): Promise<RunningPgBouncer> {
  const target = new URL(url);
  const user = decodeURIComponent(target.username || "postgres");
  const password = decodeURIComponent(target.password);
  const dir = mkdtempSync(join(tmpdir(), "mintlens-pgbouncer-"));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const quote = (s: string) => s.replace(/'/g, "''");
  // The server's login is given in the database line, so clients are trusted and need none.
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      // An empty quoted password makes PgBouncer drop the line, and then it knows no database.
      `* = host=${target.hostname} port=${target.port || 5432} user=${user}${password === "" ? "" : ` password='${quote(password)}'`}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      `admin_users = ${user}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize}`,
      "min_pool_size = 0",
      "reserve_pool_size = 0",
      `max_client_conn = ${options.maxClients ?? 200}`,
      "ignore_startup_parameters = extra_float_digits",
      "server_reset_query =",
      "log_connections = 0",
      "log_disconnections = 0",
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "users.txt"), `"${user}" ""\n`);
  const asRoot = userInfo().uid === 0;
  const child: ChildProcess = spawn(
    PGBOUNCER_BINARY,
    [...(asRoot ? ["-u", "nobody"] : []), join(dir, "pgbouncer.ini")],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const pooled = new URL(url);
  pooled.hostname = "127.0.0.1";
  pooled.port = String(port);
  const adminUrl = new URL(pooled);
  adminUrl.pathname = "/pgbouncer";
  const admin = async (command: string) => {
    const console = postgres(adminUrl.toString(), {
      max: 1,
      prepare: false,
      fetch_types: false,
      onnotice: () => {},
    });
    try {
      return [...(await console.unsafe(command).simple())] as Record<string, unknown>[];
    } finally {
      await console.end({ timeout: 1 });
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) {
      process.kill(child.pid, "SIGTERM");
      await Promise.race([exited, sleep(5_000)]);
      if (child.exitCode === null) process.kill(child.pid, "SIGKILL");
    }
    rmSync(dir, { recursive: true, force: true });
  };

  // Up once its admin console answers; bounded, and failing with what PgBouncer said.
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await admin("SHOW VERSION");
      return { url: pooled.toString(), admin, stop };
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`PgBouncer did not start: ${String(error)}\n${stderr}`);
      }
      await sleep(50);
    }
  }
}
