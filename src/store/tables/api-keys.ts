import type { Queryable } from "../pg/database.ts";

/** What the API needs to check a presented key: its row, found by the key's id. */
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

/** The row of the key whose id is `keyId`, if any. */
export async function findApiKey(sql: Queryable, keyId: string): Promise<StoredApiKey | undefined> {
  const [row] = await sql<{ user_name: string; key_id: string; key_hash: Buffer; revoked_at: Date | null }[]>`
    SELECT user_name, key_id, key_hash, revoked_at FROM api_keys WHERE key_id = ${keyId}`;
  return row
    ? { userName: row.user_name, keyId: row.key_id, keyHash: row.key_hash, revokedAt: row.revoked_at }
    : undefined;
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
