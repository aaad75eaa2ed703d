import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  fillJsonLinks,
  fillMessageLinks,
  LINK_BASE_PLACEHOLDER,
  requestLinkBase,
} from "../../src/api/links.ts";

describe("the base of links made from the request", () => {
  test("the forwarded scheme and host win over Host; the scheme's own port is left out", () => {
    assert.equal(
      requestLinkBase({ host: "example.test:443", "x-forwarded-proto": "https" }),
      "https://example.test",
    );
    assert.equal(
      requestLinkBase({ host: "example.test:8443", "x-forwarded-proto": "HTTPS" }),
      "https://example.test:8443",
    );
    assert.equal(requestLinkBase({ host: "Example.TEST" }), "http://example.test");
    assert.equal(requestLinkBase({ host: "127.0.0.1:8080" }), "http://127.0.0.1:8080");
    assert.equal(requestLinkBase({ host: "[::1]:8080" }), "http://[::1]:8080");
    assert.equal(
      requestLinkBase({
        host: "10.0.0.5:8080",
        "x-forwarded-host": "nft.example.test, proxy.internal",
        "x-forwarded-proto": "https,http",
      }),
      "https://nft.example.test",
    );
    assert.equal(
      requestLinkBase({
        host: "10.0.0.5:8080",
        forwarded: 'for=192.0.2.1;proto=https;host="nft.example.test:443", for=10.0.0.1',
      }),
      "https://nft.example.test",
    );
  });

  test("a value that is not plainly a scheme or a host makes links bare paths", () => {
    for (const headers of [
      {},
      { host: "" },
      { host: 'evil.test"><script>' },
      { host: "evil.test/path" },
      { host: "user@evil.test" },
      { host: "evil.test:99999" },
      { host: "ok.test", "x-forwarded-host": "evil.test\\x" },
      { host: "ok.test", "x-forwarded-proto": "javascript" },
      { host: "ok.test", forwarded: "proto=ftp" },
    ]) {
      assert.equal(requestLinkBase(headers), "", JSON.stringify(headers));
    }
  });

  test("whatever the headers hold, a base is empty or a scheme and a plain host", () => {
    const text = fc.oneof(
      fc.string(),
      fc.constantFrom("https", "http", "a.test:443", "[::1]", "x.test,y.test"),
    );
    fc.assert(
      fc.property(
        fc.record(
          { host: text, "x-forwarded-host": text, "x-forwarded-proto": text, forwarded: text },
          { requiredKeys: [] },
        ),
        (headers) => {
          const base = requestLinkBase(headers);
          assert.ok(base === "" || /^https?:\/\/([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/.test(base), base);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe("filling in the base", () => {
  test("every placeholder in a JSON answer, and nothing else", () => {
    const json = Buffer.from(
      JSON.stringify({
        a: `${LINK_BASE_PLACEHOLDER}/images/1`,
        b: "/images/2",
        c: [`${LINK_BASE_PLACEHOLDER}/images/3`],
      }),
    );
    assert.deepEqual(JSON.parse(fillJsonLinks(json, "https://x.test/p").toString()), {
      a: "https://x.test/p/images/1",
      b: "/images/2",
      c: ["https://x.test/p/images/3"],
    });
    assert.deepEqual(JSON.parse(fillJsonLinks(json, "").toString()).a, "/images/1");
  });

  test("a message is copied with the base filled in; the cached one is left as it was", () => {
    const cached = {
      $typeName: "m",
      n: 5n,
      image: { uri: `${LINK_BASE_PLACEHOLDER}/images/1` },
      list: ["x"],
    };
    const filled = fillMessageLinks(cached, "https://x.test");
    assert.deepEqual(filled, {
      $typeName: "m",
      n: 5n,
      image: { uri: "https://x.test/images/1" },
      list: ["x"],
    });
    assert.equal(cached.image.uri, `${LINK_BASE_PLACEHOLDER}/images/1`);
  });
});
