/**
 * Webhook subscriptions whose target answers 500 to everything, delivered by the indexer's own
 * deliverer in this process (as `mintlens index` runs it) and tried again far faster than the
 * default policy would: the worst a failing target can do to the indexing beside it.
 */
import { silentLogger } from "../../src/core/logger.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import { openPoolLike, type Sql } from "../../src/store/pg/database.ts";
import { insertWebhook } from "../../src/store/tables/webhooks.ts";
import { runWebhookDeliverer } from "../../src/webhooks/deliverer.ts";
import { newWebhookId, newWebhookSecret } from "../../src/webhooks/signature.ts";
import { startFailingTarget } from "../../test/support/webhook-receiver.ts";

export interface FailingWebhooks {
  /** Stops the deliverer and the target; the attempts the target was sent. */
  stop(): Promise<number>;
}

export async function startFailingWebhooks(
  sql: Sql,
  options: { chainId: number; subscriptions: number },
): Promise<FailingWebhooks> {
  const target = await startFailingTarget();
  for (let i = 0; i < options.subscriptions; i++) {
    await insertWebhook(sql, {
      id: newWebhookId(),
      chainId: options.chainId,
      url: target.url,
      secret: newWebhookSecret(),
      kinds: [],
      contracts: [],
      addresses: [],
      confirmations: undefined,
      cursor: 0n,
    });
  }
  const abort = new AbortController();
  const pool = openPoolLike(sql, { max: 4 });
  const running = runWebhookDeliverer(
    {
      sql: pool,
      chainId: options.chainId,
      chain: "bench",
      logger: silentLogger(),
      settings: {
        allow: parseAllowList(["127.0.0.1"]),
        timeoutMs: 2000,
        // Every 50 ms at most: twelve thousand times the default policy's pace, and never paused.
        policy: { baseDelayMs: 10, maxDelayMs: 50, pauseFailures: 1_000_000, pauseAfterMs: 3_600_000 },
      },
      refreshMs: 50,
      wakeMs: 20,
    },
    abort.signal,
  );
  return {
    stop: async () => {
      abort.abort();
      await running;
      await pool.end({ timeout: 5 });
      await target.close();
      return target.keys.length;
    },
  };
}
