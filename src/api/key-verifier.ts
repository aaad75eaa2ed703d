import type { Logger } from "../core/logger.ts";
import type { Queryable } from "../store/pg/database.ts";
import { readApiKeyTable, type StoredApiKey } from "../store/tables/api-keys.ts";
import { parseKey, secretMatches } from "./keys.ts";

export type KeyCheck =
  | { ok: true; userName: string; keyId: string }
  | { ok: false; reason: "missing" | "malformed" | "unknown" | "mismatch" | "revoked" };

export interface KeyVerifier {
  /**
   * Checks a presented key (the `X-API-Key` header or the `x-api-key` metadata; undefined when
   * absent). A table that cannot be read (never read yet, or not for longer than the stale limit)
   * rejects the promise: the caller answers that the service is unavailable, never that the key
   * is wrong.
   */
  verify(presented: string | undefined): Promise<KeyCheck>;
  /** Reads the table now, after any read under way: a key stored before the call is known after it. */
  refresh(): Promise<void>;
}

export interface KeyVerifierOptions {
  sql: Queryable;
  /** Where failed reads of the table are told. */
  logger?: Logger;
  /**
   * A table older than this, in ms, is read again in the background while the one held answers;
   * one older than twice this is not used until a read ends. Default 2000, so a rotation or a
   * revocation reaches every API server within 4 s plus the duration of one read.
   */
  refreshMs?: number;
  /**
   * While reads fail, the last table read keeps answering for this long after it was read, in
   * ms; after that, checks are unavailable. Default 60,000.
   */
  staleLimitMs?: number;
  /** The clock the table's age is measured on, in ms. */
  now?: () => number;
}

export const DEFAULT_REFRESH_MS = 2_000;
export const DEFAULT_STALE_LIMIT_MS = 60_000;

/** The hash compared against when a key id has no row, so that both paths do the same work. */
const DUMMY_HASH = Buffer.alloc(32);

interface Table {
  byId: ReadonlyMap<string, StoredApiKey>;
  fingerprint: string;
  /** When the read that made it started: the table is at least as new as this. */
  readAt: number;
}

/**
 * Checks API keys against `api_keys`, held whole in memory (one row per user: a small table)
 * and read again by one statement when it is older than `refreshMs`, so that a presented key
 * never costs a query: an unknown key id, however many are tried, is answered from memory. A
 * read that finds the table's fingerprint unchanged transfers no rows. Every presented secret
 * is still hashed and compared with `timingSafeEqual`; a malformed key is refused before the
 * table is consulted at all.
 */
export function createKeyVerifier(options: KeyVerifierOptions): KeyVerifier {
  const {
    sql,
    logger,
    refreshMs = DEFAULT_REFRESH_MS,
    staleLimitMs = DEFAULT_STALE_LIMIT_MS,
    now = Date.now,
  } = options;
  if (!(Number.isInteger(refreshMs) && refreshMs > 0))
    throw new RangeError("refreshMs must be a positive integer");
  if (!(Number.isInteger(staleLimitMs) && staleLimitMs >= 2 * refreshMs)) {
    throw new RangeError("staleLimitMs must be an integer of at least twice refreshMs");
  }
  const maxAgeMs = 2 * refreshMs;
  let table: Table | undefined;
  let reading: Promise<void> | undefined;
  let lastError: unknown;
  /** After a failed read, the next is not tried before this time: a database that is down is not asked per request. */
  let nextAttemptAt = Number.NEGATIVE_INFINITY;
  let failing = false;

  function read(): Promise<void> {
    reading ??= (async () => {
      const started = now();
      try {
        const read = await readApiKeyTable(sql, table?.fingerprint);
        const byId = read.rows ? new Map(read.rows.map((row) => [row.keyId, row])) : table?.byId;
        table = { byId: byId ?? new Map(), fingerprint: read.fingerprint, readAt: started };
        if (failing) logger?.info({ keys: table.byId.size }, "the API key table is read again");
        failing = false;
      } catch (error) {
        lastError = error;
        nextAttemptAt = now() + refreshMs;
        failing = true;
        const ageMs = table === undefined ? undefined : now() - table.readAt;
        logger?.warn(
          { err: error, ageMs, staleLimitMs },
          ageMs === undefined
            ? "could not read the API key table: requests with a key are unavailable"
            : ageMs < staleLimitMs
              ? "could not read the API key table: checking keys against the last one read"
              : "could not read the API key table, and the last one read is too old: requests with a key are unavailable",
        );
        throw error;
      } finally {
        reading = undefined;
      }
    })();
    return reading;
  }

  /** The table to check a key against: fresh enough, or the last one within the stale limit while reads fail. */
  async function current(): Promise<ReadonlyMap<string, StoredApiKey>> {
    const age = table === undefined ? Number.POSITIVE_INFINITY : now() - table.readAt;
    if (age >= refreshMs && now() >= nextAttemptAt) read().catch(() => {});
    if (table !== undefined && age < maxAgeMs) return table.byId;
    if (reading !== undefined) await reading.catch(() => {});
    const held = table as Table | undefined;
    if (held !== undefined && now() - held.readAt < (failing ? staleLimitMs : maxAgeMs)) return held.byId;
    throw lastError ?? new Error("the API key table could not be read");
  }

  return {
    async verify(presented) {
      if (presented === undefined || presented === "") return { ok: false, reason: "missing" };
      const parsed = parseKey(presented);
      if (!parsed) return { ok: false, reason: "malformed" };
      const row = (await current()).get(parsed.keyId);
      if (row === undefined) {
        secretMatches(parsed.secret, DUMMY_HASH);
        return { ok: false, reason: "unknown" };
      }
      if (!secretMatches(parsed.secret, row.keyHash)) return { ok: false, reason: "mismatch" };
      if (row.revokedAt !== null) return { ok: false, reason: "revoked" };
      return { ok: true, userName: row.userName, keyId: row.keyId };
    },
    async refresh() {
      if (reading !== undefined) await reading.catch(() => {});
      await read();
    },
  };
}
