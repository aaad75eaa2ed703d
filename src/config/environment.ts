import type { Writable } from "node:stream";

/** Environment variables as the process was started with them. */
export type Variables = Readonly<Record<string, string | undefined>>;

/** Where a command writes: the process's standard output or error, or what a test reads them from. */
export type Output = Writable & {
  /** A terminal: progress is drawn as bars rather than logged. */
  readonly isTTY?: boolean;
};

/**
 * The environment, read once when a command starts; everything below the command line is handed
 * the values it needs, so no module depends on when, or whether, the environment was read.
 */
export interface Environment {
  /** Every variable: the configuration reads `MINTLENS_*` and `DATABASE_URL` from them. */
  readonly variables: Variables;
  /** MINTLENS_DEBUG: unexpected errors are reported with their stack trace. */
  readonly debug: boolean;
  /** MINTLENS_ANVIL_BIN: the anvil the demo runs instead of the npm package's. */
  readonly anvilBinary: string | undefined;
  /** A command's own output: a key, an answer, a count. */
  readonly stdout: Output;
  /** Messages for people (logs go to the process's stderr whatever this is). */
  readonly stderr: Output;
}

export function readEnvironment(
  variables: Variables = { ...process.env },
  output: { stdout: Output; stderr: Output } = { stdout: process.stdout, stderr: process.stderr },
): Environment {
  return {
    variables: Object.freeze({ ...variables }),
    debug: Boolean(variables.MINTLENS_DEBUG),
    anvilBinary: variables.MINTLENS_ANVIL_BIN || undefined,
    stdout: output.stdout,
    stderr: output.stderr,
  };
}
