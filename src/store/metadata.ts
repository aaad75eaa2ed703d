/**
 * The metadata queue and what the worker stores. A worker takes due rows with
 * `FOR UPDATE SKIP LOCKED` (many workers never take the same token) and leases them by moving
 * `due_at` ahead; a token's outcome and its leaving the queue are one statement.
 */
import type { Address } from "../core/hex.ts";
import type { ContractType } from "../core/types.ts";
import { bare, type Queryable, toHex } from "./database.ts";

export interface QueuedToken {
  contract: Address;
  tokenId: bigint;
  attempts: number;
  types: ContractType[];
}

/** Up to `limit` due tokens of a chain, leased for `leaseSeconds`. */
export async function takeDueTokens(
  sql: Queryable,
  chainId: number,
  limit: number,
  leaseSeconds: number,
): Promise<QueuedToken[]> {
  const rows = await sql<
    { contract: Uint8Array; token_id: string; attempts: number; types: ContractType[] | null }[]
  >`
    WITH due AS (
      SELECT contract, token_id FROM metadata_queue
      WHERE chain_id = ${chainId} AND due_at <= now()
      ORDER BY due_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    UPDATE metadata_queue q SET due_at = now() + make_interval(secs => ${leaseSeconds})
    FROM due
    WHERE q.chain_id = ${chainId} AND q.contract = due.contract AND q.token_id = due.token_id
    RETURNING q.contract, q.token_id::text, q.attempts,
              (SELECT c.types FROM contracts c WHERE c.chain_id = ${chainId} AND c.address = q.contract) AS types`;
  return rows.map((r) => ({
    contract: toHex(r.contract) as Address,
    tokenId: BigInt(r.token_id),
    attempts: r.attempts,
    types: r.types ?? [],
  }));
}

export interface MetadataOutcome {
  status: "ok" | "none" | "failed";
  error: string;
  tokenUri: string;
  uri: string;
  mimeType: string;
  raw: string | null;
  name: string;
  description: string;
  imageUriOriginal: string;
  imageUri: string;
  imageMimeType: string;
  animationUrl: string;
  externalUrl: string;
  attributes: unknown[];
}

/**
 * Stores a token's outcome and takes it off the queue (or leaves it due later). A failure never
 * replaces a document fetched before: the token keeps its last good document.
 */
export async function storeOutcome(
  sql: Queryable,
  chainId: number,
  contract: Address,
  tokenId: bigint,
  o: MetadataOutcome,
  /** Keep the token queued, due again after this long (a permanent failure is tried again rarely). */
  retryAfterSeconds?: number,
): Promise<void> {
  const address = Buffer.from(bare(contract), "hex");
  const id = tokenId.toString();
  // Stored only while the token is still queued, its row locked: a reorg that forgot the token took
  // it off the queue, and waits here for an outcome being stored to commit before forgetting that too.
  // The queue's own change names `queued` so the lock is taken before that change (a CTE runs when
  // first read; unread, it would run after the row it locks was already gone).
  await sql`
    WITH queued AS (
      SELECT 1 FROM metadata_queue
      WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric
      FOR UPDATE),
    stored AS (
      INSERT INTO token_metadata (chain_id, contract, token_id, status, error, token_uri, uri, mime_type, raw, fetched_at,
                                  name, description, image_uri_original, image_uri, image_mime_type, animation_url,
                                  external_url, attributes)
      SELECT ${chainId}, ${address}, ${id}::numeric, ${o.status}, ${o.error}, ${o.tokenUri}, ${o.uri}, ${o.mimeType},
             ${o.raw}, clock_timestamp(), ${o.name}, ${o.description}, ${o.imageUriOriginal}, ${o.imageUri},
             ${o.imageMimeType}, ${o.animationUrl}, ${o.externalUrl}, ${JSON.stringify(o.attributes)}::jsonb
      FROM queued
      ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET
        status = excluded.status, error = excluded.error, token_uri = excluded.token_uri, uri = excluded.uri,
        mime_type = excluded.mime_type, raw = excluded.raw, fetched_at = excluded.fetched_at, name = excluded.name,
        description = excluded.description, image_uri_original = excluded.image_uri_original,
        image_uri = excluded.image_uri, image_mime_type = excluded.image_mime_type,
        animation_url = excluded.animation_url, external_url = excluded.external_url, attributes = excluded.attributes
      WHERE token_metadata.status <> 'ok' OR excluded.status = 'ok'
      RETURNING 1)
    ${
      retryAfterSeconds === undefined
        ? sql`DELETE FROM metadata_queue WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric
              AND EXISTS (SELECT 1 FROM queued)`
        : sql`UPDATE metadata_queue SET attempts = attempts + 1, last_error = ${o.error},
                due_at = now() + make_interval(secs => ${retryAfterSeconds})
              WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric
                AND EXISTS (SELECT 1 FROM queued)`
    }`;
}

/** A temporary failure: the token comes due again after `delaySeconds`, its attempts counted. */
export async function retryLater(
  sql: Queryable,
  chainId: number,
  contract: Address,
  tokenId: bigint,
  delaySeconds: number,
  error: string,
): Promise<void> {
  await sql`
    UPDATE metadata_queue SET attempts = attempts + 1, last_error = ${error},
                              due_at = now() + make_interval(secs => ${delaySeconds})
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(contract), "hex")} AND token_id = ${tokenId.toString()}::numeric`;
}

/** Queues tokens again (an operator's refresh, a metadata-update event): due now. */
export async function queueTokens(
  sql: Queryable,
  chainId: number,
  tokens: readonly { contract: Address; tokenId: bigint }[],
  reason: string,
): Promise<void> {
  if (tokens.length === 0) return;
  await sql`
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT ${chainId}, decode(c, 'hex'), t::numeric, ${reason}
    FROM ROWS FROM (string_to_table(${tokens.map((t) => bare(t.contract)).join(",")}, ','),
                    string_to_table(${tokens.map((t) => t.tokenId.toString()).join(",")}, ',')) AS u(c, t)
    ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET due_at = now(), attempts = 0, reason = excluded.reason`;
}

/** Queues every known token of a collection again. */
export async function queueCollection(
  sql: Queryable,
  chainId: number,
  contract: Address,
  reason: string,
): Promise<number> {
  const rows = await sql`
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT chain_id, contract, token_id, ${reason} FROM tokens
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(contract), "hex")}
    ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET due_at = now(), attempts = 0, reason = excluded.reason
    RETURNING 1`;
  return rows.length;
}
