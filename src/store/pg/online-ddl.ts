/**
 * Schema changes that keep a large table open to reads and writes while they run: the steps of
 * the migrations that run outside a transaction (`pgm.noTransaction()`). Each step can be run
 * again from wherever an earlier run stopped, since such a migration is not rolled back when it
 * fails part-way.
 *
 * | step                    | lock on the table                      | readers and writers          |
 * |-------------------------|----------------------------------------|------------------------------|
 * | createIndexConcurrently | SHARE UPDATE EXCLUSIVE, for the build  | go on                        |
 * | dropIndexConcurrently   | SHARE UPDATE EXCLUSIVE                 | go on                        |
 * | swapPrimaryKey          | ACCESS EXCLUSIVE, for a catalog change | wait a moment, at most 2 s a try |
 */
import { setTimeout as sleep } from "node:timers/promises";

/** The client a migration runs its statements on: node-pg-migrate's `pgm.db`. */
export interface MigrationDb {
  query(text: string): Promise<unknown>;
  select(text: string): Promise<unknown[]>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`not a plain lower-case identifier: ${name}`);
  return name;
}

/** Whether the index exists and, if it does, whether a build finished it. */
async function indexState(db: MigrationDb, name: string): Promise<"absent" | "valid" | "invalid"> {
  const [row] = (await db.select(
    `SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass('${identifier(name)}')`,
  )) as { valid: boolean }[];
  if (row === undefined) return "absent";
  return row.valid ? "valid" : "invalid";
}

/**
 * Builds an index without blocking writes. A concurrent build that failed (a duplicate key, a
 * cancelled statement, a lost connection) leaves an INVALID index behind, which `IF NOT EXISTS`
 * would take for done: it is dropped and built again.
 *
 * @param name the index's name
 * @param definition what follows `CREATE [UNIQUE] INDEX CONCURRENTLY name ON`: `table (columns)`
 */
export async function createIndexConcurrently(
  db: MigrationDb,
  name: string,
  definition: string,
  options: { unique?: boolean; using?: "btree" | "brin" } = {},
): Promise<void> {
  const state = await indexState(db, name);
  if (state === "valid") return;
  if (state === "invalid") await dropIndexConcurrently(db, name);
  const [table, columns] = splitDefinition(definition);
  await db.query(
    `CREATE ${options.unique ? "UNIQUE " : ""}INDEX CONCURRENTLY ${identifier(name)} ON ${table}` +
      `${options.using ? ` USING ${options.using}` : ""} ${columns}`,
  );
}

function splitDefinition(definition: string): [string, string] {
  const open = definition.indexOf("(");
  if (open < 0) throw new Error(`not "table (columns)": ${definition}`);
  return [identifier(definition.slice(0, open).trim()), definition.slice(open)];
}

export async function dropIndexConcurrently(db: MigrationDb, name: string): Promise<void> {
  await db.query(`DROP INDEX CONCURRENTLY IF EXISTS ${identifier(name)}`);
}

/** The table's primary key: its constraint's name and its columns in key order. */
export async function primaryKey(
  db: MigrationDb,
  table: string,
): Promise<{ name: string; columns: string[] } | undefined> {
  const [row] = (await db.select(
    `SELECT c.conname AS name,
            array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
     FROM pg_constraint c WHERE c.conrelid = to_regclass('${identifier(table)}') AND c.contype = 'p'`,
  )) as { name: string; columns: string[] }[];
  return row;
}

/** How long one try of the swap waits for its lock before letting the queries behind it run. */
const SWAP_LOCK_TIMEOUT = "2s";
const SWAP_ATTEMPTS = 30;

/**
 * Makes a unique index built beforehand (by `createIndexConcurrently`) the table's primary key, in
 * place of the current one, which is dropped with its index. The change is to the catalog only,
 * so its ACCESS EXCLUSIVE lock is held for a moment; but while it waits for that lock, every
 * query that comes after it waits too. So each try gives up after a short `lock_timeout` and
 * tries again later, rather than queue the API and the indexer behind a long transaction.
 */
export async function swapPrimaryKey(db: MigrationDb, table: string, index: string): Promise<void> {
  const current = await primaryKey(db, table);
  const name = current?.name ?? `${table}_pkey`;
  const drop = current ? `DROP CONSTRAINT ${identifier(current.name)}, ` : "";
  for (let attempt = 1; ; attempt++) {
    await db.query("BEGIN");
    try {
      await db.query(`SET LOCAL lock_timeout = '${SWAP_LOCK_TIMEOUT}'`);
      await db.query(
        `ALTER TABLE ${identifier(table)} ${drop}ADD CONSTRAINT ${identifier(name)} PRIMARY KEY USING INDEX ${identifier(index)}`,
      );
      await db.query("COMMIT");
      return;
    } catch (error) {
      await db.query("ROLLBACK").catch(() => {});
      const lockNotAvailable = (error as { code?: unknown } | null)?.code === "55P03";
      if (!lockNotAvailable) throw error;
      if (attempt >= SWAP_ATTEMPTS) {
        throw new Error(
          `the primary key of ${table} could not be swapped: ${SWAP_ATTEMPTS} tries waited ${SWAP_LOCK_TIMEOUT} each for a lock that long transactions hold; run the migration again once they end`,
        );
      }
      await sleep(Math.min(attempt, 5) * 1000);
    }
  }
}

/**
 * Re-keys a table without holding a long lock: its new unique index is built concurrently, then
 * swapped in as the primary key. Nothing is done when the key already has these columns.
 */
export async function rekey(db: MigrationDb, table: string, columns: readonly string[]): Promise<void> {
  const current = await primaryKey(db, table);
  if (current && current.columns.join(",") === columns.join(",")) return;
  const index = `${table}_pkey_next`;
  await createIndexConcurrently(db, index, `${table} (${columns.map(identifier).join(", ")})`, {
    unique: true,
  });
  await swapPrimaryKey(db, table, index);
}
