/**
 * Traffic that is not a client's: floods of made-up keys, an address that keeps failing to
 * authenticate, and deep pages, over real sockets. Each case is a test of its own, on servers of
 * its own over one indexed store, and each load is bounded in count and time.
 */
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { pino } from "pino";
import { createGuard, type GuardOptions } from "../../src/api/guard.ts";
import { createKeyVerifier, type KeyVerifier } from "../../src/api/key-verifier.ts";
import { generateKey } from "../../src/api/keys.ts";
import { type RunningApi, startApi } from "../../src/api/server.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";
import { type CountingSql, countingSql } from "../support/counting-sql.ts";
import { grpcCaller } from "../support/grpc-client.ts";

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({ days: 2, seed: "abuse" });
});
after(async () => f?.close());

interface Guarded {
  api: RunningApi;
  keys: KeyVerifier;
  counted: CountingSql;
  restUrl: string;
  grpcAddress: string;
}

/** An API over the fixture's store whose key checks go through a pool that counts reads of `api_keys`. */
async function guardedApi(options: Omit<GuardOptions, "keys">): Promise<Guarded> {
  const counted = countingSql(f.sql, "api_keys");
  const keys = createKeyVerifier({ sql: counted.sql });
  const api = await startApi({
    sql: f.sql,
    chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort: 0 }],
    host: "127.0.0.1",
    tls: f.tls,
    guard: createGuard({ keys, ...options }),
    metrics: createProcessMetrics(),
    logger: pino({ level: "silent" }),
  });
  const served = api.chains[0];
  assert.ok(served);
  return { api, keys, counted, restUrl: served.restUrl, grpcAddress: `127.0.0.1:${served.grpcPort}` };
}

/** Runs `task` for 0…count-1, `width` at a time, until done or `ms` has passed; the number run. */
async function flood(count: number, width: number, ms: number, task: (i: number) => Promise<void>) {
  const deadline = Date.now() + ms;
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count && Date.now() < deadline) await task(next++);
    }),
  );
  return next;
}

/** A GET from a chosen loopback source address (node's fetch cannot pick one). */
function getFrom(
  localAddress: string,
  url: string,
  key: string,
): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers: { "x-api-key": key } }, (response) => {
      response.resume();
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          ...(response.headers["retry-after"] ? { retryAfter: String(response.headers["retry-after"]) } : {}),
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

test("2,000 made-up keys over REST and gRPC: all refused, no query for any, memory bounded", async () => {
  const guarded = await guardedApi({ pointsPerSecond: 30, failedAuthenticationsPerMinute: 0 });
  const client = grpcCaller(guarded.grpcAddress, f.tls, f.key);
  try {
    // The table is read once, and a real key passes.
    assert.equal(
      (await getFrom("127.0.0.1", `${guarded.restUrl}/foundational/v1beta2/contracts?limit=1`, f.key)).status,
      200,
    );
    const readsBefore = guarded.counted.count();
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const statuses = new Map<string, number>();
    const tally = (s: string) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
    const sent = await flood(2_000, 16, 10_000, async (i) => {
      const key = generateKey().key;
      if (i % 4 === 0) {
        const { error } = await client.call("FoundationalService", "ListContracts", { limit: 1 }, { key });
        tally(`grpc ${error?.code}`);
      } else {
        tally(
          `rest ${(await getFrom("127.0.0.1", `${guarded.restUrl}/foundational/v1beta2/contracts?limit=1`, key)).status}`,
        );
      }
    });
    const seconds = (Date.now() - started) / 1000;
    assert.equal(sent, 2_000, `only ${sent} sent in ${seconds} s`);
    assert.deepEqual(Object.fromEntries(statuses), {
      "rest 401": 1_500,
      [`grpc ${grpc.status.UNAUTHENTICATED}`]: 500,
    });
    // The table may be read again every 2 s while they come; never once per key.
    const reads = guarded.counted.count() - readsBefore;
    assert.ok(reads <= Math.ceil(seconds / 2) + 1, `${reads} reads of api_keys in ${seconds} s`);
    global.gc?.();
    const grown = process.memoryUsage().rss - rssBefore;
    assert.ok(grown < 64 * 1024 * 1024, `rss grew by ${Math.round(grown / 1024 / 1024)} MiB`);
    // And the real key still passes.
    assert.equal(
      (await getFrom("127.0.0.1", `${guarded.restUrl}/foundational/v1beta2/contracts?limit=1`, f.key)).status,
      200,
    );
  } finally {
    client.close();
    await guarded.api.close();
  }
});

test("an address that keeps failing to authenticate is refused before any key check, others are not", async () => {
  const guarded = await guardedApi({ pointsPerSecond: 30, failedAuthenticationsPerMinute: 20 });
  const client = grpcCaller(guarded.grpcAddress, f.tls, f.key);
  const url = `${guarded.restUrl}/foundational/v1beta2/contracts?limit=1`;
  try {
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    await flood(200, 1, 10_000, async () => {
      const answer = await getFrom("127.0.0.1", url, generateKey().key);
      statuses.push(answer.status);
      retryAfter ??= answer.retryAfter;
    });
    assert.equal(statuses.length, 200);
    assert.deepEqual(statuses.slice(0, 20), new Array(20).fill(401));
    assert.deepEqual(statuses.slice(20), new Array(180).fill(429));
    assert.ok(Number(retryAfter) > 50 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
    // Blocked means blocked: a good key from there too, over gRPC too, and without a read.
    const reads = guarded.counted.count();
    assert.equal((await getFrom("127.0.0.1", url, f.key)).status, 429);
    const { error } = await client.call("FoundationalService", "ListContracts", { limit: 1 });
    assert.equal(error?.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.ok(Number(error?.metadata.get("retry-after")[0]) > 50);
    assert.equal(guarded.counted.count(), reads);
    // Another address is served, and its own failures are counted apart.
    assert.equal((await getFrom("127.0.0.2", url, f.key)).status, 200);
    assert.equal((await getFrom("127.0.0.2", url, generateKey().key)).status, 401);
  } finally {
    client.close();
    await guarded.api.close();
  }
});

test("deep pages are answered or refused quickly", async () => {
  const contract = f.history.contracts.erc721.address.toLowerCase();
  const paths = [
    "/foundational/v1beta2/contracts?offset=9500&limit=500",
    "/foundational/v1beta2/contracts?offset=9999&limit=1",
    "/foundational/v1beta2/contracts?offset=10000&limit=500",
    "/foundational/v1beta2/contracts?offset=1000000&limit=500",
    `/collections/v1beta2/${contract}/owners_list?offset=9500&limit=500`,
    `/collections/v1beta2/${contract}/owners_list?offset=10001&limit=500`,
    "/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_365_DAYS?offset=9999&limit=500",
  ];
  const started = Date.now();
  let slowest = 0;
  for (let round = 0; round < 5 && Date.now() - started < 10_000; round++) {
    for (const path of paths) {
      const asked = Date.now();
      const answer = await f.rest(`${path}&sortDirection=SORT_DIRECTION_${round % 2 ? "ASC" : "DESC"}`);
      slowest = Math.max(slowest, Date.now() - asked);
      assert.ok(answer.status === 200 || answer.status === 400, `${path}: ${answer.status} ${answer.text}`);
    }
  }
  assert.ok(slowest < 1_000, `the slowest deep page took ${slowest} ms`);
});
