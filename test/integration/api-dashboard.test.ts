/**
 * The dashboard's files as a REST listener serves them, over a real socket: without a key, with
 * the strict policy headers, index.html revalidated by its ETag and the hashed assets cached for a
 * year, and nothing else under the prefix.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import Fastify, { type FastifyInstance } from "fastify";
import { addDashboardRoutes, DASHBOARD_DIST, dashboardCsp } from "../../src/api/dashboard.ts";

let app: FastifyInstance;
let base: string;

before(async () => {
  app = Fastify();
  addDashboardRoutes(app, (reply) => reply.code(404).send({ code: 5, message: "no such file" }));
  base = await app.listen({ host: "127.0.0.1", port: 0 });
});
after(() => app.close());

const assets = readdirSync(DASHBOARD_DIST).filter((name) => name !== "index.html");

describe("the dashboard's files", () => {
  test("/ is the committed index.html, with the policy headers and no-cache", async () => {
    const answer = await fetch(`${base}/`);
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), readFileSync(join(DASHBOARD_DIST, "index.html"), "utf8"));
    assert.equal(answer.headers.get("content-type"), "text/html; charset=utf-8");
    const csp = answer.headers.get("content-security-policy") ?? "";
    assert.equal(csp, dashboardCsp());
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /img-src 'self' data:;/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(answer.headers.get("x-content-type-options"), "nosniff");
    assert.equal(answer.headers.get("cache-control"), "no-cache");
    const etag = answer.headers.get("etag");
    assert.ok(etag);
    const again = await fetch(`${base}/`, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    const weak = await fetch(`${base}/`, { headers: { "if-none-match": `"other", W/${etag}` } });
    assert.equal(weak.status, 304);
    const stale = await fetch(`${base}/`, { headers: { "if-none-match": '"other"' } });
    assert.equal(stale.status, 200);
  });

  test("each hashed asset is served under /dashboard/ for a year, with its type", async () => {
    assert.ok(assets.some((name) => name.endsWith(".js")) && assets.some((name) => name.endsWith(".css")));
    for (const name of assets) {
      const answer = await fetch(`${base}/dashboard/${name}`);
      assert.equal(answer.status, 200, name);
      assert.equal(await answer.text(), readFileSync(join(DASHBOARD_DIST, name), "utf8"), name);
      assert.equal(answer.headers.get("cache-control"), "public, max-age=31536000, immutable", name);
      assert.match(
        answer.headers.get("content-type") ?? "",
        name.endsWith(".js") ? /^text\/javascript/ : /^text\/css/,
      );
      assert.equal(answer.headers.get("x-content-type-options"), "nosniff");
      const etag = answer.headers.get("etag") ?? "";
      const cached = await fetch(`${base}/dashboard/${name}`, { headers: { "if-none-match": etag } });
      assert.equal(cached.status, 304, name);
    }
  });

  test("behind a public URL on another host, images may come from that host's origin only", async () => {
    const proxied = Fastify();
    addDashboardRoutes(proxied, (reply) => reply.code(404).send(), {
      publicUrl: "https://nft.example.test/mintlens",
    });
    const at = await proxied.listen({ host: "127.0.0.1", port: 0 });
    try {
      for (const path of ["/", `/dashboard/${assets[0]}`]) {
        const csp = (await fetch(`${at}${path}`)).headers.get("content-security-policy") ?? "";
        assert.match(csp, /(^|; )img-src 'self' data: https:\/\/nft\.example\.test(;|$)/, path);
        assert.match(csp, /(^|; )connect-src 'self'(;|$)/, path);
        assert.match(csp, /(^|; )script-src 'self'(;|$)/, path);
      }
    } finally {
      await proxied.close();
    }
  });

  test("nothing else is under /dashboard/", async () => {
    for (const path of [
      "/dashboard/index.html",
      "/dashboard/app.js",
      "/dashboard/",
      "/dashboard/..%2Fpackage.json",
      "/dashboard/%2e%2e/src",
    ]) {
      const answer = await fetch(`${base}${path}`);
      assert.equal(answer.status, 404, path);
      await answer.body?.cancel();
    }
  });
});
