/**
 * An API over real sockets on a database a test filled itself, with a key: for tests beyond the
 * API's own fixture. REST with node's fetch; gRPC with a client built from the published `.proto`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { generateKey } from "../../src/api/keys.ts";
import { startApi } from "../../src/api/server.ts";
import { loadTls } from "../../src/api/tls.ts";
import { silentLogger } from "../../src/core/logger.ts";
import type { BlobStore } from "../../src/media/blobs.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import type { Sql } from "../../src/store/pg/database.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { type GrpcCall, grpcCaller } from "./grpc-client.ts";

export interface ApiClient {
  get(path: string): Promise<{ status: number; body: unknown }>;
  /** A URL of the API, fetched without a key. */
  raw(url: string): Promise<Response>;
  grpc: GrpcCall;
  close(): Promise<void>;
}

export async function createApiFixtureOn(sql: Sql, chainId: number, blobs?: BlobStore): Promise<ApiClient> {
  const dir = mkdtempSync(join(tmpdir(), "mintlens-api-client-"));
  const tls = await loadTls(undefined, dir);
  const key = generateKey();
  await insertApiKey(sql, { userName: `client-${key.keyId}`, keyId: key.keyId, keyHash: key.hash });
  const api = await startApi({
    sql,
    chains: [{ name: "test", chainId, restPort: 0, grpcPort: 0 }],
    host: "127.0.0.1",
    tls,
    guard: createGuard({
      keys: createKeyVerifier({ sql }),
      pointsPerSecond: 0,
      failedAuthenticationsPerMinute: 0,
    }),
    metrics: createProcessMetrics(),
    logger: silentLogger(),
    versionPollMs: 100,
    ...(blobs ? { blobs } : {}),
  });
  const url = api.chains[0]?.restUrl;
  const grpcClient = grpcCaller(`localhost:${api.chains[0]?.grpcPort}`, tls, key.key);
  return {
    async get(path) {
      const response = await fetch(`${url}${path}`, { headers: { "x-api-key": key.key } });
      return { status: response.status, body: await response.json() };
    },
    raw: (target) => fetch(target),
    grpc: grpcClient.call,
    async close() {
      grpcClient.close();
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
