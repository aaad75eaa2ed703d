import type { Config } from "../config/config.ts";
import { errorMessage, UserFacingError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { type Progress, runChainIndexer } from "../indexer/chain-indexer.ts";
import { inspectContract } from "../indexer/classify/inspect.ts";
import { runStreamRetention } from "../indexer/stream-retention.ts";
import type { ProcessMetrics } from "../metrics/process-metrics.ts";
import { runSpamJob } from "../spam/job.ts";
import { openPoolLike, type Sql } from "../store/pg/database.ts";
import { type DelivererSettings, runWebhookDeliverer } from "../webhooks/deliverer.ts";
import { createWebhookMetrics } from "../webhooks/metrics.ts";
import { chainClientOf } from "./chain-client.ts";

export interface RunIndexersOptions {
  config: Config;
  /** The database of every chain not in `chainSql`. */
  sql: Sql;
  /** Chains whose data is in a database of their own (`--database-url chain=url`), by name. */
  chainSql?: ReadonlyMap<string, Sql>;
  logger: Logger;
  onProgress: (progress: Progress) => void;
  /**
   * The process's metrics, given each chain's height and lag as it commits, the preset rate sources
   * its node does not have, and its webhook deliveries.
   */
  metrics?: ProcessMetrics;
  signal: AbortSignal;
  untilBlock?: number;
  /** First wait after a failed round of a chain (default 1 s). */
  retryBaseMs?: number;
  /** The webhook deliverers' settings; without them no deliverer runs. */
  webhooks?: { settings: Partial<DelivererSettings> };
}

/** Connections of each chain's webhook deliverer. */
const WEBHOOK_POOL_SIZE = 4;

/**
 * Runs one indexer per configured chain until the signal aborts. A chain that stops on an error
 * (its node keeps refusing a block, a statement keeps failing, its configuration is wrong) is
 * logged and leaves the others running; once every chain has ended, the failures are thrown
 * together. Outages of a node or of the database never end a chain: it retries them. Beside each
 * chain's indexer runs its spam job (src/spam/job.ts), which judges the contracts the indexer's
 * batches changed, the stream's retention (src/indexer/stream-retention.ts), which prunes the
 * outbox's old events, and its webhook deliverer (src/webhooks/deliverer.ts), until the indexer
 * ends.
 */
export async function runIndexers(options: RunIndexersOptions): Promise<void> {
  const { config, logger, metrics, signal } = options;
  const onProgress = (progress: Progress) => {
    metrics?.setIndexed(progress.chain, progress.nextBlock - 1, progress.head);
    options.onProgress(progress);
  };
  const webhookMetrics = metrics && options.webhooks ? createWebhookMetrics(metrics.registry) : undefined;
  const results = await Promise.allSettled(
    config.chains.map(async (chain) => {
      const sql = options.chainSql?.get(chain.name) ?? options.sql;
      const chainLogger = logger.child({ chain: chain.name });
      const client = chainClientOf(chain, config.tuning, chainLogger);
      const indexed = new AbortController();
      const spam = runSpamJob(
        { sql, chainId: chain.chainId, logger: logger.child({ chain: chain.name, part: "spam" }) },
        AbortSignal.any([signal, indexed.signal]),
      );
      const retention = runStreamRetention(
        {
          sql,
          chainId: chain.chainId,
          retentionDays: config.streamRetentionDays,
          logger: logger.child({ chain: chain.name, part: "stream" }),
        },
        AbortSignal.any([signal, indexed.signal]),
      );
      // The deliverer's connections are its own: its workers never wait for the indexer's, nor it for theirs.
      const webhookSql = options.webhooks
        ? openPoolLike(sql, { max: WEBHOOK_POOL_SIZE, applicationName: "mintlens-webhooks" })
        : undefined;
      const webhooks =
        options.webhooks && webhookSql
          ? runWebhookDeliverer(
              {
                sql: webhookSql,
                chainId: chain.chainId,
                chain: chain.name,
                logger: logger.child({ chain: chain.name, part: "webhooks" }),
                settings: options.webhooks.settings,
                ...(webhookMetrics ? { metrics: webhookMetrics } : {}),
              },
              AbortSignal.any([signal, indexed.signal]),
            )
          : undefined;
      try {
        await runChainIndexer(
          {
            sql,
            client,
            chain,
            tuning: config.tuning,
            // The indexer names its chain in every line itself.
            logger,
            inspect: (address, emitted) => inspectContract(client, address, emitted),
            onProgress,
            ...(metrics ? { onRateSourcesLeftOut: metrics.setRateSourcesLeftOut } : {}),
            ...(options.untilBlock !== undefined ? { untilBlock: options.untilBlock } : {}),
            ...(options.retryBaseMs !== undefined ? { retryBaseMs: options.retryBaseMs } : {}),
          },
          signal,
        );
      } catch (error) {
        if (config.chains.length > 1) {
          logger.error({ chain: chain.name }, `${errorMessage(error)}; the other chains go on`);
        }
        throw error;
      } finally {
        indexed.abort();
        await spam;
        await retention;
        await webhooks;
        await webhookSql?.end({ timeout: 5 });
        await client.close();
      }
    }),
  );
  const failures = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    const allUserFacing = failures.every((f) => f instanceof UserFacingError);
    const message = failures.map(errorMessage).join("; ");
    throw allUserFacing ? new UserFacingError(message) : new AggregateError(failures, message);
  }
}
