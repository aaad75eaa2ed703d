/**
 * The metadata queue and what the worker stores. Newly minted tokens wait in block ranges until a
 * worker whose queue runs low moves one range's tokens into the queue. A worker takes due rows with
 * `FOR UPDATE SKIP LOCKED` (many workers never take the same token) and leases them by moving
 * `due_at` ahead; a token's outcome and its leaving the queue are one statement.
 */
import type postgres from "postgres";
import type { Address } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import { bulkRows, joinColumn } from "../pg/bulk-rows.ts";
import { bare, openClientLike, type Queryable, type Sql, toHex } from "../pg/database.ts";

/**
 * The client the metadata worker takes and stores tokens through, a pool of its own: commits do
 * not wait for the WAL to reach disk, as the indexer's batches do not. An outcome lost in a server
 * crash leaves its token queued, to be fetched again; the wait saved is most of what storing an
 * outcome costs.
 */
export function openMetadataClient(pool: Sql, connections: number): Sql {
  return openClientLike(pool, {
    max: connections,
    connection: { synchronous_commit: "off", application_name: "mintlens-metadata" },
  });
}

export interface QueuedToken {
  contract: Address;
  tokenId: bigint;
  /** Failed attempts so far, of every kind. */
  attempts: number;
  /** Of those, the refusals (a 404, a refused address, a body too large, a value the store refused). */
  refusals: number;
  types: ContractType[];
  /**
   * The take: the row's `due_at` as leased, in whole microseconds (the stored precision, which a
   * `Date` would cut to milliseconds). A token queued again while it is
   * worked on (an EIP-4906 update, a refresh) gets a new `due_at`; the outcome of the older take
   * is still stored, but leaves the row due for the newer one.
   */
  lease: string;
}

/** How a take shares the worker's room among contracts. */
export interface TakeShares {
  /** Tokens of one contract the worker may have under way at once. */
  perContract: number;
  /**
   * Contracts whose room is less than `perContract`: those with tokens under way (`held`), and
   * those whose host has few free slots. A contract not named has `perContract` room and none held.
   */
  limited?: readonly { contract: Address; room: number; held: number }[];
  /**
   * Where the walk over the queued contracts starts: after this contract (from the first when
   * absent). A take visits at most `TAKE_WINDOW` contracts, so its cost does not grow with how
   * many contracts are queued; `onWalked` is told where the next take should start (undefined
   * once the walk reached the last contract, to start again from the first).
   */
  after?: Address | undefined;
  onWalked?: (next: Address | undefined) => void;
}

/** Queued contracts one take visits at most: a spam run of many contracts costs each take this many probes. */
export const TAKE_WINDOW = 256;

/**
 * Up to `limit` due tokens of a chain, leased for `leaseSeconds`, taken round-robin across
 * contracts: each contract's oldest due token first (the contract whose token waited longest
 * first), then each one's second, and so on, a contract counting the tokens it has under way; no
 * contract more than its room. Each contract's due tokens are read in due order from the index on
 * (chain_id, contract, due_at), and the contracts are found by skipping from one to the next in
 * it, so a contract with a million queued tokens costs a few rows, not a million.
 */
export async function takeDueTokens(
  sql: Queryable,
  chainId: number,
  limit: number,
  leaseSeconds: number,
  shares: TakeShares = { perContract: limit },
): Promise<QueuedToken[]> {
  const limited = shares.limited ?? [];
  const after = shares.after === undefined ? Buffer.alloc(0) : Buffer.from(bare(shares.after), "hex");
  const rows = await sql<
    {
      contract: Uint8Array | null;
      token_id: string;
      attempts: number;
      refusals: number;
      types: ContractType[] | null;
      lease: string | null;
      walked_last: Uint8Array | null;
      walked: number;
    }[]
  >`
    WITH RECURSIVE queued_contracts AS (
      (SELECT contract, 1 AS visit FROM metadata_queue
       WHERE chain_id = ${chainId} AND contract > ${after} ORDER BY contract LIMIT 1)
      UNION ALL
      SELECT (SELECT q.contract FROM metadata_queue q
              WHERE q.chain_id = ${chainId} AND q.contract > s.contract ORDER BY q.contract LIMIT 1),
             s.visit + 1
      FROM queued_contracts s WHERE s.contract IS NOT NULL AND s.visit < ${TAKE_WINDOW}),
    walked AS (
      -- The walk goes up the contracts: its last visit is the highest (bytea has no max() before PostgreSQL 16).
      SELECT (SELECT contract FROM queued_contracts WHERE contract IS NOT NULL ORDER BY visit DESC LIMIT 1) AS last,
             (SELECT count(contract)::int FROM queued_contracts) AS visited),
    limited AS (
      SELECT decode(u.c, 'hex') AS contract, u.r::int AS room, u.h::int AS held
      FROM ${bulkRows(sql, {
        c: joinColumn(limited.map((l) => bare(l.contract))),
        r: joinColumn(limited.map((l) => Math.max(0, l.room))),
        h: joinColumn(limited.map((l) => l.held)),
      })}),
    candidates AS (
      SELECT d.contract, d.token_id, d.due_at,
             coalesce(l.held, 0) + row_number() OVER (PARTITION BY d.contract ORDER BY d.due_at) AS turn
      FROM queued_contracts s
      LEFT JOIN limited l ON l.contract = s.contract
      CROSS JOIN LATERAL (
        SELECT q.contract, q.token_id, q.due_at FROM metadata_queue q
        WHERE q.chain_id = ${chainId} AND q.contract = s.contract AND q.due_at <= now()
        ORDER BY q.due_at
        LIMIT least(${limit}::int, coalesce(l.room, ${shares.perContract}::int))) d
      WHERE s.contract IS NOT NULL),
    picked AS (
      SELECT contract, token_id FROM candidates ORDER BY turn, due_at LIMIT ${limit}),
    due AS (
      SELECT q.contract, q.token_id FROM metadata_queue q JOIN picked p USING (contract, token_id)
      WHERE q.chain_id = ${chainId} AND q.due_at <= now()
      FOR UPDATE OF q SKIP LOCKED),
    leased AS (
      UPDATE metadata_queue q SET due_at = now() + make_interval(secs => ${leaseSeconds})
      FROM due
      WHERE q.chain_id = ${chainId} AND q.contract = due.contract AND q.token_id = due.token_id
      RETURNING q.contract, q.token_id::text, q.attempts, q.refusals,
                (extract(epoch FROM q.due_at) * 1000000)::bigint::text AS lease,
                (SELECT c.types FROM contracts c WHERE c.chain_id = ${chainId} AND c.address = q.contract) AS types)
    -- One row even when nothing is due, to tell where the walk ended.
    SELECT l.*, w.last AS walked_last, w.visited AS walked FROM walked w LEFT JOIN leased l ON true`;
  const walk = rows[0];
  shares.onWalked?.(
    walk !== undefined && walk.walked >= TAKE_WINDOW && walk.walked_last !== null
      ? (toHex(walk.walked_last) as Address)
      : undefined,
  );
  return rows.flatMap((r) =>
    r.contract === null
      ? []
      : [
          {
            contract: toHex(r.contract) as Address,
            tokenId: BigInt(r.token_id),
            attempts: r.attempts,
            refusals: r.refusals,
            types: r.types ?? [],
            lease: r.lease as string,
          },
        ],
  );
}

/**
 * Moves the oldest recorded range of newly minted tokens into the queue, due now, and forgets the
 * range, in one statement: a crash leaves the range or its queued tokens, never neither. Tokens
 * already fetched (an EIP-4906 update or a refresh got there first) or already queued are left as
 * they are, so a minted token is fetched once. A range another worker is moving, or a rollback is
 * cutting, is skipped. Returns how many ranges (0 or 1) and tokens were moved.
 */
export async function pullMintRange(
  sql: Queryable,
  chainId: number,
): Promise<{ ranges: number; tokens: number }> {
  const [row] = await sql<{ ranges: number; tokens: number }[]>`
    WITH range AS (
      DELETE FROM metadata_mint_ranges
      WHERE chain_id = ${chainId} AND first_block = (
        SELECT first_block FROM metadata_mint_ranges WHERE chain_id = ${chainId}
        ORDER BY first_block LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING first_block, last_block),
    queued AS (
      INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
      SELECT t.chain_id, t.contract, t.token_id, 'mint'
      FROM range JOIN tokens t ON t.chain_id = ${chainId} AND t.block_number BETWEEN range.first_block AND range.last_block
      WHERE NOT EXISTS (SELECT 1 FROM token_metadata m
                        WHERE m.chain_id = ${chainId} AND m.contract = t.contract AND m.token_id = t.token_id)
      ON CONFLICT (chain_id, contract, token_id) DO NOTHING
      RETURNING 1)
    SELECT (SELECT count(*) FROM range)::int AS ranges, (SELECT count(*) FROM queued)::int AS tokens`;
  return { ranges: row?.ranges ?? 0, tokens: row?.tokens ?? 0 };
}

/** A normalised attribute, stored as a JSON object with these keys. */
export interface StoredAttribute {
  traitType: string;
  value: string;
  displayType: string;
}

export interface MetadataOutcome {
  status: "ok" | "none" | "failed";
  error: string;
  tokenUri: string;
  uri: string;
  mimeType: string;
  /** The document as text; null when none is kept (nothing fetched, media, binary, refused). */
  raw: string | null;
  name: string;
  description: string;
  imageUriOriginal: string;
  imageUri: string;
  imageMimeType: string;
  animationUrl: string;
  externalUrl: string;
  attributes: StoredAttribute[];
}

/** An outcome with nothing found: the base the worker's outcomes are made from. */
export const EMPTY_OUTCOME: MetadataOutcome = {
  status: "none",
  error: "",
  tokenUri: "",
  uri: "",
  mimeType: "",
  raw: null,
  name: "",
  description: "",
  imageUriOriginal: "",
  imageUri: "",
  imageMimeType: "",
  animationUrl: "",
  externalUrl: "",
  attributes: [],
};

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text PostgreSQL takes: no NUL (text refuses it), no lone surrogate (jsonb refuses its escape). */
const storable = (text: string, nul = "") => text.replaceAll("\0", nul).replace(LONE_SURROGATE, "\uFFFD");

/**
 * An outcome every column takes, whatever its strings hold: NULs are dropped (in the raw
 * document they become U+FFFD, keeping their place), lone surrogates become U+FFFD. The worker
 * hands over clean values; this is the store's own guarantee that no outcome is refused.
 */
function storableOutcome(o: MetadataOutcome): MetadataOutcome {
  return {
    status: o.status,
    error: storable(o.error),
    tokenUri: storable(o.tokenUri),
    uri: storable(o.uri),
    mimeType: storable(o.mimeType),
    raw: o.raw === null ? null : storable(o.raw, "\uFFFD"),
    name: storable(o.name),
    description: storable(o.description),
    imageUriOriginal: storable(o.imageUriOriginal),
    imageUri: storable(o.imageUri),
    imageMimeType: storable(o.imageMimeType),
    animationUrl: storable(o.animationUrl),
    externalUrl: storable(o.externalUrl),
    attributes: o.attributes.map((a) => ({
      traitType: storable(a.traitType),
      value: storable(a.value),
      displayType: storable(a.displayType),
    })),
  };
}

/**
 * Stores a token's outcome and takes it off the queue (or leaves it due later). A failure never
 * replaces a document fetched before, and an image that could not be cached this time never
 * replaces the copy cached before of the same image. Returns whether the outcome was stored.
 *
 * Stored only while the token is queued, its row locked first: a reorganisation that forgot the
 * token took it off the queue (and waits here for an outcome being stored to commit before it
 * forgets that too). The row leaves the queue, or is pushed back, only if it is still this take's:
 * queued again meanwhile, it stays due for the newer take.
 */
export async function storeOutcome(
  sql: Queryable,
  chainId: number,
  token: Pick<QueuedToken, "contract" | "tokenId" | "lease">,
  outcome: MetadataOutcome,
  /**
   * Keep the token queued, due again after this long, the attempt counted (and, for a `failed`
   * outcome, the refusal); without it the token leaves the queue.
   */
  retryAfterSeconds?: number,
): Promise<boolean> {
  const o = storableOutcome(outcome);
  const address = Buffer.from(bare(token.contract), "hex");
  const id = token.tokenId.toString();
  // `queued` is read by the statement's own change (the init plan of a join), so the row is locked
  // before anything is changed, whatever order the sub-statements run in.
  const rows = await sql<{ stored: boolean }[]>`
    WITH queued AS (
      SELECT (extract(epoch FROM due_at) * 1000000)::bigint::text AS lease FROM metadata_queue
      WHERE chain_id = ${chainId} AND contract = ${address} AND token_id = ${id}::numeric
      FOR UPDATE),
    stored AS (
      INSERT INTO token_metadata (chain_id, contract, token_id, status, error, token_uri, uri, mime_type, raw, fetched_at,
                                  name, description, image_uri_original, image_uri, image_mime_type, animation_url,
                                  external_url, attributes)
      SELECT ${chainId}, ${address}, ${id}::numeric, ${o.status}, ${o.error}, ${o.tokenUri}, ${o.uri}, ${o.mimeType},
             ${o.raw}, clock_timestamp(), ${o.name}, ${o.description}, ${o.imageUriOriginal}, ${o.imageUri},
             ${o.imageMimeType}, ${o.animationUrl}, ${o.externalUrl},
             ${sql.json(o.attributes as unknown as postgres.JSONValue)}
      FROM queued
      ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET
        status = excluded.status, error = excluded.error, token_uri = excluded.token_uri, uri = excluded.uri,
        mime_type = excluded.mime_type, raw = excluded.raw, fetched_at = excluded.fetched_at, name = excluded.name,
        description = excluded.description, image_uri_original = excluded.image_uri_original,
        image_uri = CASE WHEN excluded.image_uri = '' AND excluded.image_uri_original = token_metadata.image_uri_original
                         THEN token_metadata.image_uri ELSE excluded.image_uri END,
        image_mime_type = CASE WHEN excluded.image_uri = '' AND excluded.image_uri_original = token_metadata.image_uri_original
                               THEN token_metadata.image_mime_type ELSE excluded.image_mime_type END,
        animation_url = excluded.animation_url, external_url = excluded.external_url, attributes = excluded.attributes
      WHERE token_metadata.status <> 'ok' OR excluded.status = 'ok'
      RETURNING 1),
    changed AS (
    ${
      retryAfterSeconds === undefined
        ? sql`DELETE FROM metadata_queue q USING queued
              WHERE q.chain_id = ${chainId} AND q.contract = ${address} AND q.token_id = ${id}::numeric
                AND queued.lease = ${token.lease}
              RETURNING 1`
        : sql`UPDATE metadata_queue q SET attempts = q.attempts + 1,
                refusals = q.refusals + ${o.status === "failed" ? 1 : 0}, last_error = ${o.error},
                due_at = now() + make_interval(secs => ${retryAfterSeconds})
              FROM queued
              WHERE q.chain_id = ${chainId} AND q.contract = ${address} AND q.token_id = ${id}::numeric
                AND queued.lease = ${token.lease}
              RETURNING 1`
    })
    SELECT EXISTS (SELECT 1 FROM queued) AS stored, (SELECT count(*) FROM changed) AS changed`;
  return rows[0]?.stored === true;
}

/** A temporary failure: the token comes due again after `delaySeconds`, its attempts counted (unless queued again meanwhile). */
export async function retryLater(
  sql: Queryable,
  chainId: number,
  token: Pick<QueuedToken, "contract" | "tokenId" | "lease">,
  delaySeconds: number,
  error: string,
): Promise<void> {
  await sql`
    UPDATE metadata_queue SET attempts = attempts + 1, last_error = ${error},
                              due_at = now() + make_interval(secs => ${delaySeconds})
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(token.contract), "hex")}
      AND token_id = ${token.tokenId.toString()}::numeric AND (extract(epoch FROM due_at) * 1000000)::bigint::text = ${token.lease}`;
}

/**
 * Hands a token back to the queue without working on it (its host is busy or failing): due again
 * after `delaySeconds`, no attempt counted (unless queued again meanwhile).
 */
export async function handBack(
  sql: Queryable,
  chainId: number,
  token: Pick<QueuedToken, "contract" | "tokenId" | "lease">,
  delaySeconds: number,
): Promise<void> {
  await sql`
    UPDATE metadata_queue SET due_at = now() + make_interval(secs => ${delaySeconds})
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(token.contract), "hex")}
      AND token_id = ${token.tokenId.toString()}::numeric AND (extract(epoch FROM due_at) * 1000000)::bigint::text = ${token.lease}`;
}

/**
 * Whether the store refused a value of the statement rather than failing to run it: SQLSTATE class
 * 22 (data exception: a NUL in text, an invalid escape in JSON, a number out of range) or 54
 * (program limit exceeded: a value or a row too large). Storing the same outcome again fails the
 * same way.
 */
export function storeRefusedValue(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  const { code, name } = error as { code?: unknown; name?: unknown };
  return name === "PostgresError" && typeof code === "string" && /^(22|54)/.test(code);
}

/**
 * Queues tokens again (an operator's refresh), due now; returns how many were. Only tokens the
 * store knows (seen minted, or held) are queued: another id has no metadata the API would show.
 */
export async function queueTokens(
  sql: Queryable,
  chainId: number,
  tokens: readonly { contract: Address; tokenId: bigint }[],
  reason: string,
): Promise<number> {
  if (tokens.length === 0) return 0;
  const rows = await sql`
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT DISTINCT ${chainId}::bigint, decode(c, 'hex'), t::numeric, ${reason}
    FROM ${bulkRows(sql, {
      c: joinColumn(tokens.map((t) => bare(t.contract))),
      t: joinColumn(tokens.map((t) => t.tokenId)),
    })}
    WHERE EXISTS (SELECT 1 FROM tokens k
                  WHERE k.chain_id = ${chainId} AND k.contract = decode(u.c, 'hex') AND k.token_id = u.t::numeric)
       OR EXISTS (SELECT 1 FROM token_balances b
                  WHERE b.chain_id = ${chainId} AND b.contract = decode(u.c, 'hex') AND b.token_id = u.t::numeric
                    AND b.amount > 0)
    ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET due_at = now(), attempts = 0, refusals = 0,
                                                          reason = excluded.reason
    RETURNING 1`;
  return rows.length;
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
    ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET due_at = now(), attempts = 0, refusals = 0,
                                                          reason = excluded.reason
    RETURNING 1`;
  return rows.length;
}
