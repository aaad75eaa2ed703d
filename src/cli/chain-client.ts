import { createChainClient } from "../chain/client.ts";
import type { ChainClient } from "../chain/rpc-types.ts";
import type { ChainConfig, IndexerTuning } from "../config/config.ts";
import type { Logger } from "../core/logger.ts";

/** A chain's node client as every command that reads the chain makes it: the configured batching, timeout, retries and log range. */
export function chainClientOf(
  chain: Pick<ChainConfig, "rpcUrl">,
  tuning: IndexerTuning,
  logger: Logger,
): ChainClient {
  return createChainClient({
    url: chain.rpcUrl,
    batchSize: tuning.rpcBatchSize,
    timeoutMs: tuning.rpcTimeoutMs,
    retries: tuning.rpcRetries,
    maxLogRange: tuning.maxLogRange,
    logger,
  });
}
