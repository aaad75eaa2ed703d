import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { startAnvil } from "../../src/devchain/anvil.ts";
import { startEmbeddedPostgres } from "../../src/store/pg/embedded.ts";

/**
 * A supervisor (systemd, a container runtime) stops a service with `kill <pid>`: the signal
 * reaches the node process alone, not its children as a Ctrl+C at a terminal does. Every command
 * must then stop by itself, stop the children it started, and leave alone what it did not start.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// Generous: start-up compiles TypeScript, creates a database cluster and, for the demo, a chain,
// on a machine that may be busy with other work.
const READY_TIMEOUT_MS = 240_000;
const EXIT_TIMEOUT_MS = 120_000;
const GONE_TIMEOUT_MS = 30_000;

const leftovers: number[] = [];
const directories: string[] = [];
after(() => {
  // Only what a failed test left behind; a passing run has nothing here.
  for (const pid of leftovers) if (isRunning(pid)) process.kill(pid, "SIGKILL");
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mintlens-signals-"));
  directories.push(dir);
  return dir;
}

interface Run {
  pid: number;
  stderr(): string;
  /** Resolves once stderr matches `pattern`; rejects after `timeoutMs` or when the process exits first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<void>;
  /** The exit code; rejects (and kills the process) after `timeoutMs`. */
  exit(timeoutMs: number): Promise<number | null>;
}

function mintlens(args: string[]): Run {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("MINTLENS_")) delete env[name];
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  assert.ok(child.pid, "mintlens started");
  leftovers.push(child.pid);
  let stderr = "";
  const watchers = new Set<() => void>();
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const watch of watchers) watch();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    pid: child.pid,
    stderr: () => stderr,
    waitFor(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = (error?: Error) => {
          clearTimeout(timer);
          watchers.delete(watch);
          if (error) reject(error);
          else resolve();
        };
        const watch = () => {
          if (pattern.test(stderr)) done();
        };
        const timer = setTimeout(
          () => done(new Error(`no ${pattern} within ${timeoutMs} ms; stderr:\n${stderr}`)),
          timeoutMs,
        );
        watchers.add(watch);
        void exited.then((code) => done(new Error(`exited (${code}) before ${pattern}; stderr:\n${stderr}`)));
        watch();
      });
    },
    async exit(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`still running ${timeoutMs} ms after the signal; stderr:\n${stderr}`));
        }, timeoutMs);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** The children of a live process, with their command names. */
function childrenOf(pid: number): { pid: number; name: string }[] {
  const children: { pid: number; name: string }[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const listed = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    for (const child of listed ? listed.split(/\s+/).map(Number) : []) {
      children.push({ pid: child, name: readFileSync(`/proc/${child}/comm`, "utf8").trim() });
    }
  }
  return children;
}

/** A zombie has ended; only its parent's reaping is missing (and nobody reaps orphans in some containers). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function assertGone(pids: number[], what: string): Promise<void> {
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  while (pids.some(isRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(
    pids.filter(isRunning),
    [],
    `${what} still running ${GONE_TIMEOUT_MS} ms after mintlens exited`,
  );
}

/** The server's process id, from the file PostgreSQL keeps in its data directory while it runs. */
function postmasterPid(databaseDir: string): number | undefined {
  const file = join(databaseDir, "postmaster.pid");
  return existsSync(file) ? Number(readFileSync(file, "utf8").split("\n")[0]) : undefined;
}

const INDEXING = /"msg":"indexing"/;

describe("SIGTERM sent to the mintlens process alone stops it cleanly", () => {
  test("demo: the indexer stops, then the embedded PostgreSQL and anvil; exit code 0", async () => {
    const dir = tempDir();
    const databaseDir = join(dir, "demo", "postgres");
    const run = mintlens(["demo", "--days", "2", "--data-dir", dir]);
    await run.waitFor(INDEXING, READY_TIMEOUT_MS);

    const anvil = childrenOf(run.pid).filter((c) => c.name === "anvil");
    assert.equal(anvil.length, 1, `one anvil child: ${JSON.stringify(childrenOf(run.pid))}`);
    const postgres = postmasterPid(databaseDir);
    assert.ok(postgres !== undefined && isRunning(postgres), "the embedded PostgreSQL runs");
    leftovers.push(...anvil.map((c) => c.pid), postgres);

    process.kill(run.pid, "SIGTERM");
    assert.equal(await run.exit(EXIT_TIMEOUT_MS), 0, run.stderr());
    assert.match(run.stderr(), /demo: stopped/);
    await assertGone(
      anvil.map((c) => c.pid),
      "anvil",
    );
    await assertGone([postgres], "the embedded PostgreSQL");
    // PostgreSQL removes the file when it shuts down cleanly, not when it is killed.
    assert.equal(postmasterPid(databaseDir), undefined, "postmaster.pid removed");
  });

  test("index: the embedded PostgreSQL it started is stopped; exit code 0", async () => {
    const anvil = await startAnvil({ chainId: 31337 });
    try {
      const dir = tempDir();
      const run = mintlens([
        "index",
        "--chain",
        `dev=${anvil.url}`,
        "--chain-id",
        "dev=31337",
        "--native-symbol",
        "dev=ETH",
        "--confirmations",
        "dev=0",
        "--poll-interval",
        "100",
        "--data-dir",
        dir,
      ]);
      await run.waitFor(INDEXING, READY_TIMEOUT_MS);
      const postgres = postmasterPid(join(dir, "postgres"));
      assert.ok(postgres !== undefined && isRunning(postgres), "the embedded PostgreSQL runs");
      leftovers.push(postgres);
      assert.ok(
        childrenOf(run.pid).some((c) => c.pid === postgres),
        "the embedded PostgreSQL is a child of mintlens",
      );

      process.kill(run.pid, "SIGTERM");
      assert.equal(await run.exit(EXIT_TIMEOUT_MS), 0, run.stderr());
      await assertGone([postgres], "the embedded PostgreSQL");
      assert.equal(postmasterPid(join(dir, "postgres")), undefined, "postmaster.pid removed");
    } finally {
      await anvil.stop();
    }
  });

  test("index: an embedded PostgreSQL it found running is left running", async () => {
    const anvil = await startAnvil({ chainId: 31337 });
    const dir = tempDir();
    const server = await startEmbeddedPostgres({ dataDir: dir });
    try {
      const run = mintlens([
        "index",
        "--chain",
        `dev=${anvil.url}`,
        "--chain-id",
        "dev=31337",
        "--native-symbol",
        "dev=ETH",
        "--confirmations",
        "dev=0",
        "--data-dir",
        dir,
      ]);
      await run.waitFor(INDEXING, READY_TIMEOUT_MS);
      assert.match(run.stderr(), /using the embedded PostgreSQL already running/);

      process.kill(run.pid, "SIGTERM");
      assert.equal(await run.exit(EXIT_TIMEOUT_MS), 0, run.stderr());
      assert.ok(server.pid !== undefined && isRunning(server.pid), "the server is still running");
    } finally {
      await server.stop();
      await anvil.stop();
    }
  });

  test("migrate: a signal during start-up still stops the embedded PostgreSQL; exit code 0", async () => {
    const dir = tempDir();
    const run = mintlens(["migrate", "--data-dir", dir]);
    await run.waitFor(/starting the embedded PostgreSQL/, READY_TIMEOUT_MS);

    process.kill(run.pid, "SIGTERM");
    assert.equal(await run.exit(EXIT_TIMEOUT_MS), 0, run.stderr());
    const postgres = postmasterPid(join(dir, "postgres"));
    assert.ok(postgres === undefined || !isRunning(postgres), "no embedded PostgreSQL left running");
  });
});
