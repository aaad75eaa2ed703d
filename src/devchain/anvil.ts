import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";

export interface AnvilOptions {
  chainId?: number;
  /** Seconds between automatic blocks; without it a block is mined per transaction. */
  blockTime?: number;
  /** Start from the state saved in this file (anvil's --load-state); the file is only read. */
  loadState?: string;
  /** Save the state to this file on exit (anvil's --dump-state). */
  dumpState?: string;
  /** Unix seconds of the genesis block. */
  timestamp?: number;
  /** Extra command-line arguments. */
  args?: readonly string[];
  /** Port to listen on; 0 (the default) lets the system pick a free one. */
  port?: number;
  /** The anvil binary; default: `anvilBinary()`. */
  binary?: string;
}

export interface Anvil {
  url: string;
  port: number;
  pid: number;
  /** Stops anvil (SIGTERM, which also writes the dump file if one was given) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Where the anvil binary is: the npm package's, else `anvil` on the PATH. */
export function anvilBinary(): string {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve("@foundry-rs/anvil-linux-amd64/package.json");
    const bin = join(dirname(pkg), "bin", "anvil");
    if (existsSync(bin)) return bin;
  } catch {
    // Not installed for this platform: fall back to the PATH.
  }
  return "anvil";
}

export async function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const args = ["--host", "127.0.0.1", "--port", String(options.port ?? 0)];
  if (options.chainId !== undefined) args.push("--chain-id", String(options.chainId));
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  if (options.loadState !== undefined) args.push("--load-state", options.loadState);
  if (options.dumpState !== undefined) args.push("--dump-state", options.dumpState);
  if (options.timestamp !== undefined) args.push("--timestamp", String(options.timestamp));
  args.push(...(options.args ?? []));

  const binary = options.binary ?? anvilBinary();
  // A process group of its own: a Ctrl+C at the terminal reaches only its owner, which stops it
  // once nothing needs the chain any more, as it does for a SIGTERM sent to the owner alone.
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  // Should the owner end without stopping it (a crash, a second Ctrl+C), anvil goes too.
  const orphanGuard = () => child.kill("SIGTERM");
  process.on("exit", orphanGuard);
  child.once("exit", () => process.off("exit", orphanGuard));
  child.once("error", () => process.off("exit", orphanGuard));
  const port = await waitForListening(child, binary);
  const pid = child.pid ?? -1;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid,
    stop: () => stopChild(child),
  };
}

function waitForListening(child: ChildProcess, binary: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`anvil did not start within 30 s: ${stderr.trim()}`));
    }, 30_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run anvil (${binary}): ${error.message}`));
    });
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited with code ${code}: ${stderr.trim()}`));
    };
    child.once("exit", onExit);
    const stdout = child.stdout;
    if (!stdout) return;
    const lines = createInterface({ input: stdout });
    lines.on("line", (line) => {
      const match = /Listening on [^:]+:(\d+)/.exec(line);
      if (match?.[1]) {
        clearTimeout(timer);
        child.off("exit", onExit);
        // Keep draining anvil's output so it never blocks on a full pipe.
        lines.removeAllListeners("line");
        lines.on("line", () => {});
        resolve(Number(match[1]));
      }
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
