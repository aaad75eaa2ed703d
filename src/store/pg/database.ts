import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import { errorMessage, UserFacingError } from "../../core/errors.ts";
import { redactUrl } from "../../core/url.ts";
import { connectionIsGone } from "./errors.ts";
import { openNoDelaySocket, type SocketTarget } from "./socket.ts";

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
 * How to open more clients to the server a pool talks to. Kept beside the pool rather than passed
 * around with it: a write session needs a client of its own, and every pool is made here.
 */
const clientFactories = new WeakMap<Sql, (extra: postgres.Options<Record<string, never>>) => Sql>();

export interface PoolOptions {
  /** Most connections open at once (default 10). */
  max?: number;
  /** Set on every connection: the server cancels a statement running longer (SQLSTATE 57014). */
  statementTimeoutMs?: number;
  /** What the connections show as in `pg_stat_activity`: which part of Mintlens holds them. */
  applicationName?: string;
}

function poolSettings(options: PoolOptions): postgres.Options<Record<string, never>> {
  const connection: Record<string, string> = {};
  if (options.statementTimeoutMs !== undefined)
    connection.statement_timeout = String(options.statementTimeoutMs);
  if (options.applicationName !== undefined) connection.application_name = options.applicationName;
  return { max: options.max ?? 10, connection };
}

/** A new pool to the same server as `sql`, apart from it: one part of a process cannot take another's connections. */
export function openPoolLike(sql: Sql, options: PoolOptions): Sql {
  return openClientLike(sql, poolSettings(options));
}

/** Attempts at the first query when the server ends the session (a restart, a failover). */
const START_ATTEMPTS = 5;

/**
 * Opens a pool and proves the server answers, so that a wrong URL fails at start with one line.
 * A server that answers but ends the session (shutting down, starting up, terminating sessions)
 * is asked again for a few seconds; a refused connection or a refused login fails at once.
 */
export async function connectDatabase(url: string, options: PoolOptions = {}): Promise<Sql> {
  const sql = postgres(url, { ...SETTINGS, ...poolSettings(options) });
  clientFactories.set(sql, (extra) => postgres(url, { ...SETTINGS, ...extra }));
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
      if (attempt < START_ATTEMPTS && sessionWasEnded(error)) {
        await sleep(250 * 2 ** attempt);
        continue;
      }
      await sql.end({ timeout: 1 }).catch(() => {});
      throw new UserFacingError(`cannot use the database at ${redactUrl(url)}: ${errorMessage(error)}`);
    }
  }
}

/** The server took the connection and then ended it, as opposed to refusing it or the login. */
function sessionWasEnded(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return connectionIsGone(error) && code !== "ECONNREFUSED" && code !== "ENOTFOUND" && code !== "EAI_AGAIN";
}

/** A new client to the same server as `sql`, with its own connections. */
export function openClientLike(sql: Sql, extra: postgres.Options<Record<string, never>>): Sql {
  const open = clientFactories.get(sql);
  if (!open)
    throw new Error("the pool was not opened by connectDatabase: no second client can be made for it");
  return open(extra);
}

/** bytea in hex form without the 0x, as bulk rows carry it (see `bulk-rows.ts`). */
export function bare(hex: string): string {
  return hex.slice(2);
}

export function toHex(bytes: Uint8Array): `0x${string}` {
  return `0x${Buffer.from(bytes).toString("hex")}`;
}
