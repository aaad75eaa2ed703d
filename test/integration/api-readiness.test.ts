/**
 * Readiness that tells the truth, over real sockets on what the real indexer recorded: a chain is
 * ready while its indexer runs (a recent heartbeat) within the allowed lag of a node that follows
 * its chain (a head that moves); `/readyz`
 * says why not, the API's answers carry the chain's height and lag, gRPC health follows, and
 * however often it is asked the store is read about once a second.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import type { ReadinessPolicy } from "../../src/api/readiness.ts";
import { type RunningApi, startApi } from "../../src/api/server.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import type { Queryable } from "../../src/store/pg/database.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";
import { indexUntil } from "../support/indexing.ts";

let f: ApiFixture;
const apis: RunningApi[] = [];
before(async () => {
  f = await startApiFixture({ days: 1, seed: "ready" });
});
after(async () => {
  for (const api of apis) await api.close();
  await f?.close();
});

async function rpc<T>(method: string, params: unknown[]): Promise<T> {
  const response = await fetch(f.anvil.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: T }).result;
}

/** An API of its own over `sql`, judging the chain by `policy`. */
async function serve(policy: Partial<ReadinessPolicy>, sql: Queryable = f.sql): Promise<RunningApi> {
  const api = await startApi({
    sql,
    chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort: 0, readiness: policy }],
    host: "127.0.0.1",
    tls: f.tls,
    guard: createGuard({
      keys: createKeyVerifier({ sql: f.sql }),
      pointsPerSecond: 0,
      failedAuthenticationsPerMinute: 0,
    }),
    metrics: createProcessMetrics(),
    logger: silentLogger(),
    readinessMaxAgeMs: 100,
  });
  apis.push(api);
  return api;
}

interface Ready {
  status: string;
  reasons: string[];
  indexedBlock?: number;
  headBlock?: number;
  lagBlocks?: number;
  heartbeatAgeSeconds?: number;
  headStillSeconds?: number;
}

async function readyz(api: RunningApi): Promise<{ status: number; body: Ready }> {
  const answer = await fetch(`${api.chains[0]?.restUrl}/readyz`);
  return { status: answer.status, body: (await answer.json()) as Ready };
}

async function healthOf(api: RunningApi): Promise<string> {
  const loaded = grpc.loadPackageDefinition(
    loadSync(healthProtoPath, { keepCase: true, enums: String }),
  ) as unknown as {
    grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
  };
  const client = new loaded.grpc.health.v1.Health(
    `localhost:${api.chains[0]?.grpcPort}`,
    grpc.credentials.createSsl(f.tls.cert),
  );
  try {
    const answer = await new Promise<{ status: string }>((resolve, reject) =>
      (
        client as unknown as { Check(r: unknown, cb: (e: Error | null, r: { status: string }) => void): void }
      ).Check({ service: "mintlens.v1beta2.FoundationalService" }, (error, response) =>
        error ? reject(error) : resolve(response),
      ),
    );
    return answer.status;
  } finally {
    client.close();
  }
}

/** Polls `check` until it holds, for `ms` at most. */
async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < until, "not in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("readiness", () => {
  test("the indexer recorded the node's head: ready, with the figures in /readyz and the height on every answer", async () => {
    const head = Number(await rpc<string>("eth_blockNumber", []));
    const [row] = await f.sql<{ head_block: string; confirmations: number; beat: boolean }[]>`
      SELECT head_block::text, confirmations, heartbeat_at IS NOT NULL AS beat FROM chains WHERE chain_id = ${API_CHAIN_ID}`;
    assert.deepEqual(row, { head_block: String(head), confirmations: 0, beat: true });
    const api = await serve({ maxLagBlocks: 0, maxHeartbeatAgeSeconds: 3_600 });
    const { status, body } = await readyz(api);
    assert.equal(status, 200);
    assert.equal(body.status, "SERVING");
    assert.deepEqual(body.reasons, []);
    assert.equal(body.indexedBlock, f.history.blocks.last);
    assert.equal(body.headBlock, head);
    assert.equal(body.lagBlocks, head - f.history.blocks.last);
    assert.equal(typeof body.heartbeatAgeSeconds, "number");
    const answer = await fetch(`${api.chains[0]?.restUrl}/foundational/v1beta2/contracts`, {
      headers: { "x-api-key": f.key },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get("x-mintlens-indexed-block"), String(f.history.blocks.last));
    assert.equal(answer.headers.get("x-mintlens-lag-blocks"), String(head - f.history.blocks.last));
    assert.equal(await healthOf(api), "SERVING");
  });

  test("1,000 calls of /readyz read the store a handful of times", async () => {
    let reads = 0;
    const counting = new Proxy(f.sql, {
      apply(target, self, args: unknown[]) {
        const strings = args[0] as readonly string[] | undefined;
        if (Array.isArray(strings) && strings.join("").includes("heartbeat_at")) reads++;
        return Reflect.apply(target, self, args);
      },
    });
    const api = await startApi({
      sql: counting,
      chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort: 0 }],
      host: "127.0.0.1",
      tls: f.tls,
      guard: createGuard({
        keys: createKeyVerifier({ sql: f.sql }),
        pointsPerSecond: 0,
        failedAuthenticationsPerMinute: 0,
      }),
      metrics: createProcessMetrics(),
      logger: silentLogger(),
    });
    apis.push(api);
    const url = `${api.chains[0]?.restUrl}/readyz`;
    const started = performance.now();
    const before = reads;
    let calls = 0;
    const deadline = Date.now() + 30_000;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (calls < 1_000 && Date.now() < deadline) {
          calls++;
          const answer = await fetch(url);
          await answer.arrayBuffer();
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    assert.ok(calls >= 1_000, `only ${calls} calls in time`);
    const made = reads - before;
    // One read per second at most (the value is kept 1 s), and concurrent calls share one.
    assert.ok(made <= Math.ceil(seconds) + 1, `${made} reads for ${calls} calls in ${seconds.toFixed(1)} s`);
  });

  test("an indexer far behind its node is not ready: 503 with the lag, the answers' lag header, gRPC NOT_SERVING", async () => {
    const api = await serve({ maxLagBlocks: 10, maxHeartbeatAgeSeconds: 3_600 });
    const from = Number(await rpc<string>("eth_blockNumber", []));
    await rpc("anvil_mine", ["0x19"]);
    // The indexer sees the new head, indexes five blocks of it, and stops: 20 blocks behind.
    await indexUntil({ sql: f.sql, rpcUrl: f.anvil.url, chainId: API_CHAIN_ID, untilBlock: from + 5 });
    await eventually(async () => (await readyz(api)).status === 503);
    const { body } = await readyz(api);
    assert.equal(body.status, "NOT_SERVING");
    assert.equal(body.lagBlocks, 20);
    assert.deepEqual(body.reasons, [
      "the indexer is 20 blocks behind the node's head less 0 confirmations (more than 10)",
    ]);
    const answer = await fetch(`${api.chains[0]?.restUrl}/foundational/v1beta2/contracts`, {
      headers: { "x-api-key": f.key },
    });
    assert.equal(answer.headers.get("x-mintlens-lag-blocks"), "20");
    assert.equal(await healthOf(api), "NOT_SERVING");
  });

  test("a stopped indexer (no heartbeat for longer than allowed) is not ready, and says so", async () => {
    const api = await serve({ maxLagBlocks: 1_000, maxHeartbeatAgeSeconds: 1 });
    await eventually(async () => (await readyz(api)).status === 503, 10_000);
    const { body } = await readyz(api);
    assert.equal(body.reasons.length, 1);
    assert.match(
      body.reasons[0] ?? "",
      /^the indexer last recorded the node's head [\d.]+ s ago \(more than 1 s\): it is not running/,
    );
    assert.ok((body.heartbeatAgeSeconds ?? 0) >= 1, String(body.heartbeatAgeSeconds));
  });

  test("a node whose head stands still is not ready though its indexer keeps beating; a new block makes it ready", async () => {
    const api = await serve({ maxLagBlocks: 1_000, maxHeartbeatAgeSeconds: 3_600, maxHeadStillSeconds: 2 });
    await rpc("anvil_mine", ["0x1"]);
    const head = Number(await rpc<string>("eth_blockNumber", []));
    const following = new AbortController();
    const indexer = indexUntil({
      sql: f.sql,
      rpcUrl: f.anvil.url,
      chainId: API_CHAIN_ID,
      signal: following.signal,
      tuning: { pollIntervalMs: 100 },
    });
    try {
      // The indexer records the unchanged head again (every 5 s): its heartbeat is fresh, the head old.
      await eventually(async () => {
        const { status, body } = await readyz(api);
        return (
          status === 503 &&
          body.headBlock === head &&
          (body.heartbeatAgeSeconds ?? 99) + 2 < (body.headStillSeconds ?? 0)
        );
      }, 20_000);
      const { body } = await readyz(api);
      assert.equal(body.status, "NOT_SERVING");
      assert.equal(body.reasons.length, 1, body.reasons.join("; "));
      assert.match(
        body.reasons[0] ?? "",
        new RegExp(
          `^the node's head has stayed at block ${head} for [\\d.]+ s \\(more than 2 s\\): the node is not following its chain$`,
        ),
      );
      assert.equal(await healthOf(api), "NOT_SERVING");
      await rpc("anvil_mine", ["0x1"]);
      await eventually(async () => (await readyz(api)).status === 200, 20_000);
      assert.equal((await readyz(api)).body.headBlock, head + 1);
    } finally {
      following.abort();
      await indexer.catch(() => {});
    }
  });
});
