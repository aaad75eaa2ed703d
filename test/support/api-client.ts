/** An API over real sockets on a database a test filled itself, with a key: for tests beyond the API's own fixture. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { generateKey } from "../../src/api/keys.ts";
import { createApiMetrics } from "../../src/api/metrics.ts";
import { startApi } from "../../src/api/server.ts";
import { loadTls } from "../../src/api/tls.ts";
import { silentLogger } from "../../src/core/logger.ts";
import type { BlobStore } from "../../src/media/blobs.ts";
import type { Sql } from "../../src/store/pg/database.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";

export interface ApiClient {
  get(path: string): Promise<{ status: number; body: unknown }>;
  /** A URL of the API, fetched without a key. */
  raw(url: string): Promise<Response>;
  close(): Promise<void>;
}

export async function createApiFixtureOn(sql: Sql, chainId: number, blobs?: BlobStore): Promise<ApiClient> {
  const dir = mkdtempSync(join(tmpdir(), "mintlens-api-client-"));
  const key = generateKey();
  await insertApiKey(sql, { userName: `client-${key.keyId}`, keyId: key.keyId, keyHash: key.hash });
  const api = await startApi({
    sql,
    chains: [{ name: "test", chainId, restPort: 0, grpcPort: 0 }],
    host: "127.0.0.1",
    tls: await loadTls(undefined, dir),
    guard: createGuard({ keys: createKeyVerifier({ sql }), requestsPerSecond: 0 }),
    metrics: createApiMetrics(),
    logger: silentLogger(),
    versionPollMs: 100,
    ...(blobs ? { blobs } : {}),
  });
  const url = api.chains[0]?.restUrl;
  return {
    async get(path) {
      const response = await fetch(`${url}${path}`, { headers: { "x-api-key": key.key } });
      return { status: response.status, body: await response.json() };
    },
    raw: (target) => fetch(target),
    async close() {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
