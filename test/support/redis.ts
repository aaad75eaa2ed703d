/**
 * A real Redis (Debian's `redis-server`) on a free loopback port, keeping nothing on disk, in a
 * temporary directory of its own. A test can kill it outright and start it again on the same port,
 * as an operator's Redis would crash and come back. Stopped by its PID, never by name.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { closedPort } from "./s3-server.ts";

export interface TestRedis {
  url: string;
  port: number;
  /** The running server's. */
  readonly pid: number;
  /** SIGKILL, as a crash: nothing is saved, clients see their connections reset. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Why Redis tests cannot run here, or undefined when `redis-server` is installed. */
export function redisMissing(): string | undefined {
  const found = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  return found.error === undefined && found.status === 0
    ? undefined
    : "redis-server is not installed (apt-get install redis-server)";
}

/** How long a start may take before the test fails rather than waits. */
const START_MS = 10_000;

export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), "mintlens-redis-"));
  const port = await closedPort();
  let child: ChildProcess | undefined;

  const launch = async () => {
    const started = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      { stdio: "ignore" },
    );
    child = started;
    const deadline = Date.now() + START_MS;
    while (!(await answersPing(port))) {
      if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await sleep(25);
    }
  };

  const end = async (signal: NodeJS.Signals) => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.pid === undefined) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    process.kill(running.pid, signal);
    await exited;
  };

  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      if (child?.pid === undefined) throw new Error("redis-server is not running");
      return child.pid;
    },
    kill: () => end("SIGKILL"),
    restart: launch,
    async stop() {
      await end("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis on `port` answers PING. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => done(data.toString().startsWith("+PONG")));
  });
}
