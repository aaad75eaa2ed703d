/**
 * The metadata fetcher against a real HTTP server on loopback playing the web: documents with
 * wrong media types, redirects, slow and endless answers, a gzip bomb, 404s and 500s; and every
 * refused address range, redirects and DNS answers that try to reach them.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { createFetcher, FetchFailed, FetchRefused, type Resolver } from "../../src/metadata/fetch.ts";
import { sniffMediaType } from "../../src/metadata/sniff.ts";
import { parseAllowList, refusal } from "../../src/metadata/ssrf.ts";
import { resolveUri } from "../../src/metadata/uri.ts";

let server: Server;
let other: Server;
let port: number;
let otherPort: number;
const hosts: string[] = [];

const JSON_DOC = '{"name":"Token #1","image":"ipfs://x/1.png"}';
const SVG = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>';
const BOMB = gzipSync(Buffer.alloc(50 * 1024 * 1024));
const MIB = 1024 * 1024;
// Small on the wire, large once decompressed: 2 MiB (over a document's limit, under an image's) and 11 MiB.
const TWO_MIB = gzipSync(Buffer.alloc(2 * MIB, 0x20));
const ELEVEN_MIB = gzipSync(Buffer.alloc(11 * MIB, 0x20));
const PNG_2MIB = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(2 * MIB)]);
const CID = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";

before(async () => {
  server = createServer((req, res) => {
    hosts.push(String(req.headers.host));
    const path = req.url ?? "";
    if (path === "/doc.json") return res.writeHead(200, { "content-type": "text/plain" }).end(JSON_DOC);
    // The IPFS gateway: content by CID and path, with the octet-stream type gateways often give.
    if (path === `/ipfs/${CID}/1.json`)
      return res.writeHead(200, { "content-type": "application/octet-stream" }).end(JSON_DOC);
    if (path === "/image.svg")
      return res.writeHead(200, { "content-type": "application/octet-stream" }).end(SVG);
    if (path === "/redirect") return res.writeHead(302, { location: "/doc.json" }).end();
    if (path === "/loop") return res.writeHead(301, { location: "/loop" }).end();
    if (path === "/redirect-out")
      return res.writeHead(302, { location: `http://127.0.0.1:${otherPort}/` }).end();
    if (path === "/redirect-metadata")
      return res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    if (path === "/redirect-file") return res.writeHead(302, { location: "file:///etc/passwd" }).end();
    if (path === "/slow") return setTimeout(() => res.end("late"), 3_000).unref();
    if (path === "/endless") {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const push = () => {
        while (res.write(chunk)) {
          if (res.destroyed) return;
        }
        if (!res.destroyed) res.once("drain", push);
      };
      return push();
    }
    if (path === "/bomb") return res.writeHead(200, { "content-encoding": "gzip" }).end(BOMB);
    if (path === "/gzipped")
      return res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(JSON_DOC));
    if (path === "/2mib") return res.writeHead(200, { "content-encoding": "gzip" }).end(TWO_MIB);
    if (path === "/big.png") return res.writeHead(200, { "content-type": "image/png" }).end(PNG_2MIB);
    if (path === "/11mib") return res.writeHead(200, { "content-encoding": "gzip" }).end(ELEVEN_MIB);
    if (path === "/declared-huge") return res.writeHead(200, { "content-length": String(1 << 30) }).end();
    if (path === "/500") return res.writeHead(500).end("boom");
    if (path === "/429") return res.writeHead(429).end();
    return res.writeHead(404).end("no");
  });
  other = createServer((_req, res) => res.end("secret"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  otherPort = (other.address() as AddressInfo).port;
});
after(async () => {
  server.closeAllConnections();
  other.closeAllConnections();
  await new Promise((r) => server.close(r));
  await new Promise((r) => other.close(r));
});

const allowed = () =>
  createFetcher({
    allow: parseAllowList([`127.0.0.1:${port}`]),
    limits: { maxDocumentBytes: 1024 * 1024, timeoutMs: 1_000 },
  });
const base = () => `http://127.0.0.1:${port}`;

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof FetchRefused, `FetchRefused, not ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

describe("fetching from the web", () => {
  test("a document, its media type sniffed from its bytes; redirects followed; gzip decoded", async () => {
    const fetcher = allowed();
    const doc = await fetcher.fetch(`${base()}/doc.json`);
    assert.equal(doc.body.toString(), JSON_DOC);
    assert.equal(doc.declaredType, "text/plain");
    assert.equal(sniffMediaType(doc.body, doc.declaredType), "application/json");
    const svg = await fetcher.fetch(`${base()}/image.svg`);
    assert.equal(sniffMediaType(svg.body, svg.declaredType), "image/svg+xml");
    const moved = await fetcher.fetch(`${base()}/redirect`);
    assert.equal(moved.url, `${base()}/doc.json`);
    assert.equal(moved.body.toString(), JSON_DOC);
    assert.equal((await fetcher.fetch(`${base()}/gzipped`)).body.toString(), JSON_DOC);
  });

  test("an IPFS gateway on loopback: ipfs:// and other gateways' URLs are fetched from it", async () => {
    const fetcher = allowed();
    const gateways = { ipfs: base(), arweave: `${base()}/arweave` };
    for (const uri of [
      `ipfs://${CID}/1.json`,
      `ipfs://ipfs/${CID}/1.json`,
      `https://ipfs.io/ipfs/${CID}/1.json`,
      `https://${CID}.ipfs.dweb.link/1.json`,
    ]) {
      const resolved = resolveUri(uri, 1n, gateways);
      assert.equal(resolved.kind, "fetch", uri);
      if (resolved.kind !== "fetch") continue;
      assert.equal(resolved.url, `${base()}/ipfs/${CID}/1.json`, uri);
      const fetched = await fetcher.fetch(resolved.url);
      assert.equal(sniffMediaType(fetched.body, fetched.declaredType), "application/json", uri);
      assert.equal(fetched.body.toString(), JSON_DOC, uri);
    }
  });

  test("limits: redirects, time, size (also after decompression and as declared)", async () => {
    const fetcher = allowed();
    await refused(fetcher.fetch(`${base()}/loop`), /more than 5 redirects/);
    await assert.rejects(
      fetcher.fetch(`${base()}/slow`),
      (e) => e instanceof FetchFailed && /within 1000 ms/.test(e.message),
    );
    await refused(fetcher.fetch(`${base()}/endless`), /larger than 1048576 bytes/);
    await refused(fetcher.fetch(`${base()}/bomb`), /larger than 1048576 bytes/);
    await refused(fetcher.fetch(`${base()}/declared-huge`), /larger than/);
    await refused(fetcher.fetch(`${base()}/missing`), /HTTP 404/);
    await refused(fetcher.fetch(`${base()}/endless`, { kind: "image" }), /larger than 10485760 bytes/);
    await assert.rejects(
      fetcher.fetch(`${base()}/500`),
      (e) => e instanceof FetchFailed && /HTTP 500/.test(e.message),
    );
    await assert.rejects(fetcher.fetch(`${base()}/429`), (e) => e instanceof FetchFailed);
    await refused(fetcher.fetch("ftp://example.com/x"), /ftp: is not fetched/);
  });
  test("a document is cut at 1 MiB and an image at 10 MiB, by default, after decompression", async () => {
    const fetcher = createFetcher({
      allow: parseAllowList([`127.0.0.1:${port}`]),
      limits: { timeoutMs: 5_000 },
    });
    await refused(fetcher.fetch(`${base()}/2mib`), /larger than 1048576 bytes/);
    await refused(fetcher.fetch(`${base()}/2mib`, { kind: "document" }), /larger than 1048576 bytes/);
    assert.equal((await fetcher.fetch(`${base()}/2mib`, { kind: "image" })).body.length, 2 * MIB);
    await refused(fetcher.fetch(`${base()}/11mib`, { kind: "image" }), /larger than 10485760 bytes/);
    assert.equal((await fetcher.fetch(`${base()}/doc.json`)).body.toString(), JSON_DOC);
    // A token URI that is an image itself is fetched as a document: its first bytes lift the limit.
    assert.equal((await fetcher.fetch(`${base()}/big.png`)).body.length, PNG_2MIB.length);
  });
});

describe("server-side request forgery", () => {
  test("every refused range, written every way, is never connected to", async () => {
    const fetcher = createFetcher({ limits: { timeoutMs: 1_000 } });
    const reached = hosts.length;
    for (const url of [
      `${base()}/doc.json`,
      `http://localhost:${port}/doc.json`,
      `http://[::1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
      "http://10.0.0.1/",
      "http://172.16.5.4/",
      "http://192.168.1.1/",
      "http://100.64.0.1/",
      "http://0.0.0.0/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
      "http://[fe80::1]/",
      "http://[::]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[2002:7f00:1::]/",
      "http://168.63.129.16/",
    ]) {
      await refused(fetcher.fetch(url), /refused/);
    }
    assert.equal(hosts.length, reached, "no request reached the server");
  });

  test("a redirect to a refused address, another port or another scheme stops there", async () => {
    const fetcher = allowed();
    await refused(fetcher.fetch(`${base()}/redirect-out`), /127\.0\.0\.1 is a loopback/);
    await refused(fetcher.fetch(`${base()}/redirect-metadata`), /169\.254\.169\.254 is a linkLocal/);
    await refused(fetcher.fetch(`${base()}/redirect-file`), /file: is not fetched/);
  });

  test("DNS: a name is resolved once per hop and the request goes to the address vetted", async () => {
    let calls = 0;
    // Rebinding: a refused address first, then the allowed one; later lookups would answer the metadata service.
    const resolve: Resolver = async () => {
      calls++;
      return calls === 1
        ? [
            { address: "169.254.169.254", family: 4 },
            { address: "127.0.0.1", family: 4 },
          ]
        : [{ address: "169.254.169.254", family: 4 }];
    };
    const fetcher = createFetcher({
      allow: parseAllowList([`127.0.0.1:${port}`]),
      resolve,
      limits: { timeoutMs: 1_000 },
    });
    const doc = await fetcher.fetch(`http://tokens.example:${port}/doc.json`);
    assert.equal(doc.body.toString(), JSON_DOC);
    assert.equal(calls, 1);
    assert.equal(hosts.at(-1), `tokens.example:${port}`, "the name is sent as the Host");
    await refused(
      fetcher.fetch(`http://tokens.example:${port}/doc.json`),
      /tokens\.example resolves to 169\.254\.169\.254 is a linkLocal/,
    );
    const missing: Resolver = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    await refused(createFetcher({ resolve: missing }).fetch("http://nowhere.example/"), /does not resolve/);
  });

  test("the ranges themselves, and the allow-list", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      assert.equal(refusal(address, 443), undefined, address);
    }
    for (const address of [
      "127.0.0.1",
      "127.255.0.1",
      "::1",
      "10.1.2.3",
      "fc00::1",
      "169.254.0.1",
      "198.18.0.1",
      "192.0.2.1",
      "2001:db8::1",
      "::ffff:10.0.0.1",
    ]) {
      assert.notEqual(refusal(address, 443), undefined, address);
    }
    const allow = parseAllowList(["127.0.0.1:5001", "10.0.0.0/8", "[::1]:8080"]);
    assert.equal(refusal("127.0.0.1", 5001, allow), undefined);
    assert.notEqual(refusal("127.0.0.1", 5002, allow), undefined);
    assert.equal(refusal("10.9.8.7", 80, allow), undefined);
    assert.equal(refusal("::1", 8080, allow), undefined);
    assert.throws(() => parseAllowList(["not an address"]), /not an address or range/);
  });
});
