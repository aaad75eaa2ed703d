import { pino } from "pino";

export type Logger = pino.Logger;

/** Structured JSON logs on stderr, so stdout stays free for a command's own output. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    { level, base: { ...bindings }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
}

/**
 * The API's access log: one line per request, on stderr like every log, but written in blocks of
 * 4 KiB rather than a write per line, which at thousands of requests a second would cost more
 * than answering them. The lines buffered when the process is killed are lost; `flush` on close.
 */
export function createAccessLogger(level: string): Logger {
  return pino(
    { level, base: {}, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 2, sync: false, minLength: 4096 }),
  );
}

/** A logger that drops everything: for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
