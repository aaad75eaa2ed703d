import { spawn } from "node:child_process";
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
