/**
 * The API of every configured chain: per chain, one service implementation over that chain's
 * data, its own REST listener and its own gRPC listener; and one metrics listener for the process.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import type { Logger } from "../core/logger.ts";
import type { BlobStore } from "../media/blobs.ts";
import type { Queryable } from "../store/pg/database.ts";
import { createDataVersion, type DataVersion } from "./data-version.ts";
import { bindGrpc, createGrpcServer, type GrpcServer } from "./grpc.ts";
import type { Guard } from "./guard.ts";
import type { ApiMetrics } from "./metrics.ts";
import { createResponseCache } from "./response-cache.ts";
import { createRestServer } from "./rest.ts";
import { createApiService } from "./service.ts";

export interface ApiChain {
  name: string;
  chainId: number;
  /** 0 picks a free port. */
  restPort: number;
  grpcPort: number;
}

export interface ApiOptions {
  sql: Queryable;
  chains: readonly ApiChain[];
  host: string;
  tls: { cert: Buffer; key: Buffer };
  guard: Guard;
  metrics: ApiMetrics;
  logger: Logger;
  /** Where the one line per request goes; default `logger`. */
  accessLog?: Logger;
  /** How often each chain's data version is read, in ms (default 1000): the freshness of cached answers. */
  versionPollMs?: number;
  /** Memory for cached answers per chain, in bytes; 0 turns the cache off (default 64 MiB). */
  responseCacheBytes?: number;
  /** The image cache the metadata worker fills, served at `/images/<sha256>`. */
  blobs?: BlobStore;
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

const READY_CHECK_MS = 5_000;
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;
const GRPC_DRAIN_MS = 5_000;

export async function startApi(options: ApiOptions): Promise<RunningApi> {
  const { sql, host, guard, metrics } = options;
  const ready = async () => {
    await sql`SELECT 1`;
    return true;
  };
  const started: { rest: FastifyInstance; grpc: GrpcServer; version: DataVersion }[] = [];
  const served: ServedChain[] = [];
  const timers: NodeJS.Timeout[] = [];

  const close = async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.all(
      started.map(async ({ rest, grpc, version }) => {
        version.close();
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
      const version = createDataVersion({
        sql,
        chainId: chain.chainId,
        logger,
        ...(options.versionPollMs !== undefined ? { pollMs: options.versionPollMs } : {}),
      });
      const cache = createResponseCache(options.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES);
      // Known once the listener is bound: image URLs are made of the address it listens on.
      let imageBase = "";
      const operations = createApiService({
        sql,
        chainId: chain.chainId,
        version,
        cache,
        imageBase: () => imageBase,
      });
      const accessLog = options.accessLog ?? options.logger;
      const rest = await createRestServer({
        chain: chain.name,
        operations,
        guard,
        metrics,
        logger,
        accessLog,
        ready,
        blobs: options.blobs,
      });
      const grpc = createGrpcServer({ chain: chain.name, operations, guard, metrics, logger, accessLog });
      started.push({ rest, grpc, version });
      await rest.listen({ host, port: chain.restPort });
      const restPort = (rest.server.address() as AddressInfo).port;
      const grpcPort = await bindGrpc(grpc.server, host, chain.grpcPort, options.tls);
      imageBase = `http://${host.includes(":") ? `[${host}]` : host}:${restPort}`;
      const checkHealth = () => void ready().then(grpc.setServing, () => grpc.setServing(false));
      timers.push(setInterval(checkHealth, READY_CHECK_MS).unref());
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
  } catch (error) {
    await close();
    throw error;
  }
  return { chains: served, close };
}

/** Serves the process's metrics at `/metrics` (Prometheus text format). */
export async function startMetricsServer(
  metrics: ApiMetrics,
  host: string,
  port: number,
): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method === "GET" && (request.url === "/metrics" || request.url?.startsWith("/metrics?"))) {
      metrics.registry.metrics().then(
        (text) => {
          response.writeHead(200, { "content-type": metrics.registry.contentType });
          response.end(text);
        },
        () => {
          response.writeHead(500).end();
        },
      );
      return;
    }
    response.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
