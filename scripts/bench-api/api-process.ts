/**
 * The API server under test, run as `mintlens serve` in a process of its own, exactly as it is
 * deployed: the benchmark only knows its command line and its HTTP answers.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const MINTLENS = [join(REPO, "src/main.ts")];
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

export interface ApiProcess {
  /** `http://127.0.0.1:<rest port>` */
  url: string;
  /** `127.0.0.1:<gRPC port>` */
  grpcAddress: string;
  pid: number;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s. */
  stop(): Promise<void>;
}

/** Runs `mintlens keys create <user>`, which prints the new key alone on stdout. */
export async function createApiKey(databaseUrl: string, user: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", ...MINTLENS, "keys", "create", user, "--database-url", databaseUrl],
    { cwd: REPO, timeout: 60_000 },
  );
  const key = stdout.trim();
  if (!/^ml_\S+$/.test(key))
    throw new Error(`mintlens keys create printed no key: ${JSON.stringify(stdout)}`);
  return key;
}

/**
 * Starts `mintlens serve` on free ports (without a rate limit unless `rateLimit` says otherwise)
 * and waits until its `/healthz` answers 200. Its output goes to `logFile`, read back when it
 * fails to start.
 */
export async function startApi(options: {
  databaseUrl: string;
  chainName: string;
  chainId: number;
  logFile: string;
  /** `--response-cache` in MiB; the server's default when unset. */
  responseCacheMb?: number;
  /** `--rate-limit` in points per second per key; 0 (no limit) when unset. */
  rateLimit?: number;
  /** More flags for `mintlens serve` (`--database-pooler transaction`). */
  extraArgs?: readonly string[];
  /** `--rate-burst`; the server's default when unset. */
  rateBurst?: number;
  /** `--rate-limit-store`; the server's default (memory) when unset. */
  rateLimitStore?: string;
}): Promise<ApiProcess> {
  const [rest, grpc, metrics] = await freePorts(3);
  const args = [
    "--import",
    "tsx",
    ...MINTLENS,
    "serve",
    "--database-url",
    options.databaseUrl,
    "--chain",
    options.chainName,
    "--chain-id",
    `${options.chainName}=${options.chainId}`,
    "--rest-port",
    String(rest),
    "--grpc-port",
    String(grpc),
    "--metrics-port",
    String(metrics),
    "--rate-limit",
    String(options.rateLimit ?? 0),
    ...(options.rateBurst !== undefined ? ["--rate-burst", String(options.rateBurst)] : []),
    ...(options.rateLimitStore !== undefined ? ["--rate-limit-store", options.rateLimitStore] : []),
    ...(options.responseCacheMb !== undefined ? ["--response-cache", String(options.responseCacheMb)] : []),
    ...(options.extraArgs ?? []),
  ];
  const log = openSync(options.logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, { cwd: REPO, stdio: ["ignore", log, log] });
  } finally {
    closeSync(log);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error("mintlens serve did not start");
  const exited = new Promise<number | string>((done) => {
    child.once("exit", (code, signal) => done(code ?? signal ?? "unknown"));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${rest}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let ended: number | string | undefined;
  void exited.then((how) => {
    ended = how;
  });
  while (!(await healthy(url))) {
    if (ended !== undefined || Date.now() > deadline) {
      await stop();
      const tail = readFileSync(options.logFile, "utf8").trimEnd().split("\n").slice(-20).join("\n");
      throw new Error(
        `mintlens serve ${ended === undefined ? "did not answer /healthz within 60 s" : `exited (${ended})`}; its output:\n${tail}`,
      );
    }
    await sleep(200);
  }
  return { url, grpcAddress: `127.0.0.1:${grpc}`, pid, stop };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Ports free now on the loopback interface (the OS picks them, all different). */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((done, fail) => {
          const server = createServer();
          server.once("error", fail);
          server.listen(0, "127.0.0.1", () => done(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  return ports;
}
