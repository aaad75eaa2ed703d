import { LRUCache } from "lru-cache";
import type { Queryable } from "../store/pg/database.ts";
import { findApiKey, type StoredApiKey } from "../store/tables/api-keys.ts";
import { parseKey, secretMatches } from "./keys.ts";

export type KeyCheck =
  | { ok: true; userName: string; keyId: string }
  | { ok: false; reason: "missing" | "malformed" | "unknown" | "mismatch" | "revoked" };

export interface KeyVerifier {
  /**
   * Checks a presented key (the `X-API-Key` header or the `x-api-key` metadata; undefined when
   * absent). A database that cannot be reached rejects the promise: the caller answers that the
   * service is unavailable, never that the key is wrong.
   */
  verify(presented: string | undefined): Promise<KeyCheck>;
  /** Forgets every cached row. */
  clear(): void;
}

export interface KeyVerifierOptions {
  sql: Queryable;
  /**
   * How long a key's row (or its absence) is trusted once read, in ms: a rotation or revocation
   * reaches every API server within this time, plus the duration of one lookup. Default 5000.
   */
  cacheTtlMs?: number;
  /** Key ids remembered at most; the least recently used are forgotten first. Default 10,000. */
  cacheMaxEntries?: number;
  /** The clock the cache measures ages on, in ms (tests move it by hand). */
  now?: () => number;
}

export const DEFAULT_CACHE_TTL_MS = 5_000;
export const DEFAULT_CACHE_MAX_ENTRIES = 10_000;

/** The cached answer for a key id that has no row. */
const ABSENT = { absent: true } as const;
type CachedRow = StoredApiKey | typeof ABSENT;

/** The hash compared against when a key id has no row, so that both paths do the same work. */
const DUMMY_HASH = Buffer.alloc(32);

/**
 * Checks API keys against `api_keys`, remembering each key id's row for a short time so that a
 * busy API does not query the database on every request. The rows are cached, not the verdicts:
 * every presented secret is still hashed and compared with `timingSafeEqual`. Concurrent checks
 * of the same key id share one query. A malformed key is refused before any lookup.
 */
export function createKeyVerifier(options: KeyVerifierOptions): KeyVerifier {
  const { sql, cacheTtlMs = DEFAULT_CACHE_TTL_MS, cacheMaxEntries = DEFAULT_CACHE_MAX_ENTRIES } = options;
  if (!(Number.isInteger(cacheTtlMs) && cacheTtlMs > 0))
    throw new RangeError("cacheTtlMs must be a positive integer");
  if (!(Number.isInteger(cacheMaxEntries) && cacheMaxEntries > 0)) {
    throw new RangeError("cacheMaxEntries must be a positive integer");
  }
  const cache = new LRUCache<string, CachedRow>({
    max: cacheMaxEntries,
    ttl: cacheTtlMs,
    // Ages are read from the clock on every check, never from a copy kept for a millisecond.
    ttlResolution: 0,
    ...(options.now ? { perf: { now: options.now } } : {}),
    // A lookup under way whose entry a full cache forgets still answers the checks waiting on it.
    ignoreFetchAbort: true,
    fetchMethod: async (keyId) => (await findApiKey(sql, keyId)) ?? ABSENT,
  });

  return {
    async verify(presented) {
      if (presented === undefined || presented === "") return { ok: false, reason: "missing" };
      const parsed = parseKey(presented);
      if (!parsed) return { ok: false, reason: "malformed" };
      const row = await cache.fetch(parsed.keyId);
      if (row === undefined || "absent" in row) {
        secretMatches(parsed.secret, DUMMY_HASH);
        return { ok: false, reason: "unknown" };
      }
      if (!secretMatches(parsed.secret, row.keyHash)) return { ok: false, reason: "mismatch" };
      if (row.revokedAt !== null) return { ok: false, reason: "revoked" };
      return { ok: true, userName: row.userName, keyId: row.keyId };
    },
    clear() {
      cache.clear();
    },
  };
}
