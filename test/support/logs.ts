import { Writable } from "node:stream";
import { pino } from "pino";
import type { Logger } from "../../src/core/logger.ts";

/** A logger whose lines (warnings and worse) a test reads back as parsed JSON. */
export function capturingLogger(): {
  logger: Logger;
  entries: () => { msg: string; err?: { message: string } }[];
} {
  const lines: string[] = [];
  const logger = pino(
    { level: "warn" },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  return {
    logger,
    entries: () => lines.map((line) => JSON.parse(line) as { msg: string; err?: { message: string } }),
  };
}
