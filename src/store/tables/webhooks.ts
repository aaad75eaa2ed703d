/**
 * Webhook subscriptions and their delivery log (migration 0029). The command line adds, lists,
 * removes and resumes subscriptions; the deliverer beside each chain's indexer reads the active
 * ones and records each attempt. Every write of the deliverer names the cursor it read, so a
 * subscription removed or resumed meanwhile is never written over with what it no longer is.
 */
import type { Address } from "../../core/hex.ts";
import type { StreamEventKind } from "../../core/stream-events.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

export type WebhookState = "active" | "paused";

/** A batch recorded before it is first sent: what every retry sends again. */
export interface WebhookBatch {
  /** Cursors of the batch's first and last events: its idempotency key. */
  first: bigint;
  last: bigint;
  /** The cursor the subscription moves to once the batch is delivered. */
  next: bigint;
}

/** A subscription as the deliverer needs it, secret included. */
export interface Webhook {
  id: string;
  chainId: number;
  url: string;
  secret: string;
  kinds: StreamEventKind[];
  contracts: Address[];
  addresses: Address[];
  confirmations: number | undefined;
  /** Leave out the events of collections judged spam when a batch is read. */
  excludeSpam: boolean;
  cursor: bigint;
  batch: WebhookBatch | undefined;
  state: WebhookState;
  failures: number;
  failingSince: Date | undefined;
  nextAttemptAt: Date;
  lastError: string | undefined;
  pausedReason: string | undefined;
  pausedAt: Date | undefined;
  createdAt: Date;
}

/** A subscription as listings show it: never the secret. */
export type WebhookListing = Omit<Webhook, "secret">;

export interface NewWebhook {
  id: string;
  chainId: number;
  url: string;
  secret: string;
  kinds: readonly StreamEventKind[];
  contracts: readonly Address[];
  addresses: readonly Address[];
  confirmations: number | undefined;
  excludeSpam?: boolean;
  cursor: bigint;
}

/** One attempt to deliver a batch. */
export interface WebhookDelivery {
  webhookId: string;
  firstCursor: bigint;
  lastCursor: bigint;
  events: number;
  attempt: number;
  /** The HTTP status answered; undefined when there was none. */
  status: number | undefined;
  error: string | undefined;
  durationMs: number;
  at: Date;
}

interface WebhookRow {
  id: string;
  chain_id: string;
  url: string;
  secret: string;
  kinds: string[];
  contracts: Uint8Array[];
  addresses: Uint8Array[];
  confirmations: number | null;
  exclude_spam: boolean;
  cursor: string;
  batch_first: string | null;
  batch_last: string | null;
  batch_next: string | null;
  state: WebhookState;
  failures: number;
  failing_since: Date | null;
  next_attempt_at: Date;
  last_error: string | null;
  paused_reason: string | null;
  paused_at: Date | null;
  created_at: Date;
}

const bareList = (addresses: readonly Address[]) => addresses.map(bare);

function webhookOf(r: WebhookRow): Webhook {
  return {
    id: r.id,
    chainId: Number(r.chain_id),
    url: r.url,
    secret: r.secret,
    kinds: r.kinds as StreamEventKind[],
    contracts: r.contracts.map(toHex),
    addresses: r.addresses.map(toHex),
    confirmations: r.confirmations ?? undefined,
    excludeSpam: r.exclude_spam,
    cursor: BigInt(r.cursor),
    batch:
      r.batch_first === null || r.batch_last === null || r.batch_next === null
        ? undefined
        : { first: BigInt(r.batch_first), last: BigInt(r.batch_last), next: BigInt(r.batch_next) },
    state: r.state,
    failures: r.failures,
    failingSince: r.failing_since ?? undefined,
    nextAttemptAt: r.next_attempt_at,
    lastError: r.last_error ?? undefined,
    pausedReason: r.paused_reason ?? undefined,
    pausedAt: r.paused_at ?? undefined,
    createdAt: r.created_at,
  };
}

export async function insertWebhook(sql: Queryable, hook: NewWebhook): Promise<void> {
  await sql`
    INSERT INTO webhooks (id, chain_id, url, secret, kinds, contracts, addresses, confirmations, exclude_spam, cursor)
    VALUES (${hook.id}, ${hook.chainId}, ${hook.url}, ${hook.secret}, ${[...hook.kinds]}::text[],
            ARRAY(SELECT decode(a, 'hex') FROM unnest(${bareList(hook.contracts)}::text[]) a),
            ARRAY(SELECT decode(a, 'hex') FROM unnest(${bareList(hook.addresses)}::text[]) a),
            ${hook.confirmations ?? null}, ${hook.excludeSpam === true}, ${hook.cursor.toString()}::bigint)`;
}

/** One subscription, secret included; undefined when there is none by that id. */
export async function getWebhook(sql: Queryable, id: string): Promise<Webhook | undefined> {
  const [row] = await sql<WebhookRow[]>`SELECT * FROM webhooks WHERE id = ${id}`;
  return row && webhookOf(row);
}

/** Every subscription of a chain, or of every chain, by chain and id, without secrets. */
export async function listWebhooks(sql: Queryable, chainId?: number): Promise<WebhookListing[]> {
  const rows = await sql<WebhookRow[]>`
    SELECT * FROM webhooks ${chainId === undefined ? sql`` : sql`WHERE chain_id = ${chainId}`}
    ORDER BY chain_id, id`;
  return rows.map((r) => {
    const { secret: _, ...listing } = webhookOf(r);
    return listing;
  });
}

/** The active subscriptions of a chain, secrets included: what the deliverer works on. */
export async function activeWebhooks(sql: Queryable, chainId: number): Promise<Webhook[]> {
  const rows = await sql<WebhookRow[]>`
    SELECT * FROM webhooks WHERE chain_id = ${chainId} AND state = 'active' ORDER BY id`;
  return rows.map(webhookOf);
}

/** How many of a chain's subscriptions are paused. */
export async function pausedWebhookCount(sql: Queryable, chainId: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM webhooks WHERE chain_id = ${chainId} AND state = 'paused'`;
  return row?.n ?? 0;
}

/** Removes a subscription and its log; false when there was none. */
export async function removeWebhook(sql: Queryable, id: string): Promise<boolean> {
  const deleted = await sql`DELETE FROM webhooks WHERE id = ${id}`;
  return deleted.count > 0;
}

/**
 * Makes a subscription active again with its failures forgotten, to be tried at once. With `cursor`
 * it starts from there and the batch it was retrying is dropped; without, it goes on from where it
 * stopped, with that batch. False when there is none by that id.
 */
export async function resumeWebhook(sql: Queryable, id: string, cursor?: bigint): Promise<boolean> {
  const from =
    cursor === undefined
      ? sql``
      : sql`, cursor = ${cursor.toString()}::bigint, batch_first = NULL, batch_last = NULL, batch_next = NULL`;
  const updated = await sql`
    UPDATE webhooks
    SET state = 'active', failures = 0, failing_since = NULL, next_attempt_at = now(),
        paused_reason = NULL, paused_at = NULL ${from}
    WHERE id = ${id}`;
  return updated.count > 0;
}

/**
 * Records the batch about to be sent for the first time. False when the subscription has moved on
 * meanwhile (removed, resumed from elsewhere, or paused).
 */
export async function recordWebhookBatch(
  sql: Queryable,
  id: string,
  cursor: bigint,
  batch: WebhookBatch,
): Promise<boolean> {
  const updated = await sql`
    UPDATE webhooks
    SET batch_first = ${batch.first.toString()}::bigint, batch_last = ${batch.last.toString()}::bigint,
        batch_next = ${batch.next.toString()}::bigint
    WHERE id = ${id} AND state = 'active' AND cursor = ${cursor.toString()}::bigint`;
  return updated.count > 0;
}

/** Moves the cursor past events no filter let through, with nothing to deliver. */
export async function skipWebhookTo(
  sql: Queryable,
  id: string,
  cursor: bigint,
  next: bigint,
): Promise<boolean> {
  const updated = await sql`
    UPDATE webhooks SET cursor = ${next.toString()}::bigint
    WHERE id = ${id} AND state = 'active' AND cursor = ${cursor.toString()}::bigint AND batch_first IS NULL`;
  return updated.count > 0;
}

/** A delivered batch: the cursor moves past it and the failures are forgotten, with the attempt logged. */
export async function webhookDelivered(
  sql: Queryable,
  id: string,
  cursor: bigint,
  next: bigint,
  delivery: WebhookDelivery,
): Promise<boolean> {
  const [row] = await sql<{ id: string }[]>`
    WITH moved AS (
      UPDATE webhooks
      SET cursor = ${next.toString()}::bigint, batch_first = NULL, batch_last = NULL, batch_next = NULL,
          failures = 0, failing_since = NULL, next_attempt_at = now(), last_error = NULL
      WHERE id = ${id} AND cursor = ${cursor.toString()}::bigint
      RETURNING id),
    logged AS (${logStatement(sql, delivery)})
    SELECT id FROM moved`;
  return row !== undefined;
}

/**
 * A failed attempt: counted, logged, and tried again at `retryAt`, or the subscription paused with
 * `pause` as the reason.
 */
export async function webhookFailed(
  sql: Queryable,
  id: string,
  cursor: bigint,
  failure: {
    error: string;
    failingSince: Date;
    retryAt: Date;
    pause: string | undefined;
  },
  delivery: WebhookDelivery,
): Promise<boolean> {
  const paused = failure.pause === undefined ? null : failure.pause;
  const [row] = await sql<{ id: string }[]>`
    WITH failed AS (
      UPDATE webhooks
      SET failures = failures + 1, failing_since = ${failure.failingSince}, last_error = ${failure.error},
          next_attempt_at = ${failure.retryAt},
          state = CASE WHEN ${paused}::text IS NULL THEN state ELSE 'paused' END,
          paused_reason = coalesce(${paused}::text, paused_reason),
          paused_at = CASE WHEN ${paused}::text IS NULL THEN paused_at ELSE now() END
      WHERE id = ${id} AND cursor = ${cursor.toString()}::bigint
      RETURNING id),
    logged AS (${logStatement(sql, delivery)})
    SELECT id FROM failed`;
  return row !== undefined;
}

/** Pauses a subscription that cannot go on by itself (its cursor pruned, its URL refused). */
export async function pauseWebhook(
  sql: Queryable,
  id: string,
  cursor: bigint,
  reason: string,
): Promise<boolean> {
  const updated = await sql`
    UPDATE webhooks SET state = 'paused', paused_reason = ${reason}, paused_at = now(), last_error = ${reason}
    WHERE id = ${id} AND state = 'active' AND cursor = ${cursor.toString()}::bigint`;
  return updated.count > 0;
}

function logStatement(sql: Queryable, d: WebhookDelivery) {
  // Inserted only when the subscription is still there: a removed one takes its log with it.
  return sql`
    INSERT INTO webhook_deliveries
      (webhook_id, first_cursor, last_cursor, events, attempt, status, error, duration_ms, at)
    SELECT ${d.webhookId}, ${d.firstCursor.toString()}::bigint, ${d.lastCursor.toString()}::bigint,
           ${d.events}, ${d.attempt}, ${d.status ?? null}::int, ${d.error ?? null}::text, ${d.durationMs}, ${d.at}
    WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ${d.webhookId})`;
}

/** A subscription's newest attempts, newest first. */
export async function webhookLog(sql: Queryable, id: string, limit: number): Promise<WebhookDelivery[]> {
  const rows = await sql<
    {
      webhook_id: string;
      first_cursor: string;
      last_cursor: string;
      events: number;
      attempt: number;
      status: number | null;
      error: string | null;
      duration_ms: number;
      at: Date;
    }[]
  >`
    SELECT webhook_id, first_cursor, last_cursor, events, attempt, status, error, duration_ms, at
    FROM webhook_deliveries WHERE webhook_id = ${id} ORDER BY id DESC LIMIT ${limit}`;
  return rows.map((r) => ({
    webhookId: r.webhook_id,
    firstCursor: BigInt(r.first_cursor),
    lastCursor: BigInt(r.last_cursor),
    events: r.events,
    attempt: r.attempt,
    status: r.status ?? undefined,
    error: r.error ?? undefined,
    durationMs: r.duration_ms,
    at: r.at,
  }));
}

/**
 * Prunes the delivery log of a chain's subscriptions: attempts older than `before`, and all but the
 * newest `keep` of each subscription. Returns the rows removed.
 */
export async function pruneWebhookLog(
  sql: Queryable,
  chainId: number,
  before: Date,
  keep: number,
): Promise<number> {
  const old = await sql`
    DELETE FROM webhook_deliveries d USING webhooks w
    WHERE d.webhook_id = w.id AND w.chain_id = ${chainId} AND d.at < ${before}`;
  const extra = await sql`
    DELETE FROM webhook_deliveries d
    USING (
      SELECT w.id, (SELECT x.id FROM webhook_deliveries x WHERE x.webhook_id = w.id
                    ORDER BY x.id DESC OFFSET ${keep} LIMIT 1) AS through
      FROM webhooks w WHERE w.chain_id = ${chainId}) cut
    WHERE d.webhook_id = cut.id AND d.id <= cut.through`;
  return old.count + extra.count;
}
