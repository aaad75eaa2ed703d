import type { Command } from "commander";
import { createGuard } from "../api/guard.ts";
import { createKeyVerifier } from "../api/key-verifier.ts";
import { openKeyLimiter } from "../api/rate-limit-store.ts";
import { type RunningApi, startApi } from "../api/server.ts";
import { loadTls } from "../api/tls.ts";
import {
  API_DEFAULTS,
  type ApiConfig,
  type ApiConfigInput,
  type ApiPoolConfigInput,
} from "../config/api-config.ts";
import type { BlobStoreConfigInput } from "../config/blob-store-config.ts";
import { createAccessLogger, type Logger } from "../core/logger.ts";
import type { BlobStore } from "../media/blobs.ts";
import { createProcessMetrics, type ProcessMetrics } from "../metrics/process-metrics.ts";
import type { Sql } from "../store/pg/database.ts";
import { addMetricsOptions, serveMetrics } from "./metrics-listener.ts";
import { addBlobStoreOptions } from "./open-blob-store.ts";
import { collect } from "./repeatable.ts";
import type { Lifecycle } from "./shutdown.ts";

/** The flags of every command that serves the API; `blobDefault` tells where images go without --blob-store. */
export function addApiOptions(command: Command, blobDefault?: string): Command {
  const withApi = command
    .option("--host <address>", "address the API listens on (env MINTLENS_HOST, default 127.0.0.1)")
    .option(
      "--rest-port <[chain=]port>",
      "REST port: N for the first chain (the next ones take N+1…), or chain=N (default 8080)",
      collect,
    )
    .option(
      "--grpc-port <[chain=]port>",
      "gRPC (TLS) port: N for the first chain (the next ones take N+1…), or chain=N (default 50051)",
      collect,
    )
    .option(
      "--public-url <[chain=]url>",
      "base of the links the API hands out (https://host[/path]): url for every chain, or chain=url (env MINTLENS_PUBLIC_URL; default: the request's own host)",
      collect,
    )
    .option(
      "--ready-lag <[chain=]blocks>",
      "a chain is ready while its indexer owes at most this many blocks: N for every chain, or chain=N (env MINTLENS_READY_LAG, default 64)",
      collect,
    )
    .option(
      "--ready-heartbeat <seconds>",
      "a chain is not ready once its indexer has not recorded the node's head for this long (env MINTLENS_READY_HEARTBEAT, default 120)",
    )
    .option(
      "--ready-head-stall <[chain=]seconds>",
      "a chain is not ready once its node's head has stayed at one block this long, 0 for no limit: N for every chain, or chain=N (env MINTLENS_READY_HEAD_STALL, default 600)",
      collect,
    )
    .option(
      "--rate-limit <n>",
      "points per second per API key over REST and gRPC (a point per request, one per started 64 KiB of answer), 0 for none (default 30)",
    )
    .option("--rate-burst <n>", "points a key may spend at once on top of --rate-limit (default 10)")
    .option(
      "--rate-limit-store <store>",
      "where keys' points are counted: memory (each process on its own), or redis://… or postgres://… shared by every API process (env MINTLENS_RATE_LIMIT_STORE, default memory)",
    )
    .option(
      "--auth-failures <n>",
      "failed authentications per minute per IPv4 address or IPv6 /64, then refused for a minute; 0 for no limit (default 20)",
    )
    .option(
      "--min-block-wait <ms>",
      "how long a request with minBlock waits for this process's data to reach that block before it is answered unavailable (env MINTLENS_MIN_BLOCK_WAIT, default 2000)",
    )
    .option(
      "--max-streams-per-key <n>",
      "event streams (gRPC StreamEvents, Server-Sent Events) a key may have open at once, over every chain (env MINTLENS_MAX_STREAMS_PER_KEY, default 4)",
    )
    .option(
      "--max-streams <n>",
      "event streams this process serves at once (env MINTLENS_MAX_STREAMS, default 500)",
    )
    .option(
      "--stream-stall-timeout <seconds>",
      "an event stream whose consumer reads nothing for this long is ended with the cursor to resume from (env MINTLENS_STREAM_STALL_TIMEOUT, default 30)",
    )
    .option(
      "--response-cache <MiB>",
      "memory per chain for answers kept until the chain's data changes, 0 for none (default 64)",
    )
    .option(
      "--tls-cert <file>",
      "PEM certificate for gRPC (default: a self-signed one generated in the data directory)",
    )
    .option("--tls-key <file>", "PEM private key of --tls-cert")
    .option(
      "--api-pool-size <n>",
      "database connections of the API, apart from the indexer's and the metadata worker's (default 10)",
    )
    .option(
      "--statement-timeout <ms>",
      "the API's queries running longer are cancelled and answered as unavailable, 0 for no limit (default 5000)",
    );
  return addBlobStoreOptions(addMetricsOptions(withApi, String(API_DEFAULTS.metricsPort)), blobDefault);
}

export type ApiFlags = ApiConfigInput & ApiPoolConfigInput & BlobStoreConfigInput;

export interface ServeOptions {
  /** The default database: the API keys are read there, and every chain without a `sql` of its own. */
  sql: Sql;
  /** Each chain served, with the database its data is read from when not the default. */
  chains: readonly { name: string; chainId: number; sql?: Sql | undefined }[];
  api: ApiConfig;
  dataDir: string;
  logger: Logger;
  lifecycle: Lifecycle;
  /** Shared with the indexers when they run in the same process. */
  metrics?: ProcessMetrics;
  /** The image cache, served at `/images/<sha256>`: the one the metadata worker fills. */
  blobs: BlobStore;
  /** Where the listening addresses are told. */
  say: (line: string) => void;
}

/**
 * Starts every chain's listeners and the metrics listener, released by `lifecycle` (requests
 * under way are let finish). Prints where each listens and the certificate gRPC presents.
 */
export async function serveApi(options: ServeOptions): Promise<RunningApi & { certPath: string }> {
  const { api, logger, lifecycle } = options;
  const { say } = options;
  const metrics = options.metrics ?? createProcessMetrics();
  metrics.watchAbortListeners("shutdown", lifecycle.signal);
  const tls = await loadTls(api.tls, options.dataDir);
  if (tls.generated) say(`generated a self-signed certificate for gRPC: ${tls.certPath}`);
  const limit =
    api.rateLimit > 0
      ? await openKeyLimiter({
          store: api.rateLimitStore,
          pointsPerSecond: api.rateLimit,
          burst: api.rateBurst,
          logger,
          observer: {
            storeUp: (store, up) => metrics.setRateLimitStoreUp(store, up),
            fallback: (store) => metrics.countRateLimitFallback(store),
          },
        })
      : undefined;
  if (limit !== undefined) lifecycle.defer(() => limit.close());
  const guard = createGuard({
    keys: createKeyVerifier({ sql: options.sql, logger }),
    pointsPerSecond: api.rateLimit,
    burst: api.rateBurst,
    ...(limit === undefined ? {} : { limiter: limit.limiter }),
    failedAuthenticationsPerMinute: api.authFailureLimit,
  });
  const byName = new Map(api.listeners.map((l) => [l.name, l]));
  const running = await startApi({
    sql: options.sql,
    host: api.host,
    tls,
    guard,
    metrics,
    logger,
    accessLog: createAccessLogger(logger.level),
    blobs: options.blobs,
    responseCacheBytes: api.responseCacheMb * 1024 * 1024,
    minBlockWaitMs: api.minBlockWaitMs,
    streams: {
      maxPerKey: api.maxStreamsPerKey,
      max: api.maxStreams,
      stallMs: api.streamStallTimeoutMs,
    },
    chains: options.chains.map((chain) => {
      const listeners = byName.get(chain.name);
      if (listeners === undefined) throw new Error(`no listeners configured for ${chain.name}`);
      return {
        ...chain,
        restPort: listeners.restPort,
        grpcPort: listeners.grpcPort,
        publicUrl: api.publicUrls[chain.name],
        readiness: {
          maxLagBlocks: api.readyLagBlocks[chain.name] ?? API_DEFAULTS.readyLagBlocks,
          maxHeartbeatAgeSeconds: api.readyHeartbeatSeconds,
          maxHeadStillSeconds: api.readyHeadStallSeconds[chain.name] ?? API_DEFAULTS.readyHeadStallSeconds,
        },
      };
    }),
  });
  lifecycle.defer(() => running.close());
  for (const chain of running.chains) {
    say(
      `${chain.name} (chain ${chain.chainId}): REST ${chain.restUrl}  gRPC ${chain.grpcAddress} (TLS, certificate ${tls.certPath})`,
    );
  }
  await serveMetrics(metrics, { port: api.metricsPort, host: api.metricsHost }, lifecycle, say);
  return { ...running, certPath: tls.certPath };
}
