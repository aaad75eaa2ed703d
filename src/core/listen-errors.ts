/**
 * A listener that could not bind, told as what to change: a port another process holds, one this
 * user may not open, an address this machine does not have. Anything else is passed on as it is.
 */
import { errorMessage, UserFacingError } from "./errors.ts";

const CAUSES = {
  EADDRINUSE: { says: "is in use by another process", fix: "port" },
  EACCES: { says: "may not be opened by this user (ports below 1024 need privileges)", fix: "port" },
  EADDRNOTAVAIL: { says: "is not an address of this machine", fix: "host" },
} as const;

export interface Listener {
  /** What listens, as the user knows it: `ethereum REST`, `metrics`. */
  name: string;
  host: string;
  port: number;
  /** The flags that move it. */
  flags: { port: string; host: string };
}

export function listenError(error: unknown, listener: Listener): Error {
  const code = (error as { code?: unknown }).code;
  const text = errorMessage(error);
  // gRPC's bind names the system's code only inside its message.
  const cause =
    typeof code === "string" && code in CAUSES
      ? (code as keyof typeof CAUSES)
      : (Object.keys(CAUSES) as (keyof typeof CAUSES)[]).find((c) => text.includes(c));
  if (cause === undefined) return error instanceof Error ? error : new Error(text);
  const { says, fix } = CAUSES[cause];
  const shown = listener.host.includes(":") ? `[${listener.host}]` : listener.host;
  return new UserFacingError(
    `${listener.name} listener: ${shown}:${listener.port} ${says}; choose another with ${listener.flags[fix]}`,
  );
}
