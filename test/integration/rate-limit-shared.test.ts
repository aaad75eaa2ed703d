/**
 * One key's limit across two API servers, each with its own limiter and its own connections to the
 * store, as two processes would have: counted in a real Redis, then in PostgreSQL, they admit one
 * limit between them; each in its own memory, twice. Redis killed mid-test: both keep answering
 * within their own limits, and say so in the log and the metrics; Redis back: one limit again.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { generateKey } from "../../src/api/keys.ts";
import { openKeyLimiter, type RateLimitStore } from "../../src/api/rate-limit-store.ts";
import { type RunningApi, startApi } from "../../src/api/server.ts";
import { loadTls, type TlsMaterial } from "../../src/api/tls.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { createProcessMetrics, type ProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { runCommand, startCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { capturingLogger } from "../support/logs.ts";
import { redisMissing, startRedis, type TestRedis } from "../support/redis.ts";

const RATE = 20;
const BURST = 10;
/** How long each measure sends, in s: short, yet long enough that a second server's share shows. */
const SECONDS = 2;
/** One key's allowance over the measure: what a token bucket admits, and fixed windows from the first request. */
const ONE_LIMIT = RATE * SECONDS + BURST;
/** Requests admitted just after the end while already under way, and the clocks' rounding. */
const MARGIN = RATE / 2;
/** Requests in flight at once, over both servers. */
const WORKERS = 6;
/** A bound on a measure's requests, whatever the servers answer. */
const MAX_REQUESTS = 20_000;

const skip = redisMissing();

let db: TestDatabase;
let redis: TestRedis | undefined;
let tls: TlsMaterial;
let tlsDir: string;
/** The key the requests present: one of its own per measure, so nothing one counted is left for the next. */
let key: string;

interface Server {
  api: RunningApi;
  url: string;
  metrics: ProcessMetrics;
  warnings: () => string[];
  close(): Promise<void>;
}

async function startServer(store: RateLimitStore): Promise<Server> {
  const metrics = createProcessMetrics();
  const captured = capturingLogger();
  const keys = createKeyVerifier({ sql: db.sql });
  await keys.refresh();
  const limit = await openKeyLimiter({
    store,
    pointsPerSecond: RATE,
    burst: BURST,
    logger: captured.logger,
    // A test machine shares its cores with other suites: a store answering in 100 ms (the default)
    // is not guaranteed there, and a server failing over would count on its own. A store that is
    // down fails at once, timeout or not; a store that hangs is the unit tests'.
    timeoutMs: 1_000,
    observer: {
      storeUp: (name, up) => metrics.setRateLimitStoreUp(name, up),
      fallback: (name) => metrics.countRateLimitFallback(name),
    },
  });
  const api = await startApi({
    sql: db.sql,
    chains: [{ name: "local", chainId: 31337, restPort: 0, grpcPort: 0 }],
    host: "127.0.0.1",
    tls,
    guard: createGuard({
      keys,
      pointsPerSecond: RATE,
      burst: BURST,
      limiter: limit.limiter,
      failedAuthenticationsPerMinute: 0,
    }),
    metrics,
    logger: silentLogger(),
    accessLog: silentLogger(),
  });
  const served = api.chains[0];
  assert.ok(served);
  return {
    api,
    url: `${served.restUrl}/foundational/v1beta2/contracts?limit=1`,
    metrics,
    warnings: () => captured.entries().map((e) => e.msg),
    async close() {
      await api.close();
      await limit.close();
    },
  };
}

/** Sends the key's requests to both servers for `SECONDS`; what each admitted, and any other status. */
async function measure(servers: Server[]): Promise<{ admitted: number[]; others: number[] }> {
  const admitted = servers.map(() => 0);
  const others: number[] = [];
  const deadline = performance.now() + SECONDS * 1000;
  let sent = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, worker) => {
      const index = worker % servers.length;
      const server = servers[index];
      assert.ok(server);
      while (performance.now() < deadline && sent < MAX_REQUESTS) {
        sent++;
        const answer = await fetch(server.url, { headers: { "x-api-key": key } });
        await answer.arrayBuffer();
        if (answer.status === 200) admitted[index] = (admitted[index] ?? 0) + 1;
        else if (answer.status !== 429) others.push(answer.status);
      }
    }),
  );
  return { admitted, others };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

async function metricValue(server: Server, name: string): Promise<number | undefined> {
  const text = await server.metrics.registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

async function newKey(): Promise<string> {
  const made = generateKey();
  await insertApiKey(db.sql, { userName: `limit-${made.keyId}`, keyId: made.keyId, keyHash: made.hash });
  return made.key;
}

/**
 * Two servers on `store`, and `keys` new keys they know from the start (a key made later would be
 * unknown to them for a couple of seconds), the first of them in `key`.
 */
async function withServers<T>(
  store: RateLimitStore,
  run: (servers: Server[], keys: string[]) => Promise<T>,
  keys = 1,
): Promise<T> {
  const made: string[] = [];
  for (let i = 0; i < keys; i++) made.push(await newKey());
  key = made[0] as string;
  const servers = [await startServer(store), await startServer(store)];
  try {
    return await run(servers, made);
  } finally {
    for (const server of servers) await server.close();
  }
}

before(async () => {
  db = await createTestDatabase();
  tlsDir = mkdtempSync(join(tmpdir(), "mintlens-limit-tls-"));
  tls = await loadTls(undefined, tlsDir);
  if (skip === undefined) redis = await startRedis();
});

after(async () => {
  await redis?.stop();
  await db?.close();
  await stopTestServer();
  rmSync(tlsDir, { recursive: true, force: true });
});

describe("one key's limit across two API servers", () => {
  test("each in its own memory: twice the limit between them (what a shared store is for)", async () => {
    const { admitted, others } = await withServers({ kind: "memory" }, measure);
    assert.deepEqual(others, []);
    for (const n of admitted)
      assert.ok(n >= RATE * (SECONDS - 1) + BURST && n <= ONE_LIMIT + MARGIN, `${admitted}`);
    assert.ok(sum(admitted) > ONE_LIMIT + MARGIN, `${admitted}`);
  });

  test("counted in Redis: one limit between them", { skip }, async () => {
    assert.ok(redis);
    const { admitted, others } = await withServers({ kind: "redis", url: redis.url }, measure);
    assert.deepEqual(others, []);
    const total = sum(admitted);
    assert.ok(total >= RATE * (SECONDS - 1) && total <= ONE_LIMIT + MARGIN, `${admitted}`);
    assert.ok(
      admitted.every((n) => n > 0),
      `both servers admitted some: ${admitted}`,
    );
  });

  test("counted in PostgreSQL: one limit between them", async () => {
    const { admitted, others } = await withServers({ kind: "postgres", url: db.url }, measure);
    assert.deepEqual(others, []);
    const total = sum(admitted);
    assert.ok(total >= RATE * (SECONDS - 1) && total <= ONE_LIMIT + MARGIN, `${admitted}`);
    assert.ok(
      admitted.every((n) => n > 0),
      `both servers admitted some: ${admitted}`,
    );
    const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rate_limits`;
    assert.ok((row?.n ?? 0) > 0, "the counters are rows of the migrated table");
  });

  test("Redis killed: each server keeps answering within its own limit and says so; back: one limit again", {
    skip,
  }, async () => {
    const store = redis;
    assert.ok(store);
    await withServers(
      { kind: "redis", url: store.url },
      async (servers, keys) => {
        await store.kill();
        const down = await measure(servers);
        assert.deepEqual(down.others, [], "no request failed for the store");
        for (const n of down.admitted) {
          assert.ok(
            n >= RATE * (SECONDS - 1) + BURST && n <= ONE_LIMIT + MARGIN,
            `each within its own limit: ${down.admitted}`,
          );
        }
        for (const server of servers) {
          assert.equal(await metricValue(server, "mintlens_rate_limit_store_up"), 0);
          assert.ok(((await metricValue(server, "mintlens_rate_limit_fallbacks_total")) ?? 0) > 0);
          const said = server.warnings().filter((m) => m.startsWith("rate limit store is not answering"));
          assert.equal(said.length, 1, "said once, not per request");
        }

        await store.restart();
        key = keys[1] as string;
        // The client reconnects within a second, and the next probe finds it.
        const deadline = performance.now() + 10_000;
        for (const server of servers) {
          while ((await metricValue(server, "mintlens_rate_limit_store_up")) !== 1) {
            assert.ok(performance.now() < deadline, "the servers found Redis back within 10 s");
            await fetch(server.url, { headers: { "x-api-key": key } }).then((a) => a.arrayBuffer());
            await sleep(100);
          }
          assert.ok(server.warnings().some((m) => m.startsWith("rate limit store answers again")));
        }
        key = keys[2] as string;
        const back = await measure(servers);
        assert.deepEqual(back.others, []);
        const state = await Promise.all(
          servers.map(async (s) => [
            await metricValue(s, "mintlens_rate_limit_fallbacks_total"),
            s.warnings(),
          ]),
        );
        assert.ok(
          sum(back.admitted) <= ONE_LIMIT + MARGIN,
          `one limit again: ${back.admitted} ${JSON.stringify(state)}`,
        );
      },
      3,
    );
  });
});

describe("mintlens serve --rate-limit-store", () => {
  test("the flag reaches the limit: the key's counters are in Redis and its requests beyond them refused", {
    skip,
  }, async () => {
    assert.ok(redis);
    const limited = await newKey();
    const serve = startCommand([
      "serve",
      "--database-url",
      db.url,
      "--data-dir",
      tlsDir,
      "--chain",
      "local",
      "--chain-id",
      "local=31337",
      "--rest-port",
      "0",
      "--grpc-port",
      "0",
      "--metrics-port",
      "off",
      "--rate-limit",
      "2",
      "--rate-burst",
      "1",
      "--rate-limit-store",
      redis.url,
    ]);
    const client = new Redis(redis.url);
    try {
      const rest = (await serve.restUrls(["local"])).get("local");
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const answer = await fetch(`${rest}/foundational/v1beta2/contracts?limit=1`, {
          headers: { "x-api-key": limited },
        });
        await answer.arrayBuffer();
        statuses.push(answer.status);
      }
      assert.ok(statuses.filter((s) => s === 200).length <= 3 + 1, `${statuses}`);
      assert.ok(statuses.includes(429), `${statuses}`);
      const counters = await client.keys("mintlens:*");
      assert.ok(
        counters.some((k) => k.startsWith("mintlens:rate:")),
        `${counters}`,
      );
    } finally {
      client.disconnect();
      serve.stop();
    }
    assert.equal(await serve.exited, 0, serve.stderr().slice(-2000));
  });

  test("a database without the rate_limits table, or a store of another kind, stops it with one line", async () => {
    const unmigrated = new URL(db.url);
    unmigrated.pathname = "/postgres";
    const common = ["serve", "--database-url", db.url, "--chain", "local", "--chain-id", "local=31337"];
    const ports = ["--rest-port", "0", "--grpc-port", "0", "--metrics-port", "off", "--data-dir", tlsDir];
    const missing = await runCommand([...common, ...ports, "--rate-limit-store", unmigrated.toString()]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /rate limit store: the database at .* has no rate_limits table: run mintlens migrate/,
    );
    const other = await runCommand([...common, ...ports, "--rate-limit-store", "memcached://cache:11211"]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /rate limit store: memcached:\/\/cache:11211 is not memory, a redis:\/\/ URL/);
  });
});
