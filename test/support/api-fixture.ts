/**
 * An API over real sockets on data the real indexer wrote from a generated anvil history: the
 * fixture of the API tests. REST is called with node's fetch; gRPC with a grpc-js client loaded
 * from the published `.proto` files, as a client of the project would build it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { generateKey } from "../../src/api/keys.ts";
import { createApiMetrics } from "../../src/api/metrics.ts";
import { PROTO_ROOT } from "../../src/api/rest.ts";
import { type RunningApi, startApi } from "../../src/api/server.ts";
import { loadTls, type TlsMaterial } from "../../src/api/tls.ts";
import { silentLogger } from "../../src/core/logger.ts";
import type { HistorySummary } from "../../src/demo/activity.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import type { Sql } from "../../src/store/pg/database.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "./database.ts";
import { startHistoryChain } from "./histories.ts";
import { indexUntil } from "./indexing.ts";

export const API_CHAIN_ID = 31337;

export interface RestAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface GrpcAnswer {
  error: grpc.ServiceError | null;
  response: Record<string, unknown> | undefined;
}

export interface ApiFixture {
  anvil: Anvil;
  db: TestDatabase;
  sql: Sql;
  history: HistorySummary;
  api: RunningApi;
  restUrl: string;
  grpcAddress: string;
  tls: TlsMaterial;
  key: string;
  /** A key of its own per test that counts requests against the limit. */
  newKey(user: string): Promise<string>;
  rest(
    path: string,
    options?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<RestAnswer>;
  grpc(
    service: "FoundationalService" | "CollectionsService",
    method: string,
    request: Record<string, unknown>,
    options?: { key?: string | null },
  ): Promise<GrpcAnswer>;
  close(): Promise<void>;
}

export interface ApiFixtureOptions {
  days: number;
  seed: string;
  rateLimit?: number;
  versionPollMs?: number;
}

/** The published `.proto` loaded as a client sees it: enums as names, 64-bit integers as strings, defaults present. */
export function loadPublishedProto(): grpc.GrpcObject {
  const definition = loadSync(["mintlens/v1beta2/foundational.proto", "mintlens/v1beta2/collections.proto"], {
    includeDirs: [PROTO_ROOT],
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition);
}

export async function startApiFixture(options: ApiFixtureOptions): Promise<ApiFixture> {
  const { anvil, history } = await startHistoryChain({
    chainId: API_CHAIN_ID,
    seed: options.seed,
    days: options.days,
    genesis: "recent",
  });
  const db = await createTestDatabase();
  const { contracts } = history;
  await indexUntil({
    sql: db.sql,
    rpcUrl: anvil.url,
    chainId: API_CHAIN_ID,
    untilBlock: history.blocks.last,
    nativePegged: [contracts.weth.address],
    ratePools: [
      { kind: "v2", address: contracts.wethStablePool.address },
      { kind: "v2", address: contracts.tokenWethPool.address },
    ],
    usdTokens: [contracts.stablecoin.address],
  });
  const tlsDir = mkdtempSync(join(tmpdir(), "mintlens-api-tls-"));
  const tls = await loadTls(undefined, tlsDir);
  const keys = createKeyVerifier({ sql: db.sql });
  const api = await startApi({
    sql: db.sql,
    chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort: 0 }],
    host: "127.0.0.1",
    tls,
    guard: createGuard({ keys, requestsPerSecond: options.rateLimit ?? 0 }),
    metrics: createApiMetrics(),
    logger: silentLogger(),
    versionPollMs: options.versionPollMs ?? 200,
  });
  const served = api.chains[0];
  if (served === undefined) throw new Error("no chain served");

  const newKey = async (user: string) => {
    const key = generateKey();
    await insertApiKey(db.sql, { userName: user, keyId: key.keyId, keyHash: key.hash });
    return key.key;
  };
  const key = await newKey("tester");

  const proto = loadPublishedProto() as unknown as {
    mintlens: { v1beta2: Record<string, grpc.ServiceClientConstructor> };
  };
  const credentials = grpc.credentials.createSsl(tls.cert);
  const clients = new Map<string, grpc.Client>();
  const client = (service: string) => {
    let c = clients.get(service);
    if (c === undefined) {
      const Constructor = proto.mintlens.v1beta2[service];
      if (Constructor === undefined) throw new Error(`no service ${service} in the published .proto`);
      c = new Constructor(`localhost:${served.grpcPort}`, credentials);
      clients.set(service, c);
    }
    return c;
  };

  return {
    anvil,
    db,
    sql: db.sql,
    history,
    api,
    restUrl: served.restUrl,
    grpcAddress: served.grpcAddress,
    tls,
    key,
    newKey,
    async rest(path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      const presented = requestOptions.key === undefined ? key : requestOptions.key;
      if (presented !== null) headers["x-api-key"] = presented;
      const response = await fetch(`${served.restUrl}${path}`, { headers });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, headers: response.headers, body, text };
    },
    grpc(service, method, request, requestOptions = {}) {
      const metadata = new grpc.Metadata();
      const presented = requestOptions.key === undefined ? key : requestOptions.key;
      if (presented !== null) metadata.set("x-api-key", presented);
      const c = client(service) as unknown as Record<
        string,
        (
          request: unknown,
          metadata: grpc.Metadata,
          callback: (error: grpc.ServiceError | null, response?: Record<string, unknown>) => void,
        ) => void
      >;
      const call = c[method];
      if (call === undefined) throw new Error(`no method ${service}.${method}`);
      return new Promise((resolve) => {
        call.call(c, request, metadata, (error, response) => resolve({ error, response }));
      });
    },
    async close() {
      for (const c of clients.values()) c.close();
      await api.close();
      await db.close();
      await anvil.stop();
      await stopTestServer();
      rmSync(tlsDir, { recursive: true, force: true });
    },
  };
}
