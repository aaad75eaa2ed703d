/**
 * How a database failure should be handled. The checkpoint is written with each batch, so any
 * failed write can be retried from it safely; what matters is whether retrying can help.
 */
export type DatabaseFailure =
  /** The connection was lost or refused, the server is restarting or failing over, or is full: retry with backoff. */
  | "connection"
  /** The server ran the statement and refused it: the same batch will likely fail the same way. */
  | "statement";

/** postgres.js's own codes for a connection that died or could not be made. */
const CLIENT_CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/**
 * SQLSTATEs that mean the server or the session went away rather than the statement being wrong:
 * class 08 (connection exception), 57P01-57P05 (shut down by an administrator, a crash, not
 * accepting connections yet, database dropped, idle timeout), 53300 (too many connections),
 * 40001 and 40P01 (serialization failure, deadlock: a retry succeeds by design), 25P04 (a
 * 55P03 (the chain lock went with a dropped connection: it is taken again before the retry).
 */
const TRANSIENT_SQLSTATES = /^(08...|57P0[1-5]|53300|40001|40P01|55P03)$/;

/** Undefined when the error is not a database error at all. */
export function classifyDatabaseError(error: unknown): DatabaseFailure | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code !== "string") return undefined;
  if (name === "PostgresError") return TRANSIENT_SQLSTATES.test(code) ? "connection" : "statement";
  if (CLIENT_CONNECTION_CODES.has(code)) return "connection";
  // Socket errors (ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, EHOSTUNREACH…) on the way to the server.
  if (/^E[A-Z]+$/.test(code) && "syscall" in error) return "connection";
  return undefined;
}

/**
 * The statement was cancelled (SQLSTATE 57014): it ran past the session's `statement_timeout`, or
 * its deadline (see `statement-deadline.ts`), or an operator cancelled it. The connection stays
 * usable. A statement still waiting for a connection when its deadline came is failed by
 * postgres.js itself, with the same code.
 */
export function statementWasCancelled(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  const { code, name } = error as { code?: unknown; name?: unknown };
  return code === "57014" && (name === "PostgresError" || name === "Error");
}

/** Session-ending SQLSTATEs: the server closes the connection after sending them. */
const SESSION_ENDED_SQLSTATES = /^(08...|57P0[1-3])$/;

/**
 * Whether the connection a failed query ran on is gone (closed, reset, terminated by the server).
 * A reserved connection that is gone must not be released: postgres.js has already moved it to its
 * closed connections, and releasing it would put a dead connection back among the open ones.
 */
export function connectionIsGone(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code !== "string") return false;
  if (name === "PostgresError") return SESSION_ENDED_SQLSTATES.test(code);
  return CLIENT_CONNECTION_CODES.has(code) || (/^E[A-Z]+$/.test(code) && "syscall" in error);
}
