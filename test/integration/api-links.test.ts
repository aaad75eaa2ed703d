/**
 * The links the API hands out (a cached image's URL in an NFT's details), over real sockets: made
 * of the configured public URL, else of the host the request names as a proxy forwards it; never
 * of the address the server binds, never of another request's host, and never of a header that is
 * not plainly a host.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { type RunningApi, startApi } from "../../src/api/server.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";
import { grpcCaller } from "../support/grpc-client.ts";

let f: ApiFixture;
let path: string;
let contract: string;
let tokenId: string;
const SHA = "ab".repeat(32);

before(async () => {
  f = await startApiFixture({ days: 1, seed: "links" });
  const [token] = await f.sql<{ c: string; t: string }[]>`
    SELECT '0x' || encode(contract, 'hex') AS c, token_id::text AS t FROM tokens WHERE chain_id = ${API_CHAIN_ID}
    ORDER BY contract, token_id LIMIT 1`;
  assert.ok(token);
  contract = token.c;
  tokenId = token.t;
  await f.sql`
    INSERT INTO token_metadata (chain_id, contract, token_id, status, uri, mime_type, raw, fetched_at, name,
                                image_uri_original, image_uri, image_mime_type)
    VALUES (${API_CHAIN_ID}, ${Buffer.from(contract.slice(2), "hex")}, ${tokenId}::numeric, 'ok', 'ipfs://bafy/1.json',
            'application/json', '{}', now(), 'Linked', 'ipfs://bafy/1.png', ${`/images/${SHA}`}, 'image/png')`;
  path = `/foundational/v1beta2/nfts/${contract}/${tokenId}/details`;
  // Answers are cached until the data version moves (polled every 200 ms here).
  for (const until = Date.now() + 5_000; Date.now() < until; ) {
    if ((await f.rest(path)).text.includes("Linked")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
});
after(async () => f?.close());

/** A GET with exactly these headers (fetch will not send a Host of one's choosing). */
function get(
  base: string,
  headers: Record<string, string>,
): Promise<{ status: number; vary: string; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, headers: { "x-api-key": f.key, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            vary: String(res.headers.vary ?? ""),
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const imageUri = (body: string): string =>
  (JSON.parse(body) as { nft: { metadata: { image: { uri: string } } } }).nft.metadata.image.uri;

describe("without a public URL", () => {
  test("a link names the host the proxy forwards, with its scheme, never the bound address", async () => {
    const answer = await get(f.restUrl, { host: "example.test:443", "x-forwarded-proto": "https" });
    assert.equal(answer.status, 200);
    assert.equal(imageUri(answer.body), `https://example.test/images/${SHA}`);
    assert.match(answer.vary, /X-Forwarded-Host/);
    const forwarded = await get(f.restUrl, {
      host: "127.0.0.1",
      forwarded: "for=192.0.2.1;proto=https;host=nft.example.test",
    });
    assert.equal(imageUri(forwarded.body), `https://nft.example.test/images/${SHA}`);
  });

  test("two hosts in a row each get their own links from the one cached answer", async () => {
    const a = await get(f.restUrl, { host: "a.example.test:8080" });
    const b = await get(f.restUrl, { host: "b.example.test" });
    const again = await get(f.restUrl, { host: "a.example.test:8080" });
    assert.equal(imageUri(a.body), `http://a.example.test:8080/images/${SHA}`);
    assert.equal(imageUri(b.body), `http://b.example.test/images/${SHA}`);
    assert.equal(again.body, a.body);
    assert.ok(!b.body.includes("a.example.test"));
  });

  test("a hostile Host or forwarded header never reaches a link: the link is a bare path", async () => {
    for (const headers of [
      { host: 'evil.test"><script>alert(1)</script>' },
      { host: "evil.test/phish?x=" },
      { host: "ok.test", "x-forwarded-host": "user@evil.test" },
      { host: "ok.test", "x-forwarded-proto": "javascript" },
    ] as Record<string, string>[]) {
      const answer = await get(f.restUrl, headers);
      assert.equal(answer.status, 200, JSON.stringify(headers));
      assert.equal(imageUri(answer.body), `/images/${SHA}`, JSON.stringify(headers));
      assert.ok(!answer.body.includes("evil") && !answer.body.includes("javascript"), answer.body);
    }
  });

  test("over gRPC a link is the bare path", async () => {
    const { response, error } = await f.grpc("FoundationalService", "GetNftDetails", {
      contractAddress: contract,
      tokenId,
    });
    assert.equal(error, null);
    assert.equal(
      (response as { nft: { metadata: { image: { uri: string } } } }).nft.metadata.image.uri,
      `/images/${SHA}`,
    );
  });
});

describe("with a public URL", () => {
  let api: RunningApi;
  before(async () => {
    api = await startApi({
      sql: f.sql,
      chains: [
        {
          name: "anvil",
          chainId: API_CHAIN_ID,
          restPort: 0,
          grpcPort: 0,
          publicUrl: "https://nft.example.test/mintlens",
        },
      ],
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
  });
  after(async () => api?.close());

  test("every link is made of it, whatever host the request names, over both protocols", async () => {
    const served = api.chains[0];
    assert.ok(served);
    for (const headers of [
      { host: "127.0.0.1" },
      { host: "other.test", "x-forwarded-proto": "https" },
      { host: "bad host" },
    ] as Record<string, string>[]) {
      const answer = await get(served.restUrl, headers);
      assert.equal(imageUri(answer.body), `https://nft.example.test/mintlens/images/${SHA}`);
      assert.doesNotMatch(answer.vary, /Forwarded/);
    }
    const client = grpcCaller(`localhost:${served.grpcPort}`, f.tls, f.key);
    try {
      const { response } = await client.call("FoundationalService", "GetNftDetails", {
        contractAddress: contract,
        tokenId,
      });
      assert.equal(
        (response as { nft: { metadata: { image: { uri: string } } } }).nft.metadata.image.uri,
        `https://nft.example.test/mintlens/images/${SHA}`,
      );
    } finally {
      client.close();
    }
  });
});
