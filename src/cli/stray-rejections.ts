import { classifyDatabaseError } from "../store/pg/errors.ts";

/**
 * postgres.js fetches the server's array types on every new connection from a promise nobody
 * awaits: when the server ends the connection during that fetch (a failover, an administrator
 * terminating sessions), the rejection is unhandled, and Node ends the process for it. Every query
 * of that connection is rejected to its own caller anyway, so such a rejection carries nothing to
 * act on. Any other unhandled rejection still ends the process, as it would without this.
 * Returns the function that removes the handler.
 */
export function ignoreStrayConnectionRejections(onIgnored: (error: unknown) => void = () => {}): () => void {
  const handler = (reason: unknown) => {
    if (classifyDatabaseError(reason) === "connection") {
      onIgnored(reason);
      return;
    }
    throw reason;
  };
  process.on("unhandledRejection", handler);
  return () => process.off("unhandledRejection", handler);
}
