/**
 * Who may ask, how often, and what the service tells operators: keys on every API path over both
 * protocols, the shared rate limit, the public routes (health, readiness, the OpenAPI document
 * and `.proto` files), gRPC reflection and health, metrics and access logs, and how errors map.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { pino } from "pino";
import { answerCost, BYTES_PER_POINT, createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier, type KeyVerifier } from "../../src/api/key-verifier.ts";
import { OPENAPI_PATH } from "../../src/api/rest.ts";
import { type RunningApi, startApi } from "../../src/api/server.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { startMetricsServer } from "../../src/metrics/server.ts";
import { revokeApiKey } from "../../src/store/tables/api-keys.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({ days: 4, seed: "access" });
});
after(async () => f?.close());

const ZERO_CONTRACT = `0x${"12".repeat(20)}`;
const API_PATHS = [
  "/foundational/v1beta2/contracts",
  `/foundational/v1beta2/nfts/${ZERO_CONTRACT}/1/details`,
  `/foundational/v1beta2/nfts/${ZERO_CONTRACT}/1/raw_metadata`,
  "/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_1_DAY",
  `/collections/v1beta2/${ZERO_CONTRACT}/owners_list`,
  `/collections/v1beta2/${ZERO_CONTRACT}/supply/DURATION_1_DAY/GROUP_BY_PERIOD_1_HOUR`,
  `/collections/v1beta2/${ZERO_CONTRACT}/owners_count/DURATION_1_DAY/GROUP_BY_PERIOD_1_HOUR`,
  `/collections/v1beta2/${ZERO_CONTRACT}/prices/DURATION_1_DAY/GROUP_BY_PERIOD_1_HOUR`,
  `/collections/v1beta2/${ZERO_CONTRACT}/sales_volume/DURATION_1_DAY/GROUP_BY_PERIOD_1_HOUR`,
];

describe("keys", () => {
  test("every API path refuses a missing, malformed, unknown or revoked key with 401; health and documents need none", async () => {
    const revoked = await f.newKey("gone");
    await revokeApiKey(f.sql, "gone");
    await f.refreshKeys();
    const unknown = `ml_${"0".repeat(16)}_${"A".repeat(43)}`;
    for (const path of API_PATHS) {
      for (const key of [null, "", "nonsense", unknown, revoked]) {
        const answer = await f.rest(path, { key });
        assert.equal(answer.status, 401, `${path} with ${key}`);
        const body = answer.body as { code: number; message: string; details: unknown[] };
        assert.equal(body.code, 16);
        assert.deepEqual(body.details, []);
        assert.ok(!answer.text.includes("ml_"), "the key is never echoed");
      }
      // Header names are case-insensitive.
      assert.equal(
        (await f.rest(path, { key: null, headers: { "X-API-KEY": f.key } })).status,
        path.includes("/nfts/") ? 404 : 200,
      );
    }
    for (const path of [
      "/healthz",
      "/readyz",
      "/openapi.json",
      "/proto",
      "/proto/mintlens/v1beta2/collections.proto",
    ]) {
      assert.equal((await f.rest(path, { key: null })).status, 200, path);
    }
  });

  test("gRPC: no key or a wrong one is UNAUTHENTICATED on every method", async () => {
    const calls: [
      service: "FoundationalService" | "CollectionsService",
      method: string,
      request: Record<string, unknown>,
    ][] = [
      ["FoundationalService", "ListContracts", {}],
      ["FoundationalService", "GetNftDetails", { contractAddress: ZERO_CONTRACT, tokenId: "1" }],
      ["FoundationalService", "GetNftRawMetadata", { contractAddress: ZERO_CONTRACT, tokenId: "1" }],
      [
        "CollectionsService",
        "GetTopCollections",
        { metric: "METRIC_SALES_VOLUME", duration: "DURATION_1_DAY" },
      ],
      ["CollectionsService", "ListCollectionOwners", { contractAddress: ZERO_CONTRACT }],
      [
        "CollectionsService",
        "GetSupply",
        {
          contractAddress: ZERO_CONTRACT,
          duration: "DURATION_1_DAY",
          groupByPeriod: "GROUP_BY_PERIOD_1_HOUR",
        },
      ],
      [
        "CollectionsService",
        "GetOwnersCount",
        {
          contractAddress: ZERO_CONTRACT,
          duration: "DURATION_1_DAY",
          groupByPeriod: "GROUP_BY_PERIOD_1_HOUR",
        },
      ],
      [
        "CollectionsService",
        "GetPrices",
        {
          contractAddress: ZERO_CONTRACT,
          duration: "DURATION_1_DAY",
          groupByPeriod: "GROUP_BY_PERIOD_1_HOUR",
        },
      ],
      [
        "CollectionsService",
        "GetSalesVolume",
        {
          contractAddress: ZERO_CONTRACT,
          duration: "DURATION_1_DAY",
          groupByPeriod: "GROUP_BY_PERIOD_1_HOUR",
        },
      ],
    ];
    for (const [service, method, request] of calls) {
      for (const key of [null, "ml_wrong"]) {
        const answer = await f.grpc(service, method, request, { key });
        assert.equal(answer.error?.code, grpc.status.UNAUTHENTICATED, `${method} with ${key}`);
      }
      const good = await f.grpc(service, method, request);
      assert.equal(
        good.error?.code ?? grpc.status.OK,
        method.startsWith("GetNft") ? grpc.status.NOT_FOUND : grpc.status.OK,
        method,
      );
    }
  });
});

describe("rate limit, metrics and logs", () => {
  let limited: RunningApi;
  const lines: Record<string, unknown>[] = [];
  const metrics = createProcessMetrics();
  let limitedKeys: KeyVerifier;
  /** A key of its own, known to the limited server's table at once. */
  const limitedKey = async (user: string) => {
    const key = await f.newKey(user);
    await limitedKeys.refresh();
    return key;
  };
  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    limitedKeys = createKeyVerifier({ sql: f.sql });
    limited = await startApi({
      sql: f.sql,
      chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort: 0 }],
      host: "127.0.0.1",
      tls: f.tls,
      guard: createGuard({
        keys: limitedKeys,
        pointsPerSecond: 1,
        burst: 5,
        failedAuthenticationsPerMinute: 0,
      }),
      metrics,
      logger: pino({ level: "silent" }),
      accessLog: pino({ level: "info" }, sink),
    });
  });
  after(async () => limited?.close());

  test("a key's requests over REST and gRPC share one bucket: beyond it, 429 with Retry-After and RESOURCE_EXHAUSTED", async () => {
    const served = limited.chains[0];
    assert.ok(served);
    const key = await limitedKey("limited");
    const other = await limitedKey("unlimited-neighbour");
    const get = (k: string) =>
      fetch(`${served.restUrl}/foundational/v1beta2/contracts?limit=1`, { headers: { "x-api-key": k } });
    const client = new (grpc.makeGenericClientConstructor({}, "unused"))(
      `localhost:${served.grpcPort}`,
      grpc.credentials.createSsl(f.tls.cert),
    );
    const grpcCall = (k: string) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        const metadata = new grpc.Metadata();
        metadata.set("x-api-key", k);
        client.makeUnaryRequest(
          "/mintlens.v1beta2.FoundationalService/ListContracts",
          () => Buffer.alloc(0),
          (b: Buffer) => b,
          {},
          metadata,
          (error) => resolve(error),
        );
      });
    // Connections opened (TLS included) before the burst, by the neighbour, whose bucket is its own.
    assert.equal((await get(other)).status, 200);
    assert.equal(await grpcCall(other), null);
    // A full bucket holds 5 points and refills at 1 a second: 5 requests in well under a second
    // take them all.
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(key)).status);
    const grpcErrors = [await grpcCall(key), await grpcCall(key)];
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.deepEqual(grpcErrors, [null, null]);
    const refused = await get(key);
    assert.ok(Date.now() - started < 900, "the burst was sent within the refill of one point");
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 1,
      `Retry-After ${retryAfter}`,
    );
    assert.deepEqual(await refused.json(), { code: 8, message: "rate limit exceeded", details: [] });
    const grpcRefused = await grpcCall(key);
    assert.equal(grpcRefused?.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.equal(grpcRefused?.metadata.get("retry-after")[0], "1");
    // Another key has its own bucket.
    assert.equal((await get(other)).status, 200);
    // And the key gets a point back within the Retry-After it was given.
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    assert.equal((await get(key)).status, 200);
    client.close();
  });

  test("metrics count requests per operation and status; access logs name the user, never the key", async () => {
    const served = limited.chains[0];
    assert.ok(served);
    const key = await limitedKey("logged");
    await fetch(`${served.restUrl}/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_7_DAYS`, {
      headers: { "x-api-key": key },
    });
    await fetch(`${served.restUrl}/collections/v1beta2/top/NOPE/DURATION_7_DAYS`, {
      headers: { "x-api-key": key },
    });
    const server = await startMetricsServer(metrics, "127.0.0.1", 0);
    try {
      const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      assert.match(
        text,
        /mintlens_api_requests_total\{chain="anvil",protocol="rest",operation="GetTopCollections",status="OK"\} [1-9]/,
      );
      assert.match(
        text,
        /mintlens_api_requests_total\{chain="anvil",protocol="rest",operation="GetTopCollections",status="INVALID_ARGUMENT"\} [1-9]/,
      );
      assert.match(
        text,
        /mintlens_api_request_duration_seconds_bucket\{le="0.005",chain="anvil",protocol="rest",operation="GetTopCollections",status="OK"\}/,
      );
      metrics.setIndexed("anvil", 120, 125);
      const after = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      assert.match(after, /mintlens_indexer_height\{chain="anvil"\} 120/);
      assert.match(after, /mintlens_indexer_lag_blocks\{chain="anvil"\} 5/);
    } finally {
      await server.close();
    }
    const mine = lines.filter((l) => l.user === "logged");
    assert.ok(mine.length >= 2);
    for (const line of mine) {
      assert.equal(line.protocol, "rest");
      assert.equal(typeof line.status, "number");
      assert.equal(typeof line.ms, "number");
    }
    assert.ok(!JSON.stringify(lines).includes(key), "no log line holds a key");
    assert.ok(!JSON.stringify(lines).includes("x-api-key"), "no log line holds the key header");
  });
});

describe("the rate limit: a token bucket, weighed by the size of each answer", () => {
  let weighted: RunningApi;
  let weightedKeys: KeyVerifier;
  const RATE = 30;
  const BURST = 10;
  before(async () => {
    weightedKeys = createKeyVerifier({ sql: f.sql });
    weighted = await startApi({
      sql: f.sql,
      chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort: 0 }],
      host: "127.0.0.1",
      tls: f.tls,
      guard: createGuard({
        keys: weightedKeys,
        pointsPerSecond: RATE,
        burst: BURST,
        failedAuthenticationsPerMinute: 0,
      }),
      metrics: createProcessMetrics(),
      logger: pino({ level: "silent" }),
    });
  });
  after(async () => weighted?.close());

  const url = () => weighted.chains[0]?.restUrl as string;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Asks `path(i)` one request at a time for `ms` (at most `most` requests): the answers let in, and their sizes. */
  async function ask(key: string, path: (i: number) => string, ms: number, most: number) {
    const admitted: { at: number; bytes: number }[] = [];
    const started = Date.now();
    for (let i = 0; i < most && Date.now() - started < ms; i++) {
      const answer = await fetch(`${url()}${path(i)}`, { headers: { "x-api-key": key } });
      const body = await answer.arrayBuffer();
      if (answer.status === 200) admitted.push({ at: Date.now(), bytes: body.byteLength });
      else {
        assert.equal(answer.status, 429);
        await sleep(5);
      }
    }
    return { admitted, seconds: (Date.now() - started) / 1000 };
  }

  test("a key asking for large answers gets far fewer of them a second than one asking for small ones", async () => {
    const small = await f.newKey("small-answers");
    const large = await f.newKey("large-answers");
    await weightedKeys.refresh();
    const contract = f.history.contracts.erc721.address.toLowerCase();
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    // A year of hourly buckets, ending at another hour each time: no two are the same question.
    const yearly = (i: number) =>
      `/collections/v1beta2/${contract}/prices/DURATION_365_DAYS/GROUP_BY_PERIOD_1_HOUR?timestampLt=${new Date(hour - i * 3_600_000).toISOString()}`;
    const [smallRun, largeRun] = await Promise.all([
      ask(small, () => "/foundational/v1beta2/contracts?limit=1", 3_000, 1_000),
      ask(large, yearly, 3_000, 1_000),
    ]);
    const largeBytes = Math.min(...largeRun.admitted.map((a) => a.bytes));
    const cost = answerCost(largeBytes);
    assert.ok(largeBytes > 4 * BYTES_PER_POINT, `a year of hours is ${largeBytes} bytes`);
    const budget = BURST + RATE * largeRun.seconds;
    assert.ok(
      largeRun.admitted.length <= Math.ceil(budget / cost) + 1,
      `${largeRun.admitted.length} answers of ${cost} points in ${largeRun.seconds} s`,
    );
    assert.ok(
      smallRun.admitted.length >= 3 * largeRun.admitted.length,
      `small ${smallRun.admitted.length}, large ${largeRun.admitted.length}`,
    );
    assert.ok(smallRun.admitted.length <= BURST + RATE * smallRun.seconds + 1);
  });

  test("no burst at a window's edge: at most the rate plus the burst in any second", async () => {
    const key = await f.newKey("edge");
    await weightedKeys.refresh();
    const path = () => "/foundational/v1beta2/contracts?limit=1";
    // One request, a pause to the end of what a fixed window would be, then as many as are let in.
    const first = await ask(key, path, 1, 1);
    assert.equal(first.admitted.length, 1);
    await sleep(900);
    const { admitted } = await ask(key, path, 1_600, 2_000);
    const times = [...first.admitted, ...admitted].map((a) => a.at);
    let most = 0;
    for (const [i, start] of times.entries()) {
      most = Math.max(most, times.slice(i).filter((t) => t < start + 1_000).length);
    }
    // One more for the time an answer takes to come back, which shifts what the client sees.
    assert.ok(most <= RATE + BURST + 1, `${most} answers in one second`);
    assert.ok(admitted.length >= RATE, `${admitted.length} answers in 1.6 s`);
  });
});

describe("public routes", () => {
  test("the OpenAPI document and the .proto files it was made from are served", async () => {
    const openapi = await f.rest("/openapi.json", { key: null });
    const { readFileSync } = await import("node:fs");
    assert.deepEqual(openapi.body, JSON.parse(readFileSync(OPENAPI_PATH, "utf8")));
    const listing = (await f.rest("/proto", { key: null })).body as { files: string[] };
    assert.ok(listing.files.includes("mintlens/v1beta2/foundational.proto"));
    assert.ok(listing.files.includes("google/api/annotations.proto"));
    const proto = await f.rest("/proto/mintlens/v1beta2/foundational.proto", { key: null });
    assert.match(proto.text, /service FoundationalService/);
    assert.equal((await f.rest("/proto/../package.json", { key: null })).status, 404);
    assert.equal((await f.rest("/no/such/route")).status, 404);
  });

  test("gRPC reflection lists the services, and the health service says SERVING", async () => {
    const require = createRequire(import.meta.url);
    const reflectionProto = join(
      dirname(require.resolve("@grpc/reflection/package.json")),
      "build/proto/grpc/reflection/v1/reflection.proto",
    );
    const loaded = grpc.loadPackageDefinition(
      loadSync([reflectionProto, healthProtoPath], { keepCase: true, enums: String }),
    ) as unknown as {
      grpc: {
        reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } };
        health: { v1: { Health: grpc.ServiceClientConstructor } };
      };
    };
    const address = `localhost:${f.grpcAddress.split(":")[1]}`;
    const credentials = grpc.credentials.createSsl(f.tls.cert);
    const reflection = new loaded.grpc.reflection.v1.ServerReflection(address, credentials);
    const services = await new Promise<string[]>((resolve, reject) => {
      const stream = (
        reflection as unknown as {
          ServerReflectionInfo(): grpc.ClientDuplexStream<
            unknown,
            { list_services_response?: { service: { name: string }[] } }
          >;
        }
      ).ServerReflectionInfo();
      stream.on("data", (message) => {
        resolve(message.list_services_response?.service.map((s: { name: string }) => s.name) ?? []);
        stream.end();
      });
      stream.on("error", reject);
      stream.write({ list_services: "" });
    });
    assert.ok(services.includes("mintlens.v1beta2.FoundationalService"), services.join());
    assert.ok(services.includes("mintlens.v1beta2.CollectionsService"));
    reflection.close();
    const health = new loaded.grpc.health.v1.Health(address, credentials);
    const status = await new Promise<unknown>((resolve, reject) =>
      (health as unknown as { Check(r: unknown, cb: (e: Error | null, r: unknown) => void): void }).Check(
        { service: "mintlens.v1beta2.CollectionsService" },
        (error, response) => (error ? reject(error) : resolve(response)),
      ),
    );
    assert.deepEqual(status, { status: "SERVING" });
    health.close();
  });
});

describe("errors", () => {
  test("each malformed value is a 400 naming its field; unknown parameters are ignored", async () => {
    const c = ZERO_CONTRACT;
    const cases: [string, string][] = [
      [`/collections/v1beta2/0x123/owners_list`, "contract_address"],
      [`/collections/v1beta2/${c}zz/owners_list`, "contract_address"],
      [`/foundational/v1beta2/nfts/${c}/-1/details`, "token_id"],
      [`/foundational/v1beta2/nfts/${c}/1e3/raw_metadata`, "token_id"],
      [`/foundational/v1beta2/nfts/${c}/${"9".repeat(79)}/details`, "token_id"],
      ["/collections/v1beta2/top/METRIC_UNSPECIFIED/DURATION_1_DAY", "metric"],
      ["/collections/v1beta2/top/metric_sales_volume/DURATION_1_DAY", "metric"],
      ["/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_2_DAYS", "duration"],
      [`/collections/v1beta2/${c}/supply/DURATION_1_DAY/GROUP_BY_PERIOD_UNSPECIFIED`, "group_by_period"],
      [`/collections/v1beta2/${c}/supply/DURATION_1_HOUR/GROUP_BY_PERIOD_1_DAY`, "group_by_period"],
      [`/collections/v1beta2/${c}/prices/DURATION_365_DAYS/GROUP_BY_PERIOD_15_MINUTES`, "group_by_period"],
      [
        `/collections/v1beta2/${c}/prices/DURATION_1_DAY/GROUP_BY_PERIOD_1_HOUR?timestampLt=2024-13-01T00:00:00Z`,
        "timestamp_lt",
      ],
      [
        `/collections/v1beta2/${c}/prices/DURATION_1_DAY/GROUP_BY_PERIOD_1_HOUR?timestampLt=0001-01-01T00:00:00Z`,
        "timestamp_lt",
      ],
      ["/foundational/v1beta2/contracts?limit=501", "limit"],
      ["/foundational/v1beta2/contracts?limit=-1", "limit"],
      ["/foundational/v1beta2/contracts?offset=-5", "offset"],
      ["/foundational/v1beta2/contracts?sortDirection=SORT_DIRECTION_UNSPECIFIED", "sort_direction"],
      ["/foundational/v1beta2/contracts?contractTypes=TYPE_ERC9999", "contract_types"],
      ["/foundational/v1beta2/contracts?blockTimestampGt=2024-01-01", "block_timestamp_gt"],
      ["/foundational/v1beta2/contracts?limit=1&limit=2", "limit"],
      [`/collections/v1beta2/${c}/owners_list?limit=501`, "limit"],
      ["/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_1_DAY?offset=1.5", "offset"],
      [`/collections/v1beta2/${c}/prices/%zz/GROUP_BY_PERIOD_1_HOUR`, "duration"],
      [`/foundational/v1beta2/nfts/${c}/%E0%A4%A/details`, "token_id"],
    ];
    for (const [path, field] of cases) {
      const answer = await f.rest(path);
      assert.equal(answer.status, 400, `${path}: ${answer.text}`);
      const body = answer.body as { code: number; message: string; details: unknown[] };
      assert.equal(body.code, 3);
      assert.ok(body.message.startsWith(`${field}: `), `${path}: ${body.message}`);
    }
    // Unknown and redundant parameters (the path's values repeated) are ignored.
    const plain = await f.rest("/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_7_DAYS");
    const noisy = await f.rest(
      "/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_7_DAYS?metric=METRIC_SALES_VOLUME&duration=DURATION_7_DAYS&chain=ethereum&foo=bar",
    );
    assert.equal(noisy.status, 200);
    assert.deepEqual(noisy.body, plain.body);
    // snake_case query names work as the camelCase ones do.
    const snake = await f.rest("/foundational/v1beta2/contracts?sort_direction=SORT_DIRECTION_DESC&limit=3");
    const camel = await f.rest("/foundational/v1beta2/contracts?sortDirection=SORT_DIRECTION_DESC&limit=3");
    assert.deepEqual(snake.body, camel.body);
  });

  test("a database that cannot be reached is 503 with the generic message, and /readyz says so", async () => {
    const down = await startApi({
      sql: Object.assign(async () => {
        throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
          code: "ECONNREFUSED",
          syscall: "connect",
        });
      }, {}) as never,
      chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort: 0 }],
      host: "127.0.0.1",
      tls: f.tls,
      guard: {
        admit: async () => ({ userName: "u", keyId: "k", charge: () => {}, acquire: async () => {} }),
      },
      metrics: createProcessMetrics(),
      logger: pino({ level: "silent" }),
    });
    try {
      const url = down.chains[0]?.restUrl;
      const answer = await fetch(`${url}/collections/v1beta2/${ZERO_CONTRACT}/owners_list`);
      assert.equal(answer.status, 503);
      assert.deepEqual(await answer.json(), {
        code: 14,
        message: "the service is temporarily unavailable; retry later",
        details: [],
      });
      assert.equal((await fetch(`${url}/readyz`)).status, 503);
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
    } finally {
      await down.close();
    }
  });
});
