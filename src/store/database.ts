import postgres from "postgres";
import { errorMessage, UserFacingError } from "../core/errors.ts";
import { redactUrl } from "../core/url.ts";
import { openNoDelaySocket, type SocketTarget } from "./socket.ts";

export type Sql = postgres.Sql;
/** A connection pool or a transaction: the store's query functions take either. */
export type Queryable = postgres.Sql | postgres.TransactionSql;

/** Opens a pool and proves the server answers, so that a wrong URL fails at start with one line. */
export async function connectDatabase(url: string, options: { max?: number } = {}): Promise<Sql> {
  // postgres.js takes a socket factory but does not declare it in its types.
  const settings: postgres.Options<Record<string, never>> & {
    socket: (target: SocketTarget) => Promise<unknown>;
  } = {
    max: options.max ?? 10,
    connect_timeout: 10,
    onnotice: () => {},
    // numeric and int8 stay strings: amounts are exact and block numbers fit in JS numbers.
    types: {},
    socket: openNoDelaySocket,
  };
  const sql = postgres(url, settings);
  try {
    const [row] = await sql<
      { version: number }[]
    >`SELECT current_setting('server_version_num')::int AS version`;
    if (!row || row.version < 150000) {
      throw new Error(`PostgreSQL 15 or newer is required, the server is ${row?.version ?? "unknown"}`);
    }
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw new UserFacingError(`cannot use the database at ${redactUrl(url)}: ${errorMessage(error)}`);
  }
  return sql;
}

/** bytea in hex form without the 0x, for passing arrays through unnest(text[]). */
export function bare(hex: string): string {
  return hex.slice(2);
}

export function toHex(bytes: Uint8Array): `0x${string}` {
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

/**
 * A column of a large batch as one comma-joined text parameter, split again in SQL: postgres.js
 * escapes every element of an array parameter, which on batches of a hundred thousand rows costs
 * more than the statement. Only for values that cannot hold a comma: hex and decimal numbers.
 * Plain inserts zip the columns with `ROWS FROM (string_to_table(…), …)`, which never builds the
 * arrays (a fifth cheaper for the server). Statements that join them to a table keep
 * `unnest(string_to_array(…), …)`: the planner estimates the two differently, and the balance
 * MERGE measured a third slower with `ROWS FROM`.
 */
export function column(values: readonly (string | number | bigint)[]): string {
  return values.join(",");
}
