/**
 * The `mintlens` command line run in the test's own process: the same commands, output and exit
 * codes as the process, without starting node and compiling the sources again for each command.
 * What only a process shows (exit codes of src/main.ts, signals) is in ./mintlens-process.ts.
 */
import { Writable } from "node:stream";
import { runCommandLine } from "../../src/cli/program.ts";
import { createLifecycle } from "../../src/cli/shutdown.ts";
import { readEnvironment } from "../../src/config/environment.ts";

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a command under test: without the environment's database or chains. */
export function commandVariables(env: Record<string, string>): Record<string, string | undefined> {
  return { ...process.env, DATABASE_URL: "", MINTLENS_CHAINS: "", ...env };
}

/** A command running in the test's own process. */
export interface RunningCommand {
  /** What it has written to its stderr so far (its messages; logs go to the process's stderr). */
  stderr(): string;
  stdout(): string;
  /** Asks it to stop, as SIGTERM does to the process. */
  stop(): void;
  /** Its exit code, once it has ended and released what it opened. */
  readonly exited: Promise<number>;
  /** The REST URL each chain's line announces, once every one named is there. */
  restUrls(names: readonly string[]): Promise<Map<string, string>>;
}

/**
 * Starts a `mintlens` command in the test's own process: the same command line, commands and
 * exit codes as the process, without starting node and compiling the sources again. Logs are
 * quiet unless `env` asks for them (MINTLENS_LOG_LEVEL), as they would go to the test's stderr.
 */
export function startCommand(args: string[], env: Record<string, string> = {}): RunningCommand {
  const out = captured();
  const err = captured();
  const environment = readEnvironment(commandVariables({ MINTLENS_LOG_LEVEL: "fatal", ...env }), {
    stdout: out.stream,
    stderr: err.stream,
  });
  const lifecycle = createLifecycle({ signals: false });
  let ended = false;
  const exited = runCommandLine(args, environment, lifecycle).finally(() => {
    ended = true;
  });
  return {
    stdout: out.text,
    stderr: err.text,
    stop: () => lifecycle.stop("stopped by the test"),
    exited,
    async restUrls(names) {
      for (;;) {
        const found = new Map<string, string>();
        for (const m of err.text().matchAll(/^(\w+) \(chain \d+\): REST (\S+)/gm)) {
          found.set(m[1] as string, m[2] as string);
        }
        if (names.every((n) => found.has(n))) return found;
        if (ended) throw new Error(`the command ended before its listeners were announced:\n${err.text()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Runs a `mintlens` command to its end in the test's own process (see `startCommand`). */
export async function runCommand(args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
  const command = startCommand(args, env);
  const code = await command.exited;
  return { code, stdout: command.stdout(), stderr: command.stderr() };
}

function captured(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}
