/**
 * The webhook deliverer of one chain, beside its indexer (src/cli/run-indexers.ts). Each active
 * subscription has a worker of its own that reads the stream after the subscription's cursor with
 * its filters and POSTs the events, one batch at a time, strictly in cursor order; a target that
 * fails or hangs only holds its own worker, and at most `concurrency` requests are in flight at once
 * across the chain.
 *
 * A batch is recorded before it is first sent, and a failed one is sent again, the same events under
 * the same idempotency key, until it is delivered or the subscription is paused: delivery is at
 * least once, and the batch in flight when the process stops is the only one a receiver can get
 * twice. The subscriptions are read again every `refreshMs`, so added, removed, paused and resumed
 * ones are picked up without a restart; the newest cursor is looked at every `wakeMs`, so an idle
 * worker starts within that of an event's commit.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { errorMessage } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { StreamEvent } from "../core/stream-events.ts";
import type { AllowRule } from "../metadata/ssrf.ts";
import type { Sql } from "../store/pg/database.ts";
import { MAX_STREAM_LIMIT, readStreamEvents, StreamCursorError } from "../store/read/stream-events.ts";
import {
  activeWebhooks,
  getWebhook,
  pausedWebhookCount,
  pauseWebhook,
  pruneWebhookLog,
  recordWebhookBatch,
  skipWebhookTo,
  type Webhook,
  type WebhookBatch,
  type WebhookDelivery,
  webhookDelivered,
  webhookFailed,
} from "../store/tables/webhooks.ts";
import type { WebhookMetrics } from "./metrics.ts";
import { deliveryBody, deliveryHeaders } from "./payload.ts";
import { afterFailure, DEFAULT_RETRY_POLICY, type RetryPolicy } from "./policy.ts";
import { postToTarget, type Resolver } from "./target.ts";

export interface DelivererSettings {
  /** Addresses or ranges targets may have although private (`--webhook-allow`). */
  allow: readonly AllowRule[];
  policy: RetryPolicy;
  /** One attempt's deadline, from the connection to the target's status. */
  timeoutMs: number;
  /** Requests in flight at once across the chain's subscriptions. */
  concurrency: number;
  /** Most events in one delivery. */
  batchEvents: number;
}

export const DEFAULT_DELIVERER_SETTINGS: DelivererSettings = {
  allow: [],
  policy: DEFAULT_RETRY_POLICY,
  timeoutMs: 10_000,
  concurrency: 32,
  batchEvents: 100,
};

/** How long the delivery log is kept, and how many attempts of each subscription at most. */
export const LOG_RETENTION_MS = 7 * 86_400_000;
export const LOG_KEEP_PER_SUBSCRIPTION = 1000;

export interface DelivererOptions {
  sql: Sql;
  chainId: number;
  /** The chain's name, for logs and metrics. */
  chain: string;
  logger: Logger;
  metrics?: WebhookMetrics;
  settings?: Partial<DelivererSettings>;
  resolve?: Resolver;
  /** How often the subscriptions are read again. */
  refreshMs?: number;
  /** How often the newest cursor is looked at while workers wait for events. */
  wakeMs?: number;
  /** The log's pruning interval. */
  pruneMs?: number;
  random?: () => number;
}

/** What one step of a worker came to. */
type Step = "more" | "idle" | "stop";

/** A count of slots: `take` waits for one to be free. */
function createSlots(count: number) {
  let free = count;
  const waiting: (() => void)[] = [];
  return {
    async take(): Promise<void> {
      if (free > 0) {
        free--;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    give(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

/** A promise and what resolves it. */
function signalled(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Runs until `signal` aborts; a request in flight then is abandoned, its batch sent again at the next start. */
export async function runWebhookDeliverer(options: DelivererOptions, signal: AbortSignal): Promise<void> {
  const { sql, chainId, chain, logger } = options;
  const settings = { ...DEFAULT_DELIVERER_SETTINGS, ...options.settings };
  const refreshMs = options.refreshMs ?? 1000;
  const wakeMs = options.wakeMs ?? 200;
  const pruneMs = options.pruneMs ?? 60_000;
  const random = options.random ?? Math.random;
  const slots = createSlots(settings.concurrency);
  const workers = new Map<string, { stop: AbortController; done: Promise<void> }>();

  // Woken when the stream's newest cursor or the indexed head moves; `generation` counts the moves,
  // so a worker that read before a move does not wait for the next one.
  let moved = signalled();
  let generation = 0;
  const watch = (async () => {
    let last = "";
    while (!signal.aborted) {
      try {
        const page = await readStreamEvents(sql, chainId, { after: "now", limit: 1 });
        const now = `${page.next}:${page.head}`;
        if (now !== last) {
          last = now;
          generation++;
          moved.resolve();
          moved = signalled();
        }
      } catch {
        // The chain not registered yet, or the database away: the next look will tell.
      }
      await sleep(wakeMs, undefined, { signal }).catch(() => {});
    }
    moved.resolve();
  })();

  const idle = (stop: AbortSignal, readAt: number) =>
    new Promise<void>((resolve) => {
      if (generation !== readAt || stop.aborted) {
        resolve();
        return;
      }
      const done = () => {
        clearTimeout(timer);
        stop.removeEventListener("abort", done);
        resolve();
      };
      // Also after a while with no movement, in case a look was missed.
      const timer = setTimeout(done, 5000);
      moved.promise.then(done);
      stop.addEventListener("abort", done, { once: true });
    });

  /** The body of the batch a worker is retrying, kept so that a retry reads and encodes nothing again. */
  interface Pending {
    cursor: bigint;
    batch: WebhookBatch;
    body: string;
    events: number;
  }

  async function step(hook: Webhook, stop: AbortSignal, pending: { last?: Pending }): Promise<Step> {
    const kept = pending.last;
    if (
      hook.batch &&
      kept &&
      kept.cursor === hook.cursor &&
      kept.batch.first === hook.batch.first &&
      kept.batch.last === hook.batch.last
    ) {
      return send(hook, stop, kept.batch, kept.body, kept.events);
    }
    pending.last = undefined;
    let events: StreamEvent[];
    let next: bigint;
    try {
      const page = await readStreamEvents(sql, chainId, {
        after: hook.cursor,
        ...(hook.kinds.length > 0 ? { kinds: hook.kinds } : {}),
        ...(hook.contracts.length > 0 ? { contracts: hook.contracts } : {}),
        ...(hook.addresses.length > 0 ? { addresses: hook.addresses } : {}),
        ...(hook.confirmations === undefined ? {} : { confirmations: hook.confirmations }),
        ...(hook.excludeSpam ? { excludeSpam: true } : {}),
        // A batch recorded by a run with a larger batch size is read whole.
        limit: hook.batch ? MAX_STREAM_LIMIT : settings.batchEvents,
      });
      events = page.events;
      next = page.next;
    } catch (error) {
      if (!(error instanceof StreamCursorError)) throw error;
      const reason =
        error.reason === "pruned"
          ? `its cursor ${hook.cursor} was pruned by the stream's retention (oldest cursor ${error.oldestCursor})`
          : `its cursor ${hook.cursor} is past the newest event (${error.latestCursor})`;
      if (await pauseWebhook(sql, hook.id, hook.cursor, reason)) {
        logger.warn({ webhook: hook.id }, `webhook ${hook.id} paused: ${reason}`);
      }
      return "stop";
    }
    let batch: WebhookBatch;
    if (hook.batch) {
      // The same events as the first attempt: those up to its last, which later events never change
      // (but a collection judged spam meanwhile, on a subscription that leaves spam out).
      const recorded = hook.batch;
      events = events.filter((e) => e.cursor <= recorded.last);
      batch = recorded;
    } else {
      const first = events[0];
      const last = events.at(-1);
      if (first === undefined || last === undefined) {
        if (next === hook.cursor) return "idle";
        return (await skipWebhookTo(sql, hook.id, hook.cursor, next)) ? "more" : "stop";
      }
      batch = { first: first.cursor, last: last.cursor, next };
      if (!(await recordWebhookBatch(sql, hook.id, hook.cursor, batch))) return "stop";
    }
    const body = deliveryBody(hook.id, chainId, events, batch.next);
    pending.last = { cursor: hook.cursor, batch, body, events: events.length };
    return send(hook, stop, batch, body, events.length);
  }

  async function send(
    hook: Webhook,
    stop: AbortSignal,
    batch: WebhookBatch,
    body: string,
    count: number,
  ): Promise<Step> {
    await slots.take();
    const started = performance.now();
    const at = new Date();
    let result: Awaited<ReturnType<typeof postToTarget>>;
    try {
      result = await postToTarget(hook.url, {
        allow: settings.allow,
        ...(options.resolve ? { resolve: options.resolve } : {}),
        timeoutMs: settings.timeoutMs,
        headers: deliveryHeaders(hook, batch, Math.floor(at.getTime() / 1000), body),
        body,
        signal: stop,
      });
    } finally {
      slots.give();
    }
    const durationMs = Math.round(performance.now() - started);
    options.metrics?.countDelivery(chain, result.outcome, durationMs / 1000, count);
    const delivery: WebhookDelivery = {
      webhookId: hook.id,
      firstCursor: batch.first,
      lastCursor: batch.last,
      events: count,
      attempt: hook.failures + 1,
      status: result.status,
      error: result.error,
      durationMs,
      at,
    };
    if (result.outcome === "ok") {
      await webhookDelivered(sql, hook.id, hook.cursor, batch.next, delivery);
      return "more";
    }
    const failure = afterFailure(settings.policy, hook, new Date(), random());
    const error = result.error ?? result.outcome;
    await webhookFailed(sql, hook.id, hook.cursor, { ...failure, error }, delivery);
    if (failure.pause !== undefined) {
      logger.warn(
        { webhook: hook.id, url: hook.url },
        `webhook ${hook.id} paused: ${failure.pause} (last: ${error}); \`mintlens webhooks resume ${hook.id}\` starts it again`,
      );
    } else {
      logger.debug({ webhook: hook.id, error, retryAt: failure.retryAt }, "webhook delivery failed");
    }
    return "more";
  }

  async function work(id: string, stop: AbortSignal): Promise<void> {
    const pending: { last?: Pending } = {};
    while (!stop.aborted) {
      try {
        const hook = await getWebhook(sql, id);
        if (hook === undefined || hook.state !== "active") return;
        const wait = hook.nextAttemptAt.getTime() - Date.now();
        if (wait > 0) {
          // Not longer than a refresh: a resume brings the attempt forward.
          await sleep(Math.min(wait, refreshMs), undefined, { signal: stop }).catch(() => {});
          continue;
        }
        const readAt = generation;
        const outcome = await step(hook, stop, pending);
        if (outcome === "stop") return;
        if (outcome === "idle") await idle(stop, readAt);
      } catch (error) {
        if (stop.aborted) return;
        logger.warn({ webhook: id }, `webhook ${id}: ${errorMessage(error)}; trying again`);
        await sleep(refreshMs, undefined, { signal: stop }).catch(() => {});
      }
    }
  }

  let pruned = Date.now();
  while (!signal.aborted) {
    try {
      const active = new Set((await activeWebhooks(sql, chainId)).map((h) => h.id));
      for (const [id, worker] of workers) if (!active.has(id)) worker.stop.abort();
      for (const id of active) {
        if (workers.has(id)) continue;
        const stop = new AbortController();
        const done = work(id, AbortSignal.any([signal, stop.signal])).finally(() => {
          if (workers.get(id)?.stop === stop) workers.delete(id);
        });
        workers.set(id, { stop, done });
      }
      options.metrics?.setPaused(chain, await pausedWebhookCount(sql, chainId));
      if (Date.now() - pruned >= pruneMs) {
        pruned = Date.now();
        await pruneWebhookLog(
          sql,
          chainId,
          new Date(Date.now() - LOG_RETENTION_MS),
          LOG_KEEP_PER_SUBSCRIPTION,
        );
      }
    } catch (error) {
      if (signal.aborted) break;
      logger.warn(`reading the webhooks failed: ${errorMessage(error)}; trying again`);
    }
    await sleep(refreshMs, undefined, { signal }).catch(() => {});
  }
  await Promise.all([...workers.values()].map((w) => w.done));
  await watch;
}
