/**
 * The API of every configured chain: per chain, one service implementation over that chain's
 * data, its own REST listener and its own gRPC listener (the process's metrics listener is src/metrics).
 * The chains' readiness and the image server are shared by every listener.
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { listenError } from "../core/listen-errors.ts";
import type { Logger } from "../core/logger.ts";
import type { BlobStore } from "../media/blobs.ts";
import type { ProcessMetrics } from "../metrics/process-metrics.ts";
import type { Queryable } from "../store/pg/database.ts";
import { createStreamFollower, type StreamFollower } from "../stream/follower.ts";
import { createDataVersion, type DataVersion } from "./data-version.ts";
import { bindGrpc, createGrpcServer, type GrpcServer } from "./grpc.ts";
import type { Guard } from "./guard.ts";
import { createImageServer, type ImageServerOptions } from "./images.ts";
import { fillMessageLinks, LINK_BASE_PLACEHOLDER, LINKED_OPERATIONS } from "./links.ts";
import { createReadiness, DEFAULT_READINESS, judgeChain, type ReadinessPolicy } from "./readiness.ts";
import { type Answer, createResponseCache } from "./response-cache.ts";
import { createRestServer } from "./rest.ts";
import { createApiService, type Operation } from "./service.ts";
import { createStreamEndpoint } from "./stream-endpoint.ts";
import { createStreamSlots } from "./stream-slots.ts";

export interface ApiChain {
  name: string;
  chainId: number;
  /** 0 picks a free port. */
  restPort: number;
  grpcPort: number;
  /**
   * The base of every link handed out for this chain (`https://nft.example.com`, no trailing
   * slash); unset: over REST the request's own host, over gRPC a bare path.
   */
  publicUrl?: string | undefined;
  /** When the chain counts as ready; default `DEFAULT_READINESS`. */
  readiness?: Partial<ReadinessPolicy> | undefined;
  /**
   * The database this chain's data is read from (its own, or a replica of it); default `sql`.
   * Its data version is polled there too, so cached answers follow the database they came from.
   */
  sql?: Queryable | undefined;
}

export interface ApiOptions {
  /** The default database: API keys, readiness and data of every chain not given a `sql` of its own. */
  sql: Queryable;
  chains: readonly ApiChain[];
  host: string;
  tls: { cert: Buffer; key: Buffer };
  guard: Guard;
  metrics: ProcessMetrics;
  logger: Logger;
  /** Where the one line per request goes; default `logger`. */
  accessLog?: Logger;
  /** How often each chain's data version is read, in ms (default 1000): the freshness of cached answers. */
  versionPollMs?: number;
  /** How long a request waits for its `minBlock` before it is refused, in ms (default 2000). */
  minBlockWaitMs?: number;
  /** Memory for cached answers per chain, in bytes; 0 turns the cache off (default 64 MiB). */
  responseCacheBytes?: number;
  /** The image cache the metadata worker fills, served at `/images/<sha256>`. */
  blobs?: BlobStore;
  /** How images are served from memory and how many store reads run at once (see `images.ts`). */
  images?: Omit<ImageServerOptions, "blobs">;
  /** How long the chains' readiness, once read, is answered from memory, in ms (default 1000). */
  readinessMaxAgeMs?: number;
  /** The live event stream's limits and timings (see `StreamOptions`). */
  streams?: StreamOptions;
}

/** The live event stream's limits and timings, for every chain of the process. */
export interface StreamOptions {
  /** Open streams per key, over every chain and both protocols (default 4). */
  maxPerKey?: number;
  /** Open streams of the process (default 500). */
  max?: number;
  /** How long a stream's transport may stay full before the stream is ended, in ms (default 30,000). */
  stallMs?: number;
  /** Ms without a message before an idle stream sends an empty one (default 15,000). */
  heartbeatMs?: number;
  /** How often each chain's newest cursor is polled while a stream waits, in ms (default 100). */
  pollMs?: number;
  /** Events per message at most (default and most: 1,000). */
  batchLimit?: number;
}

export interface ServedChain {
  name: string;
  chainId: number;
  restUrl: string;
  restPort: number;
  /** `host:port`, over TLS. */
  grpcAddress: string;
  grpcPort: number;
}

export interface RunningApi {
  chains: ServedChain[];
  /** Stops accepting requests, lets those under way finish (up to a few seconds), and closes. */
  close(): Promise<void>;
}

/** How often the gRPC health status is brought up to date when nothing else asks for the readiness. */
const READY_CHECK_MS = 5_000;
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;
const GRPC_DRAIN_MS = 5_000;

export async function startApi(options: ApiOptions): Promise<RunningApi> {
  const { sql, host, guard, metrics } = options;
  const readinessChains = options.chains.map((chain) => ({
    name: chain.name,
    chainId: chain.chainId,
    policy: { ...DEFAULT_READINESS, ...chain.readiness },
    ...(chain.sql !== undefined ? { sql: chain.sql } : {}),
  }));
  const readiness = createReadiness({
    sql,
    chains: readinessChains,
    logger: options.logger,
    ...(options.readinessMaxAgeMs !== undefined ? { maxAgeMs: options.readinessMaxAgeMs } : {}),
  });
  const images = options.blobs && createImageServer({ ...options.images, blobs: options.blobs });
  const started: {
    rest: FastifyInstance;
    grpc: GrpcServer;
    version: DataVersion;
    follower: StreamFollower;
  }[] = [];
  const streams = options.streams ?? {};
  const slots = createStreamSlots({
    ...(streams.maxPerKey === undefined ? {} : { perKey: streams.maxPerKey }),
    ...(streams.max === undefined ? {} : { total: streams.max }),
  });
  const served: ServedChain[] = [];
  const timers: NodeJS.Timeout[] = [];

  const close = async () => {
    for (const timer of timers) clearInterval(timer);
    // Every open stream ends first, telling its consumer where to resume, within the drain below.
    slots.shutdown();
    await Promise.all(
      started.map(async ({ rest, grpc, version, follower }) => {
        version.close();
        follower.close();
        const drained = new Promise<void>((resolve) => grpc.server.tryShutdown(() => resolve()));
        const forced = new Promise<void>((resolve) =>
          setTimeout(() => {
            grpc.server.forceShutdown();
            resolve();
          }, GRPC_DRAIN_MS).unref(),
        );
        await Promise.all([rest.close(), Promise.race([drained, forced])]);
      }),
    );
    options.accessLog?.flush();
  };

  try {
    for (const chain of options.chains) {
      const logger = options.logger.child({ chain: chain.name });
      const chainSql = chain.sql ?? sql;
      const version = createDataVersion({
        sql: chainSql,
        chainId: chain.chainId,
        logger,
        ...(options.versionPollMs !== undefined ? { pollMs: options.versionPollMs } : {}),
      });
      const cache = createResponseCache(options.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES);
      // Answers are cached with a placeholder where a link's base goes, filled in as each is sent.
      const operations = createApiService({
        sql: chainSql,
        chainId: chain.chainId,
        version,
        cache,
        imageBase: () => LINK_BASE_PLACEHOLDER,
        ...(options.minBlockWaitMs !== undefined ? { minBlockWaitMs: options.minBlockWaitMs } : {}),
      });
      const follower = createStreamFollower({
        sql: chainSql,
        chainId: chain.chainId,
        logger,
        ...(streams.pollMs === undefined ? {} : { pollMs: streams.pollMs }),
      });
      const stream = createStreamEndpoint({
        follower,
        slots,
        ...(streams.heartbeatMs === undefined ? {} : { heartbeatMs: streams.heartbeatMs }),
        ...(streams.stallMs === undefined ? {} : { stallMs: streams.stallMs }),
        ...(streams.batchLimit === undefined ? {} : { batchLimit: streams.batchLimit }),
      });
      const judged = readinessChains.find((c) => c.chainId === chain.chainId) ?? readinessChains[0];
      const chainReadiness = async () =>
        (await readiness.current()).get(chain.chainId) ??
        judgeChain(judged as (typeof readinessChains)[number], undefined);
      const accessLog = options.accessLog ?? options.logger;
      const rest = await createRestServer({
        chain: chain.name,
        operations,
        guard,
        metrics,
        logger,
        accessLog,
        readiness: chainReadiness,
        freshness: () => readiness.latest(chain.chainId),
        images,
        publicUrl: chain.publicUrl,
        stream,
      });
      const grpc = createGrpcServer({
        chain: chain.name,
        operations: withLinkBase(operations, chain.publicUrl ?? ""),
        guard,
        metrics,
        logger,
        accessLog,
        stream,
      });
      started.push({ rest, grpc, version, follower });
      const hostFlag = "--host";
      await rest.listen({ host, port: chain.restPort }).catch((error: unknown) => {
        throw listenError(error, {
          name: `${chain.name} REST`,
          host,
          port: chain.restPort,
          flags: { port: "--rest-port", host: hostFlag },
        });
      });
      const restPort = (rest.server.address() as AddressInfo).port;
      const grpcPort = await bindGrpc(grpc.server, host, chain.grpcPort, options.tls).catch(
        (error: unknown) => {
          throw listenError(error, {
            name: `${chain.name} gRPC`,
            host,
            port: chain.grpcPort,
            flags: { port: "--grpc-port", host: hostFlag },
          });
        },
      );
      readiness.subscribe((all) => grpc.setServing(all.get(chain.chainId)?.ready ?? false));
      const shown = host.includes(":") ? `[${host}]` : host;
      served.push({
        name: chain.name,
        chainId: chain.chainId,
        restUrl: `http://${shown}:${restPort}`,
        restPort,
        grpcAddress: `${shown}:${grpcPort}`,
        grpcPort,
      });
    }
    // Read once before the first request, so that every answer carries its chain's height.
    await readiness.current();
    const check = () => void readiness.current();
    timers.push(setInterval(check, READY_CHECK_MS).unref());
  } catch (error) {
    await close();
    throw error;
  }
  return { chains: served, close };
}

/**
 * The operations as gRPC answers them: links get `base` (the configured public URL, or none: a
 * bare path, since a gRPC request names no HTTP host the images are served at).
 */
function withLinkBase(operations: ReadonlyMap<string, Operation>, base: string): Map<string, Operation> {
  const filled = new Map<string, Operation>();
  for (const [name, operation] of operations) {
    if (!LINKED_OPERATIONS.has(name)) {
      filled.set(name, operation);
      continue;
    }
    filled.set(name, {
      method: operation.method,
      async run(fields, context) {
        const answer: Answer = await operation.run(fields, context);
        const message = fillMessageLinks(answer.message, base);
        return { message, json: () => answer.json() };
      },
    });
  }
  return filled;
}
