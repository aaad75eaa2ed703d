import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import { errorMessage, UserFacingError } from "../../core/errors.ts";
import { redactUrl } from "../../core/url.ts";
import { connectionIsGone } from "./errors.ts";
import { openNoDelaySocket, type SocketTarget } from "./socket.ts";
import { withStatementDeadline } from "./statement-deadline.ts";

// Kept here for the tables and reads, which take it with the rest of this module.
export { toHex } from "../../core/hex.ts";

export type Sql = postgres.Sql;
/** A connection pool or a transaction: the store's query functions take either. */
export type Queryable = postgres.Sql | postgres.TransactionSql;

// postgres.js takes a socket factory but does not declare it in its types.
type Settings = postgres.Options<Record<string, never>> & {
  socket: (target: SocketTarget) => Promise<unknown>;
};

const SETTINGS: Settings = {
  connect_timeout: 10,
  onnotice: () => {},
  // numeric and int8 stay strings: amounts are exact and block numbers fit in JS numbers.
  types: {},
  socket: openNoDelaySocket,
};

/**
 * How the connections reach PostgreSQL: directly or through a session pooler (`none`), or through
 * a transaction pooler such as PgBouncer with `pool_mode = transaction`, which hands each
 * transaction whichever server connection is free. Through one, nothing may outlive a
 * transaction: no named prepared statement, no setting sent at connection start.
 */
export type DatabasePooler = "none" | "transaction";

interface ClientFactory {
  open: (extra: postgres.Options<Record<string, never>>) => Sql;
  pooler: DatabasePooler;
}

/**
 * How to open more clients to the server a pool talks to. Kept beside the pool rather than passed
 * around with it: a write session needs a client of its own, and every pool is made here.
 */
const clientFactories = new WeakMap<Sql, ClientFactory>();

export interface PoolOptions {
  /** Most connections open at once (default 10). */
  max?: number;
  /** Set on every connection: the server cancels a statement running longer (SQLSTATE 57014). */
  statementTimeoutMs?: number;
  /** What the connections show as in `pg_stat_activity`: which part of Mintlens holds them. */
  applicationName?: string;
}

function poolSettings(options: PoolOptions, pooler: DatabasePooler): postgres.Options<Record<string, never>> {
  const connection: Record<string, string> = {};
  // A transaction pooler refuses a setting it does not know at connection start, or drops it
  // unsaid (`ignore_startup_parameters`): the timeout is kept by this process instead.
  if (options.statementTimeoutMs !== undefined && pooler === "none")
    connection.statement_timeout = String(options.statementTimeoutMs);
  // PgBouncer keeps application_name for each client and sets it on the server connection it lends.
  if (options.applicationName !== undefined) connection.application_name = options.applicationName;
  // Unnamed statements only: a named one would exist on one server connection and be looked for
  // on another. Each statement with parameters then costs one more round trip (to describe it).
  return { max: options.max ?? 10, connection, ...(pooler === "transaction" ? { prepare: false } : {}) };
}

/** The pool's statement timeout, kept by this process when the server cannot be told it. */
function withTimeout(sql: Sql, options: PoolOptions, pooler: DatabasePooler): Sql {
  const ms = options.statementTimeoutMs;
  return pooler === "transaction" && ms !== undefined && ms > 0 ? withStatementDeadline(sql, ms) : sql;
}

/** A new pool to the same server as `sql`, apart from it: one part of a process cannot take another's connections. */
export function openPoolLike(sql: Sql, options: PoolOptions): Sql {
  const pooler = databasePooler(sql);
  return withTimeout(openClientLike(sql, poolSettings(options, pooler)), options, pooler);
}

/** How `sql` reaches the server, as it was opened by `connectDatabase`. */
export function databasePooler(sql: Sql): DatabasePooler {
  return clientFactories.get(sql)?.pooler ?? "none";
}

/** Attempts at the first query when the server ends the session (a restart, a failover). */
const START_ATTEMPTS = 5;

/**
 * Opens a pool and proves the server answers, so that a wrong URL fails at start with one line.
 * A server that answers but ends the session (shutting down, starting up, terminating sessions)
 * is asked again for a few seconds; a refused connection or a refused login fails at once.
 */
export async function connectDatabase(
  url: string,
  options: PoolOptions & { pooler?: DatabasePooler } = {},
): Promise<Sql> {
  const pooler = options.pooler ?? "none";
  const sql = withTimeout(postgres(url, { ...SETTINGS, ...poolSettings(options, pooler) }), options, pooler);
  const unpooled = pooler === "transaction" ? { prepare: false } : {};
  const open = (extra: postgres.Options<Record<string, never>>) =>
    postgres(url, { ...SETTINGS, ...unpooled, ...extra });
  clientFactories.set(sql, { open, pooler });
  for (let attempt = 1; ; attempt++) {
    try {
      const [row] = await sql<
        { version: number }[]
      >`SELECT current_setting('server_version_num')::int AS version`;
      if (!row || row.version < 150000) {
        throw new Error(`PostgreSQL 15 or newer is required, the server is ${row?.version ?? "unknown"}`);
      }
      return sql;
    } catch (error) {
      if (attempt < START_ATTEMPTS && sessionWasEnded(error) && !refusedByPooler(error)) {
        await sleep(250 * 2 ** attempt);
        continue;
      }
      await sql.end({ timeout: 1 }).catch(() => {});
      throw new UserFacingError(
        `cannot use the database at ${redactUrl(url)}: ${errorMessage(error)}${poolerHint(error, pooler)}`,
      );
    }
  }
}

/** The server took the connection and then ended it, as opposed to refusing it or the login. */
function sessionWasEnded(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return connectionIsGone(error) && code !== "ECONNREFUSED" && code !== "ENOTFOUND" && code !== "EAI_AGAIN";
}

/** PgBouncer refused a setting sent at connection start: asking again would be refused again. */
function refusedByPooler(error: unknown): boolean {
  return /unsupported startup parameter/i.test(errorMessage(error));
}

/**
 * PgBouncer's answer to a setting sent at connection start that it does not pass on: the URL
 * leads to a pooler this process was not told of.
 */
function poolerHint(error: unknown, pooler: DatabasePooler): string {
  if (pooler !== "none" || !refusedByPooler(error)) return "";
  return " (the URL leads to a connection pooler: for a transaction pooler give --database-pooler transaction)";
}

/** A new client to the same server as `sql`, with its own connections. */
export function openClientLike(sql: Sql, extra: postgres.Options<Record<string, never>>): Sql {
  const factory = clientFactories.get(sql);
  if (!factory)
    throw new Error("the pool was not opened by connectDatabase: no second client can be made for it");
  return factory.open(extra);
}

/** bytea in hex form without the 0x, as bulk rows carry it (see `bulk-rows.ts`). */
export function bare(hex: string): string {
  return hex.slice(2);
}
