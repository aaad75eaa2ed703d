/**
 * The process under test: `mintlens demo` in a process of its own (its embedded PostgreSQL, its
 * anvil chain with activity every 3 s, its metadata server, and the indexer, the metadata worker
 * and the API in the one process measured). The benchmark knows it only by its command line, its
 * output and its HTTP answers, and ends it, and whatever it started, by process id.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** The demo's own shutdown stops the API, the workers, PostgreSQL and anvil in turn. */
const STOP_TIMEOUT_MS = 60_000;
const CHILD_STOP_TIMEOUT_MS = 10_000;

export interface DemoProcess {
  pid: number;
  /** `http://127.0.0.1:<rest port>` */
  restUrl: string;
  metricsUrl: string;
  /** The key the demo made for its user. */
  apiKey: string;
  /** The data directory of its embedded PostgreSQL (`<data-dir>/demo`). */
  databaseDir: string;
  /** Resolves when the process exits, with its code or signal. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after 60 s; then ends by id whatever it started that is still running. */
  stop(): Promise<void>;
}

export interface DemoOptions {
  dataDir: string;
  days: number;
  seed: string;
  /** The API's answer cache (`--response-cache`), in MiB. */
  responseCacheMb: number;
  /** Its stdout and stderr. */
  logFile: string;
  /** How long the history may take to generate and index before its key is shown. */
  readyTimeoutMs: number;
}

/**
 * Starts the demo on free ports without a rate limit, with the answer cache given, and waits until it has indexed its history
 * and shown its API key (it does so once the indexer follows the chain's head).
 */
export async function startDemo(options: DemoOptions): Promise<DemoProcess> {
  const args = [
    "--import",
    "tsx",
    join(REPO, "src/main.ts"),
    "demo",
    "--data-dir",
    options.dataDir,
    "--days",
    String(options.days),
    "--seed",
    options.seed,
    "--rest-port",
    "0",
    "--grpc-port",
    "0",
    "--metrics-port",
    "0",
    "--rate-limit",
    "0",
    "--response-cache",
    String(options.responseCacheMb),
  ];
  const log = openSync(options.logFile, "a");
  let child: ChildProcess;
  try {
    // A process group of its own: a Ctrl+C at the terminal reaches the benchmark alone, which
    // then stops the demo with one SIGTERM (a second signal would make it exit at once).
    child = spawn(process.execPath, args, { cwd: REPO, stdio: ["ignore", log, log], detached: true });
  } finally {
    closeSync(log);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error("mintlens demo did not start");
  // Should the benchmark end without stopping it, the demo goes too (and stops its own children).
  const orphanGuard = () => child.kill("SIGTERM");
  process.on("exit", orphanGuard);
  const exited = new Promise<number | string>((done) => {
    child.once("exit", (code, signal) => {
      process.off("exit", orphanGuard);
      done(code ?? signal ?? "unknown");
    });
  });
  let ended: number | string | undefined;
  void exited.then((how) => {
    ended = how;
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= stopTree(child, pid, exited);
    return stopping;
  };

  const output = tailReader(options.logFile);
  const found: { restUrl?: string; metricsUrl?: string; apiKey?: string } = {};
  const deadline = Date.now() + options.readyTimeoutMs;
  for (;;) {
    for (const line of output.newLines()) {
      found.metricsUrl ??= /demo: metrics: (http:\S+\/metrics)/.exec(line)?.[1];
      found.restUrl ??= /\): REST (http:\/\/\S+)/.exec(line)?.[1];
      found.apiKey ??= /export MINTLENS_API_KEY=(\S+)/.exec(line)?.[1];
    }
    const { restUrl, metricsUrl, apiKey } = found;
    if (apiKey !== undefined && restUrl !== undefined && metricsUrl !== undefined) {
      return { pid, restUrl, metricsUrl, apiKey, databaseDir: join(options.dataDir, "demo"), exited, stop };
    }
    if (ended !== undefined || Date.now() > deadline) {
      await stop();
      throw new Error(
        `mintlens demo ${ended === undefined ? `showed no API key within ${options.readyTimeoutMs / 1000} s` : `exited (${ended})`}; its output ends:\n${logTail(options.logFile)}`,
      );
    }
    await sleep(500);
  }
}

/** The last lines of a log file, for an error message. */
export function logTail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no output)";
  }
}

/** The complete lines appended to a file since the last call. */
function tailReader(file: string): { newLines(): string[] } {
  let offset = 0;
  let partial = "";
  return {
    newLines() {
      const fd = openSync(file, "r");
      try {
        const chunks: Buffer[] = [];
        const buffer = Buffer.alloc(64 * 1024);
        for (;;) {
          const n = readSync(fd, buffer, 0, buffer.length, offset);
          if (n === 0) break;
          offset += n;
          chunks.push(Buffer.from(buffer.subarray(0, n)));
        }
        const text = partial + Buffer.concat(chunks).toString("utf8");
        const lines = text.split("\n");
        partial = lines.pop() ?? "";
        return lines;
      } finally {
        closeSync(fd);
      }
    },
  };
}

/**
 * Stops the demo, then whatever it started that outlived it (anvil and PostgreSQL run in process
 * groups of their own, so nothing else reaches them), each by its id and start time, so that an id
 * reused meanwhile by another process is left alone.
 */
async function stopTree(child: ChildProcess, pid: number, exited: Promise<number | string>): Promise<void> {
  const started = descendants(pid);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }
  const left = () => started.filter((p) => startTime(p.pid) === p.startTime);
  if (left().length === 0) return;
  for (const p of left()) signal(p.pid, "SIGTERM");
  const deadline = Date.now() + CHILD_STOP_TIMEOUT_MS;
  while (left().length > 0 && Date.now() < deadline) await sleep(200);
  for (const p of left()) signal(p.pid, "SIGKILL");
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

interface ProcessId {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: with the id, names one process for its whole life. */
  startTime: string;
}

/** Every live process below `root`, read from /proc (Linux; elsewhere none). */
function descendants(root: number): ProcessId[] {
  const parents = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields === undefined) continue;
    const ppid = Number(fields[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const found: ProcessId[] = [];
  const queue = [...(parents.get(root) ?? [])];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const start = startTime(next);
    if (start !== undefined) found.push({ pid: next, startTime: start });
    queue.push(...(parents.get(next) ?? []));
  }
  return found;
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces); field 3 is [0]. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // A zombie has exited already; only its parent's wait removes it.
    return fields[0] === "Z" ? undefined : fields;
  } catch {
    return undefined;
  }
}

function startTime(pid: number): string | undefined {
  return statFields(pid)?.[19];
}
