/**
 * Rows of a batch sent as a few parameters and turned back into rows by the server: the one way the
 * store writes many rows at once.
 *
 *   bulkRows(sql, { c: contracts, b: blocks, name: freeText(names) })
 *     → ROWS FROM (string_to_table($1, ','), string_to_table($2, ','), unnest($3::text[])) AS u(c, b, name)
 *
 * A column of hex or decimal values (which cannot hold a comma) travels as one comma-joined text:
 * postgres.js escapes every element of an array parameter, which on batches of a hundred thousand
 * rows costs more than the statement. Free text (names, symbols) travels as a text array; JSON
 * documents travel as one JSON array, a single text postgres.js sends untouched, and arrive as
 * `json` (no element escaped twice, as a text array of documents would be). Every
 * column reaches SQL as text, to be cast where it is used; a null, and an empty string, arrive as
 * NULL or '' (`string_to_table` gives no row for a column of one empty value, which `ROWS FROM`
 * pads with NULL): read nullable columns through `NULLIF(x, '')`, and empty-able ones through
 * `COALESCE(x, '')`.
 *
 * Rows inserted as they are split with `string_to_table`, which never builds the arrays (a fifth
 * cheaper for the server). Rows joined to a table (`joined`) split with `unnest(string_to_array(…))`:
 * the planner estimates the two differently, and the balance MERGE measured a third slower with
 * `string_to_table`.
 */
import type postgres from "postgres";
import type { Queryable } from "./database.ts";

/** A value of a comma-joined column: hex without 0x, decimal numbers; null for NULL. */
export type Cell = string | number | bigint | null;

const FREE_TEXT = Symbol("free text");

/** Values that may hold any character: sent as a text array rather than one joined text. */
export interface FreeText {
  readonly [FREE_TEXT]: readonly string[];
}

const JSON_ROWS = Symbol("json rows");

/** JSON documents, one per row: sent as one JSON array, arriving as `json`. */
export interface JsonRows {
  readonly [JSON_ROWS]: string;
}

export function jsonRows(values: readonly unknown[]): JsonRows {
  return { [JSON_ROWS]: JSON.stringify(values) };
}

export function freeText(values: readonly string[]): FreeText {
  return { [FREE_TEXT]: values };
}

/**
 * One column as its comma-joined text (a null is the empty value): made while the batch is
 * prepared, so that building the statement costs nothing when the write starts.
 */
export function joinColumn(values: readonly Cell[]): string {
  return values.map((v) => (v === null ? "" : v)).join(",");
}

export function bulkRows(
  sql: Queryable,
  /** Column names (plain identifiers) and their values (`joinColumn`'s text, free text or JSON rows), all as long. */
  columns: Readonly<Record<string, string | FreeText | JsonRows>>,
  options: { joined?: boolean; alias?: string } = {},
): postgres.PendingQuery<postgres.Row[]> {
  const names = Object.keys(columns);
  const parts = names.map((name, i) => {
    const column = columns[name] as string | FreeText | JsonRows;
    const sep = i === 0 ? sql`` : sql`,`;
    if (typeof column !== "string") {
      if (JSON_ROWS in column) return sql`${sep} json_array_elements((${column[JSON_ROWS]}::text)::json)`;
      return sql`${sep} unnest(${column[FREE_TEXT] as string[]}::text[])`;
    }
    const text = column;
    return options.joined
      ? sql`${sep} unnest(string_to_array(${text}, ','))`
      : sql`${sep} string_to_table(${text}, ',')`;
  });
  // The names are the caller's own identifiers, never data.
  return sql`ROWS FROM (${parts}) AS ${sql.unsafe(options.alias ?? "u")}(${sql.unsafe(names.join(", "))})`;
}
