import { pino } from "pino";

export type Logger = pino.Logger;

/** Structured JSON logs on stderr, so stdout stays free for a command's own output. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    { level, base: { ...bindings }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
}

/** A logger that drops everything: for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
