import type { Queryable } from "../pg/database.ts";

/** What the API needs to check a presented key: its row, found by the key's id in memory. */
export interface StoredApiKey {
  userName: string;
  keyId: string;
  keyHash: Buffer;
  revokedAt: Date | null;
}

/** A row as listings show it: never the hash. */
export interface ApiKeyListing {
  userName: string;
  keyId: string;
  createdAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
}

export interface NewApiKey {
  userName: string;
  keyId: string;
  keyHash: Uint8Array;
}

/**
 * Stores the first key of a user. When the user already has a row (its key in use, or revoked)
 * nothing is written and that row is returned, so the caller can say which.
 */
export async function insertApiKey(
  sql: Queryable,
  key: NewApiKey,
): Promise<{ created: true } | { created: false; existing: ApiKeyListing }> {
  const inserted = await sql`
    INSERT INTO api_keys (user_name, key_id, key_hash)
    VALUES (${key.userName}, ${key.keyId}, ${Buffer.from(key.keyHash)})
    ON CONFLICT (user_name) DO NOTHING
    RETURNING user_name`;
  if (inserted.length > 0) return { created: true };
  const existing = await apiKeyListing(sql, key.userName);
  // Deleted in between: rows are never deleted, so this is a bug.
  if (!existing) throw new Error(`the API key of ${key.userName} vanished while it was being created`);
  return { created: false, existing };
}

/**
 * Replaces a user's key, revoked or not, and enables the user again. False when the user has no
 * row.
 */
export async function replaceApiKey(sql: Queryable, key: NewApiKey): Promise<boolean> {
  const rows = await sql`
    UPDATE api_keys
    SET key_id = ${key.keyId}, key_hash = ${Buffer.from(key.keyHash)}, rotated_at = now(), revoked_at = NULL
    WHERE user_name = ${key.userName}
    RETURNING user_name`;
  return rows.length > 0;
}

/**
 * Revokes a user's key. A user revoked already keeps the time of the first revocation. Undefined
 * when the user has no row.
 */
export async function revokeApiKey(
  sql: Queryable,
  userName: string,
): Promise<{ revokedAt: Date; already: boolean } | undefined> {
  const [row] = await sql<{ revoked_at: Date; already: boolean }[]>`
    WITH before AS (SELECT revoked_at FROM api_keys WHERE user_name = ${userName} FOR UPDATE)
    UPDATE api_keys
    SET revoked_at = coalesce(before.revoked_at, now())
    FROM before
    WHERE user_name = ${userName}
    RETURNING api_keys.revoked_at, before.revoked_at IS NOT NULL AS already`;
  return row ? { revokedAt: row.revoked_at, already: row.already } : undefined;
}

/** Every user's key, by user name, without hashes. */
export async function listApiKeys(sql: Queryable): Promise<ApiKeyListing[]> {
  const rows = await sql<ListingRow[]>`
    SELECT user_name, key_id, created_at, rotated_at, revoked_at FROM api_keys ORDER BY user_name`;
  return rows.map(toListing);
}

export async function apiKeyListing(sql: Queryable, userName: string): Promise<ApiKeyListing | undefined> {
  const [row] = await sql<ListingRow[]>`
    SELECT user_name, key_id, created_at, rotated_at, revoked_at FROM api_keys WHERE user_name = ${userName}`;
  return row ? toListing(row) : undefined;
}

/**
 * What the table held when read: its fingerprint, and its rows unless the fingerprint is
 * `unchangedSince` (the caller's rows are then still the table's).
 */
export interface ApiKeyTable {
  fingerprint: string;
  rows: StoredApiKey[] | undefined;
}

/**
 * Every key's row, or only the table's fingerprint when it is still `unchangedSince`: one
 * statement, so the fingerprint and the rows are of one snapshot. The fingerprint digests every
 * column a key check reads (a rotation changes the key id and hash, a revocation the revocation
 * time), so equal fingerprints mean the same rows, whatever order transactions committed in.
 */
export async function readApiKeyTable(sql: Queryable, unchangedSince?: string): Promise<ApiKeyTable> {
  const rows = await sql<
    {
      fingerprint: string;
      user_name: string | null;
      key_id: string | null;
      key_hash: Buffer | null;
      revoked_at: Date | null;
    }[]
  >`
    WITH state AS (
      SELECT md5(coalesce(string_agg(
        key_id || ':' || user_name || ':' || encode(key_hash, 'hex') || ':'
          || coalesce(extract(epoch FROM revoked_at)::text, '-'),
        ',' ORDER BY key_id), '')) AS fingerprint
      FROM api_keys)
    SELECT state.fingerprint, k.user_name, k.key_id, k.key_hash, k.revoked_at
    FROM state LEFT JOIN api_keys k ON state.fingerprint IS DISTINCT FROM ${unchangedSince ?? null}::text`;
  const fingerprint = rows[0]?.fingerprint ?? "";
  if (fingerprint === unchangedSince) return { fingerprint, rows: undefined };
  const keys: StoredApiKey[] = [];
  for (const row of rows) {
    // The one row of an empty table carries the fingerprint alone.
    if (row.key_id === null || row.user_name === null || row.key_hash === null) continue;
    keys.push({
      userName: row.user_name,
      keyId: row.key_id,
      keyHash: row.key_hash,
      revokedAt: row.revoked_at,
    });
  }
  return { fingerprint, rows: keys };
}

interface ListingRow {
  user_name: string;
  key_id: string;
  created_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
}

function toListing(row: ListingRow): ApiKeyListing {
  return {
    userName: row.user_name,
    keyId: row.key_id,
    createdAt: row.created_at,
    rotatedAt: row.rotated_at,
    revokedAt: row.revoked_at,
  };
}
