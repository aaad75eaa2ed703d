import { createChainClient } from "../chain/client.ts";
import type { Config } from "../config/config.ts";
import type { Logger } from "../core/logger.ts";
import { type Progress, runChainIndexer } from "../indexer/chain-indexer.ts";
import { inspectContract } from "../indexer/classify/inspect.ts";
import type { Sql } from "../store/database.ts";

export interface RunIndexersOptions {
  config: Config;
  sql: Sql;
  logger: Logger;
  onProgress: (progress: Progress) => void;
  signal: AbortSignal;
  untilBlock?: number;
}

/** Runs one indexer per configured chain until the signal aborts or one of them fails. */
export async function runIndexers(options: RunIndexersOptions): Promise<void> {
  const { config, sql, logger, onProgress, signal } = options;
  const failure = new AbortController();
  const both = AbortSignal.any([signal, failure.signal]);
  await Promise.all(
    config.chains.map(async (chain) => {
      const chainLogger = logger.child({ chain: chain.name });
      const client = createChainClient({
        url: chain.rpcUrl,
        batchSize: config.tuning.rpcBatchSize,
        timeoutMs: config.tuning.rpcTimeoutMs,
        retries: config.tuning.rpcRetries,
        maxLogRange: config.tuning.maxLogRange,
        logger: chainLogger,
      });
      try {
        await runChainIndexer(
          {
            sql,
            client,
            chain,
            tuning: config.tuning,
            logger: chainLogger,
            inspect: (address, emitted) => inspectContract(client, address, emitted),
            onProgress,
            ...(options.untilBlock !== undefined ? { untilBlock: options.untilBlock } : {}),
          },
          both,
        );
      } catch (error) {
        failure.abort(error);
        throw error;
      } finally {
        await client.close();
      }
    }),
  );
}
