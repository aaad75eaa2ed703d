import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CommandResult, commandVariables } from "./cli.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Runs the real `mintlens` command as a process, with its output captured; killed after a minute
 * so that a hang fails the test instead of stalling the suite. For what only a process shows:
 * exit codes, signals, what reaches the terminal.
 */
export function mintlens(args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env: commandVariables(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) => {
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningMintlens {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | null>;
  /** The REST URL each chain's line announces, once every one named is there. */
  restUrls(names: readonly string[]): Promise<Map<string, string>>;
}

/** Starts the real `mintlens` command and leaves it running; killed after four minutes. */
export function startMintlens(args: string[], env: Record<string, string> = {}): RunningMintlens {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env: commandVariables(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const killer = setTimeout(() => child.kill("SIGKILL"), 240_000);
  void exited.then(() => clearTimeout(killer));
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  return {
    child,
    stderr: () => stderr,
    exited,
    async restUrls(names) {
      for (;;) {
        const found = new Map<string, string>();
        for (const m of stderr.matchAll(/^(\w+) \(chain \d+\): REST (\S+)/gm)) {
          found.set(m[1] as string, m[2] as string);
        }
        if (names.every((n) => found.has(n))) return found;
        if (ended) throw new Error(`mintlens exited before its listeners were announced:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
