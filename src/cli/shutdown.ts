/**
 * The one way a command ends. Every child process and every connection a command opens is
 * handed to its `Lifecycle` as soon as it exists, and released from there, in reverse order,
 * whatever ends the command: its own end, a failure, or a signal. Releasing them in one place
 * is what keeps a `kill <pid>` from a supervisor (which reaches this process alone) as clean as
 * a Ctrl+C at the terminal.
 */
export interface Lifecycle {
  /** Aborted by the first SIGINT, SIGTERM or SIGHUP: finish the work under way, then return. */
  readonly signal: AbortSignal;
  /** Releases `release` when the command ends, after everything registered later. */
  defer(release: () => unknown): void;
}

export interface CommandLifecycle extends Lifecycle {
  /** Whether a signal asked the command to stop. */
  readonly stopRequested: boolean;
  /** Asks the command to stop as a first signal does: for a command run inside another program. */
  stop(reason: string): void;
  /** Releases everything deferred, newest first; returns the errors of those that failed. */
  close(): Promise<unknown[]>;
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

const EXIT_CODES: Record<(typeof STOP_SIGNALS)[number], number> = {
  SIGHUP: 129,
  SIGINT: 130,
  SIGTERM: 143,
};

/**
 * Takes over SIGINT, SIGTERM and SIGHUP. The first one aborts `signal`, and the command winds
 * down; a second one exits at once (children are still signalled on the way out, by their own
 * exit guards), for a shutdown that hangs. With `signals: false` the signals are left to the
 * program that runs the command (the tests run commands in their own process), and `stop` ends it.
 */
export function createLifecycle(
  options: { onSignal?: (signal: NodeJS.Signals) => void; signals?: boolean } = {},
): CommandLifecycle {
  const controller = new AbortController();
  const releases: (() => unknown)[] = [];
  let closing: Promise<unknown[]> | undefined;

  const onSignal = (signal: (typeof STOP_SIGNALS)[number]) => {
    if (controller.signal.aborted) process.exit(EXIT_CODES[signal]);
    options.onSignal?.(signal);
    controller.abort(new Error(`stopped by ${signal}`));
  };
  if (options.signals !== false) for (const signal of STOP_SIGNALS) process.on(signal, onSignal);

  return {
    signal: controller.signal,
    get stopRequested() {
      return controller.signal.aborted;
    },
    stop(reason) {
      if (!controller.signal.aborted) controller.abort(new Error(reason));
    },
    defer(release) {
      // Something that came into being while the command was ending is released right after the rest.
      if (closing) closing = closing.then(async (errors) => [...errors, ...(await settle(release))]);
      else releases.push(release);
    },
    close() {
      closing ??= (async () => {
        const errors: unknown[] = [];
        for (const release of releases.reverse()) errors.push(...(await settle(release)));
        // Signals stay ours until the process is gone: a second Ctrl+C still exits at once.
        return errors;
      })();
      return closing;
    },
  };
}

async function settle(release: () => unknown): Promise<unknown[]> {
  try {
    await release();
    return [];
  } catch (error) {
    return [error];
  }
}

/** Resolves when a signal asks the command to stop: what a command that only serves waits on. */
export function untilStopped(lifecycle: Lifecycle): Promise<void> {
  return new Promise((resolve) => {
    if (lifecycle.signal.aborted) resolve();
    lifecycle.signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
