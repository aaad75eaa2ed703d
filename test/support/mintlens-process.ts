import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type CommandResult, commandVariables } from "./cli.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A `mintlens` process under test. */
export interface MintlensChild {
  child: ChildProcess;
  running(): boolean;
  /** What it has written to its stderr so far. */
  stderr(): string;
  /** Kills it with SIGKILL, as a crash would. */
  kill(): void;
  /** Its exit code (null when killed) and output, once it has ended; `hung` when the timeout killed it. */
  readonly exited: Promise<CommandResult & { hung: boolean }>;
}

/**
 * Spawns the real `mintlens` command, its output captured, killed with -9 after `timeoutMs` so that
 * a hang fails the test instead of stalling the suite. For what only a process shows: exit codes,
 * signals, a kill at any instant.
 */
export function spawnMintlens(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): MintlensChild {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env: commandVariables(options.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  let running = true;
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill("SIGKILL");
  }, options.timeoutMs ?? 60_000);
  const exited = new Promise<CommandResult & { hung: boolean }>((resolve) => {
    child.once("exit", (code) => {
      running = false;
      clearTimeout(timer);
      resolve({ code, stdout, stderr, hung });
    });
  });
  return {
    child,
    running: () => running,
    stderr: () => stderr,
    kill: () => {
      if (running) child.kill("SIGKILL");
    },
    exited,
  };
}

/** Runs `mintlens` as a process to its end (killed after a minute: a hang fails the test). */
export async function mintlens(args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
  const { code, stdout, stderr } = await spawnMintlens(args, { env }).exited;
  return { code, stdout, stderr };
}

export interface IndexArguments {
  rpcUrl: string;
  chainId: number;
  databaseUrl: string;
  batchBlocks: number;
  /** Without it the indexer follows the head until stopped. */
  stopAt?: number;
  /** More options, after the ones every test index takes. */
  extra?: readonly string[];
}

/**
 * `mintlens index` for one chain named `test` without confirmations, logging only warnings. Test
 * histories are weeks old: their stream events are kept whole, not pruned as they are indexed.
 */
export function indexArguments(run: IndexArguments): string[] {
  return [
    "index",
    "--chain",
    `test=${run.rpcUrl}`,
    "--chain-id",
    String(run.chainId),
    "--native-symbol",
    "ETH",
    "--confirmations",
    "0",
    "--batch-blocks",
    String(run.batchBlocks),
    "--database-url",
    run.databaseUrl,
    ...(run.stopAt === undefined ? [] : ["--stop-at", String(run.stopAt)]),
    "--log-level",
    "warn",
    "--stream-retention",
    "3650",
    ...(run.extra ?? []),
  ];
}
