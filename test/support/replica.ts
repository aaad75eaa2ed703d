/**
 * A PostgreSQL 15 primary and a streaming standby of it, on loopback ports in a temporary
 * directory: what `mintlens serve` on a read replica is tested against. Debian's binaries
 * (/usr/lib/postgresql/15/bin, or MINTLENS_PG_BIN) are run as the `postgres` user when the test
 * runs as root, since PostgreSQL refuses to run as root; each server is stopped by its PID.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

export const PG_BIN = process.env.MINTLENS_PG_BIN ?? "/usr/lib/postgresql/15/bin";
const BINARIES = ["initdb", "pg_ctl", "pg_basebackup", "postgres"];

/** Why the cluster cannot run here, or undefined when it can. */
export function replicaClusterUnavailable(): string | undefined {
  const missing = BINARIES.filter((name) => !existsSync(join(PG_BIN, name)));
  if (missing.length > 0) {
    return `PostgreSQL 15's ${missing.join(", ")} not found in ${PG_BIN} (install postgresql-15, or set MINTLENS_PG_BIN)`;
  }
  if (process.getuid?.() === 0 && spawnSync("id", ["-u", "postgres"]).status !== 0) {
    return "running as root, and there is no postgres user to run PostgreSQL as";
  }
  return undefined;
}

export interface ReplicaCluster {
  /** A superuser URL of `database` on the primary. */
  primaryUrl(database: string): string;
  /** A URL of `database` on the standby, as `user` (default the superuser). */
  standbyUrl(database: string, user?: string): string;
  /** Stops replaying the primary's WAL on the standby: it keeps answering the state it has. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Stops both servers by PID and removes the directory. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs one of PostgreSQL's programs, as the postgres user under root, in `cwd` (which it can read). */
function pg(cwd: string, program: string, args: string[]): void {
  const path = join(PG_BIN, program);
  const [command, argv] =
    process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", path, ...args]] : [path, args];
  execFileSync(command, argv, { cwd, stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

function pidOf(dataDir: string): number | undefined {
  const file = join(dataDir, "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Fast shutdown by PID (SIGINT), then SIGKILL after 10 s. */
async function stopServer(dataDir: string): Promise<void> {
  const pid = pidOf(dataDir);
  if (pid === undefined || !alive(pid)) return;
  process.kill(pid, "SIGINT");
  const deadline = Date.now() + 10_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) process.kill(pid, "SIGKILL");
}

/**
 * Starts a primary (wal_level replica, WAL senders) and a standby made of it by `pg_basebackup -R`,
 * streaming from it with hot standby on. Both trust local connections: a test cluster on loopback.
 */
export async function startReplicaCluster(): Promise<ReplicaCluster> {
  const dir = mkdtempSync(join(tmpdir(), "mintlens-replica-"));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const primaryDir = join(dir, "primary");
  const standbyDir = join(dir, "standby");
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const serverOptions = (port: number) =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=100",
      "-c wal_level=replica",
      "-c max_wal_senders=4",
      "-c hot_standby=on",
      // A standby query that would need rows replay removes is let run rather than cancelled.
      "-c max_standby_streaming_delay=-1",
    ].join(" ");
  const stop = async () => {
    await stopServer(standbyDir);
    await stopServer(primaryDir);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    pg(dir, "initdb", ["-D", primaryDir, "-A", "trust", "-U", "postgres", "--no-sync"]);
    pg(dir, "pg_ctl", [
      "-D",
      primaryDir,
      "-l",
      join(dir, "primary.log"),
      "-w",
      "-o",
      serverOptions(primaryPort),
      "start",
    ]);
    pg(dir, "pg_basebackup", [
      "-h",
      "127.0.0.1",
      "-p",
      String(primaryPort),
      "-U",
      "postgres",
      "-D",
      standbyDir,
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
      "--no-sync",
    ]);
    pg(dir, "pg_ctl", [
      "-D",
      standbyDir,
      "-l",
      join(dir, "standby.log"),
      "-w",
      "-o",
      serverOptions(standbyPort),
      "start",
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  const url = (port: number, database: string, user = "postgres") =>
    `postgres://${user}@127.0.0.1:${port}/${database}`;
  const onStandby = async (statement: string) => {
    const sql = postgres(url(standbyPort, "postgres"), { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(statement);
    } finally {
      await sql.end();
    }
  };
  return {
    primaryUrl: (database) => url(primaryPort, database),
    standbyUrl: (database, user) => url(standbyPort, database, user),
    pauseReplay: () => onStandby("SELECT pg_wal_replay_pause()"),
    resumeReplay: () => onStandby("SELECT pg_wal_replay_resume()"),
    stop,
  };
}
