/**
 * An API over real sockets on data the real indexer wrote from a generated anvil history: the
 * fixture of the API tests. REST is called with node's fetch; gRPC with a grpc-js client loaded
 * from the published `.proto` files, as a client of the project would build it (grpc-client.ts).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { generateKey } from "../../src/api/keys.ts";
import { type RunningApi, type StreamOptions, startApi } from "../../src/api/server.ts";
import { loadTls, type TlsMaterial } from "../../src/api/tls.ts";
import { silentLogger } from "../../src/core/logger.ts";
import type { HistorySummary } from "../../src/demo/activity.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import type { BlobStore } from "../../src/media/blobs.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { connectDatabase, type Sql } from "../../src/store/pg/database.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "./database.ts";
import { type GrpcCall, grpcCaller } from "./grpc-client.ts";
import { startHistoryChain } from "./histories.ts";
import { indexUntil } from "./indexing.ts";

export const API_CHAIN_ID = 31337;

export interface RestAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
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
  /** Indexes the chain up to `untilBlock`, with the history's rates. */
  index(untilBlock: number): Promise<void>;
  /** A key of its own per test that counts requests against the limit, known to the API when it resolves. */
  newKey(user: string): Promise<string>;
  /**
   * Another API over the same store, keys and images, whose links name `publicUrl`, as one behind a
   * proxy on another host; closed with the fixture if not before.
   */
  serveAgain(options: AnotherApi): Promise<RunningApi & { restUrl: string }>;
  /** Has the API read its key table now, as it does by itself within seconds (after a revocation, say). */
  refreshKeys(): Promise<void>;
  rest(
    path: string,
    options?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<RestAnswer>;
  grpc: GrpcCall;
  close(): Promise<void>;
}

/** What sets another API over the fixture's store apart from the fixture's own. */
export interface AnotherApi {
  /** The base of its links, as behind a proxy on another host. */
  publicUrl?: string;
  minBlockWaitMs?: number;
  versionPollMs?: number;
  /** Another store to read, whose own key table it reads its keys from. */
  sql?: Sql;
}

export interface ApiFixtureOptions {
  days: number;
  seed: string;
  rateLimit?: number;
  versionPollMs?: number;
  /** The API reads through a pool of its own whose statements the server cancels after this long. */
  statementTimeoutMs?: number;
  /** The live event stream's limits and timings. */
  streams?: StreamOptions;
  /** The image cache the API serves at `/images/` (a metadata worker the test runs fills it). */
  blobs?: BlobStore;
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
  // The history's pools and dollar token give its rates, on every later run too.
  const index = async (untilBlock: number): Promise<void> => {
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: API_CHAIN_ID,
      untilBlock,
      nativePegged: [contracts.weth.address],
      ratePools: [
        { kind: "v2", address: contracts.wethStablePool.address },
        { kind: "v2", address: contracts.tokenWethPool.address },
      ],
      usdTokens: [contracts.stablecoin.address],
    });
  };
  await index(history.blocks.last);
  const tlsDir = mkdtempSync(join(tmpdir(), "mintlens-api-tls-"));
  const tls = await loadTls(undefined, tlsDir);
  const apiSql =
    options.statementTimeoutMs === undefined
      ? db.sql
      : await connectDatabase(db.url, { statementTimeoutMs: options.statementTimeoutMs });
  const keys = createKeyVerifier({ sql: apiSql });
  // No limit on failed authentications: the tests refuse many keys from one address on purpose.
  const guard = createGuard({
    keys,
    pointsPerSecond: options.rateLimit ?? 0,
    failedAuthenticationsPerMinute: 0,
  });
  const guardOver = async (sql: Sql) => {
    const own = createKeyVerifier({ sql });
    await own.refresh();
    return createGuard({ keys: own, pointsPerSecond: 0, failedAuthenticationsPerMinute: 0 });
  };
  const serve = async (another: AnotherApi = {}) =>
    startApi({
      sql: another.sql ?? apiSql,
      chains: [
        {
          name: "anvil",
          chainId: API_CHAIN_ID,
          restPort: 0,
          grpcPort: 0,
          // The indexer stops once the history is indexed: its heartbeat ages while the tests run.
          readiness: { maxHeartbeatAgeSeconds: 3_600 },
          ...(another.publicUrl === undefined ? {} : { publicUrl: another.publicUrl }),
        },
      ],
      host: "127.0.0.1",
      tls,
      guard: another.sql === undefined ? guard : await guardOver(another.sql),
      metrics: createProcessMetrics(),
      logger: silentLogger(),
      versionPollMs: another.versionPollMs ?? options.versionPollMs ?? 200,
      ...(another.minBlockWaitMs === undefined ? {} : { minBlockWaitMs: another.minBlockWaitMs }),
      ...(options.streams ? { streams: options.streams } : {}),
      ...(options.blobs ? { blobs: options.blobs } : {}),
    });
  const api = await serve();
  const others: (() => Promise<void>)[] = [];
  const served = api.chains[0];
  if (served === undefined) throw new Error("no chain served");

  const newKey = async (user: string) => {
    const key = generateKey();
    await insertApiKey(db.sql, { userName: user, keyId: key.keyId, keyHash: key.hash });
    // The API knows keys from its table in memory: read it now rather than within seconds.
    await keys.refresh();
    return key.key;
  };
  const key = await newKey("tester");

  const grpcClient = grpcCaller(`localhost:${served.grpcPort}`, tls, key);

  return {
    anvil,
    db,
    index,
    sql: db.sql,
    history,
    api,
    restUrl: served.restUrl,
    grpcAddress: served.grpcAddress,
    tls,
    key,
    newKey,
    refreshKeys: () => keys.refresh(),
    async serveAgain(another) {
      const again = await serve(another);
      const restUrl = again.chains[0]?.restUrl;
      if (restUrl === undefined) throw new Error("no chain served");
      let closed: Promise<void> | undefined;
      const close = () => {
        closed ??= again.close();
        return closed;
      };
      others.push(close);
      return { ...again, restUrl, close };
    },
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
    grpc: grpcClient.call,
    async close() {
      grpcClient.close();
      for (const close of others) await close();
      await api.close();
      if (apiSql !== db.sql) await apiSql.end({ timeout: 5 });
      await db.close();
      await anvil.stop();
      await stopTestServer();
      rmSync(tlsDir, { recursive: true, force: true });
    },
  };
}
