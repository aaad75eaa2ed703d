import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadTls } from "../../src/api/tls.ts";
import { API_DEFAULTS, parseApiConfig, parseApiPoolConfig } from "../../src/config/api-config.ts";
import { ConfigError } from "../../src/config/config.ts";
import { parseMetricsListener } from "../../src/config/metrics-config.ts";
import { UserFacingError } from "../../src/core/errors.ts";

const problems = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  assert.fail("no configuration error");
};

describe("API configuration", () => {
  test("defaults: each chain takes the next ports from 8080 and 50051, in the order given", () => {
    const config = parseApiConfig({}, {}, ["ethereum", "polygon", "optimism"]);
    assert.deepEqual(config.listeners, [
      { name: "ethereum", restPort: 8080, grpcPort: 50051 },
      { name: "polygon", restPort: 8081, grpcPort: 50052 },
      { name: "optimism", restPort: 8082, grpcPort: 50053 },
    ]);
    assert.equal(config.host, API_DEFAULTS.host);
    assert.equal(config.metricsPort, 9464);
    assert.equal(config.rateLimit, 30);
    assert.equal(config.tls, undefined);
  });

  test("a bare port is the first chain's base, chain=port sets one; flags win over the environment", () => {
    const config = parseApiConfig(
      { restPort: ["9000", "polygon=9500"], grpcPort: ["0"], rateLimit: "0", metricsPort: "off" },
      { MINTLENS_REST_PORT: "7000", MINTLENS_GRPC_PORT: "7100", MINTLENS_HOST: "0.0.0.0" },
      ["ethereum", "polygon", "optimism"],
    );
    assert.deepEqual(
      config.listeners.map((l) => [l.restPort, l.grpcPort]),
      [
        [9000, 0],
        [9500, 0],
        [9002, 0],
      ],
    );
    assert.equal(config.host, "0.0.0.0");
    assert.equal(config.rateLimit, 0);
    assert.equal(config.metricsPort, undefined);
  });

  test("the event streams' limits: defaults, flags over the environment, every bad value listed", () => {
    const defaults = parseApiConfig({}, {}, ["ethereum"]);
    assert.equal(defaults.maxStreamsPerKey, 4);
    assert.equal(defaults.maxStreams, 500);
    assert.equal(defaults.streamStallTimeoutMs, 30_000);
    const set = parseApiConfig(
      { maxStreamsPerKey: "2", streamStallTimeout: "0.5" },
      { MINTLENS_MAX_STREAMS_PER_KEY: "9", MINTLENS_MAX_STREAMS: "40", MINTLENS_STREAM_STALL_TIMEOUT: "5" },
      ["ethereum"],
    );
    assert.deepEqual([set.maxStreamsPerKey, set.maxStreams, set.streamStallTimeoutMs], [2, 40, 500]);
    assert.deepEqual(
      problems(() =>
        parseApiConfig({ maxStreamsPerKey: "0", maxStreams: "many", streamStallTimeout: "3601" }, {}, [
          "ethereum",
        ]),
      ),
      [
        "max streams per key: 0 is not a whole number of streams from 1",
        "max streams: many is not a whole number of streams from 1",
        "stream stall timeout: 3601 is not a number of seconds above 0, at most 3600",
      ],
    );
  });

  test("the burst and the failed-authentication limit: defaults, flags over the environment, bad values", () => {
    const defaults = parseApiConfig({}, {}, ["ethereum"]);
    assert.equal(defaults.rateBurst, 10);
    assert.equal(defaults.authFailureLimit, 20);
    const set = parseApiConfig(
      { rateBurst: "50" },
      { MINTLENS_RATE_BURST: "5", MINTLENS_AUTH_FAILURES: "0" },
      ["ethereum"],
    );
    assert.equal(set.rateBurst, 50);
    assert.equal(set.authFailureLimit, 0);
    const found = problems(() => parseApiConfig({ rateBurst: "0", authFailures: "x" }, {}, ["ethereum"]));
    assert.ok(
      found.some((p) => p.startsWith("rate burst: 0 is not a whole number")),
      found.join("; "),
    );
    assert.ok(
      found.some((p) => p.startsWith("auth failures: x is not a whole number")),
      found.join("; "),
    );
  });

  test("every problem at once: bad ports, a port used twice, an unknown chain, half a certificate", () => {
    const found = problems(() =>
      parseApiConfig(
        {
          restPort: ["70000", "base=9000", "polygon=50051"],
          metricsPort: "x",
          rateLimit: "-1",
          tlsCert: "cert.pem",
        },
        {},
        ["ethereum", "polygon"],
      ),
    );
    for (const expected of [
      "rest port: 70000 is not a port",
      "rest port: base is not a configured chain",
      "polygon rest port: 50051 is also the ethereum grpc port",
      "metrics port: x is not a port",
      "rate limit: -1 is not a whole number",
      "tls: give both --tls-cert and --tls-key",
    ]) {
      assert.ok(
        found.some((p) => p.startsWith(expected)),
        `${expected} in ${found.join("; ")}`,
      );
    }
  });
});

describe("the API's connections", () => {
  test("a pool of 10 whose statements are cancelled after 5 s by default; flags win over the environment", () => {
    assert.deepEqual(parseApiPoolConfig({}, {}), { poolSize: 10, statementTimeoutMs: 5000 });
    const env = { MINTLENS_API_POOL_SIZE: "40", MINTLENS_STATEMENT_TIMEOUT_MS: "0" };
    assert.deepEqual(parseApiPoolConfig({}, env), { poolSize: 40, statementTimeoutMs: 0 });
    assert.deepEqual(parseApiPoolConfig({ apiPoolSize: "3", statementTimeout: "250" }, env), {
      poolSize: 3,
      statementTimeoutMs: 250,
    });
  });

  test("every problem at once, each naming its setting", () => {
    assert.deepEqual(
      problems(() => parseApiPoolConfig({ apiPoolSize: "0", statementTimeout: "5s" }, {})),
      [
        "api pool size: 0 is not a whole number of connections from 1 to 9999",
        "statement timeout: 5s is not a whole number of milliseconds (0: no limit)",
      ],
    );
    assert.deepEqual(
      problems(() => parseApiPoolConfig({ statementTimeout: "2147483648" }, {})),
      ["statement timeout: 2147483648 is not a whole number of milliseconds (0: no limit)"],
    );
  });
});

describe("the gRPC certificate", () => {
  test("generated once for localhost and 127.0.0.1, its key private, then reused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mintlens-tls-"));
    try {
      const first = await loadTls(undefined, dir);
      assert.equal(first.generated, true);
      const cert = new X509Certificate(first.cert);
      assert.ok(cert.checkHost("localhost"));
      assert.ok(cert.checkIP("127.0.0.1"));
      assert.equal(statSync(first.keyPath).mode & 0o077, 0, "the key is readable by its owner only");
      const again = await loadTls(undefined, dir);
      assert.equal(again.generated, false);
      assert.deepEqual(again.cert, first.cert);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("configured files are used as they are; a missing one is a clear error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mintlens-tls-"));
    try {
      const generated = await loadTls(undefined, join(dir, "gen"));
      writeFileSync(join(dir, "mine.pem"), readFileSync(generated.certPath));
      writeFileSync(join(dir, "mine.key"), readFileSync(generated.keyPath));
      const configured = await loadTls(
        { certPath: join(dir, "mine.pem"), keyPath: join(dir, "mine.key") },
        join(dir, "unused"),
      );
      assert.equal(configured.generated, false);
      assert.deepEqual(configured.cert, generated.cert);
      await assert.rejects(
        loadTls({ certPath: join(dir, "absent.pem"), keyPath: join(dir, "mine.key") }, dir),
        (error: unknown) =>
          error instanceof UserFacingError &&
          /cannot read the TLS certificate .*absent\.pem/.test(error.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("links, readiness and the metrics host", () => {
  test("defaults: links from the request, 64 blocks of lag, a heartbeat of 120 s, a head still for 600 s, metrics on the loopback address", () => {
    const config = parseApiConfig({ host: "0.0.0.0" }, {}, ["ethereum", "polygon"]);
    assert.deepEqual(config.publicUrls, {});
    assert.deepEqual(config.readyLagBlocks, { ethereum: 64, polygon: 64 });
    assert.equal(config.readyHeartbeatSeconds, 120);
    assert.deepEqual(config.readyHeadStallSeconds, { ethereum: 600, polygon: 600 });
    assert.equal(config.metricsHost, "127.0.0.1");
  });

  test("a bare value is every chain's, chain=value one chain's; flags win over the environment", () => {
    const config = parseApiConfig(
      {
        publicUrl: ["https://nft.example.test/api/", "polygon=https://polygon.example.test"],
        readyLag: ["10", "polygon=300"],
        readyHeartbeat: "30",
        readyHeadStall: ["120", "optimism=0"],
      },
      { MINTLENS_PUBLIC_URL: "https://env.example.test", MINTLENS_METRICS_HOST: "::1" },
      ["ethereum", "polygon", "optimism"],
    );
    assert.deepEqual(config.publicUrls, {
      ethereum: "https://nft.example.test/api",
      polygon: "https://polygon.example.test",
      optimism: "https://nft.example.test/api",
    });
    assert.deepEqual(config.readyLagBlocks, { ethereum: 10, polygon: 300, optimism: 10 });
    assert.equal(config.readyHeartbeatSeconds, 30);
    assert.deepEqual(config.readyHeadStallSeconds, { ethereum: 120, polygon: 120, optimism: 0 });
    assert.equal(config.metricsHost, "::1");
    const fromEnv = parseApiConfig(
      {},
      {
        MINTLENS_PUBLIC_URL: "http://[::1]:8080",
        MINTLENS_READY_LAG: "5",
        MINTLENS_READY_HEAD_STALL: "a=45",
      },
      ["a"],
    );
    assert.deepEqual(fromEnv.publicUrls, { a: "http://[::1]:8080" });
    assert.deepEqual(fromEnv.readyLagBlocks, { a: 5 });
    assert.deepEqual(fromEnv.readyHeadStallSeconds, { a: 45 });
  });

  test("every problem at once", () => {
    const found = problems(() =>
      parseApiConfig(
        {
          publicUrl: [
            "ftp://x.test",
            "base=https://b.test",
            "ethereum=https://u:p@x.test",
            "polygon=nonsense",
          ],
          readyLag: ["-1"],
          readyHeartbeat: "0",
          readyHeadStall: ["ethereum=soon"],
          metricsHost: "",
        },
        {},
        ["ethereum", "polygon"],
      ),
    );
    assert.deepEqual(found, [
      "metrics host: empty",
      "public url: base is not a configured chain",
      "public url: ftp://x.test is not an http or https URL",
      "public url: https://u:p@x.test has a user, a query or a fragment: give scheme, host and path only",
      "public url: nonsense is not a URL",
      "ready lag: -1 is not a whole number of blocks",
      "ready head stall: soon is not a whole number of at least 0",
      "ready heartbeat: 0 is not a whole number of seconds from 1",
    ]);
  });
});

describe("the metrics listener of the indexer's and the metadata worker's commands", () => {
  const parse = (input: { metricsPort?: string; metricsHost?: string }, env: Record<string, string> = {}) => {
    const found: string[] = [];
    return { listener: parseMetricsListener(input, env, undefined, found), found };
  };

  test("off unless a port is given, by flag or variable; 0 lets the system choose", () => {
    assert.deepEqual(parse({}), { listener: { port: undefined, host: "127.0.0.1" }, found: [] });
    assert.deepEqual(parse({ metricsPort: "9465" }).listener, { port: 9465, host: "127.0.0.1" });
    assert.deepEqual(parse({}, { MINTLENS_METRICS_PORT: "0", MINTLENS_METRICS_HOST: "::1" }).listener, {
      port: 0,
      host: "::1",
    });
    assert.deepEqual(
      parse({ metricsPort: "off" }, { MINTLENS_METRICS_PORT: "9465" }).listener.port,
      undefined,
    );
  });

  test("a bad port or an empty host is named", () => {
    assert.deepEqual(parse({ metricsPort: "65536", metricsHost: " " }).found, [
      "metrics port: 65536 is not a port (0 to 65535) or off",
      "metrics host: empty",
    ]);
  });
});
