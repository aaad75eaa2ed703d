/**
 * The image cache in an S3-compatible store, against a real one (s3rver) on loopback: the key
 * layout and the media type as the object's Content-Type, an image shared by many tokens uploaded
 * once, missing images, and the failures an operator meets (wrong credentials, no such bucket, an
 * endpoint that is down or failing), through the store and through the REST route that serves it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import type { Guard } from "../../src/api/guard.ts";
import { createImageServer } from "../../src/api/images.ts";
import { DEFAULT_READINESS, judgeChain } from "../../src/api/readiness.ts";
import { createRestServer } from "../../src/api/rest.ts";
import { openBlobStore } from "../../src/cli/open-blob-store.ts";
import { parseBlobStoreConfig } from "../../src/config/blob-store-config.ts";
import { TransientError, UserFacingError } from "../../src/core/errors.ts";
import { silentLogger } from "../../src/core/logger.ts";
import type { BlobStore } from "../../src/media/blobs.ts";
import {
  BlobStoreRefusedError,
  BlobStoreUnavailableError,
  createS3BlobStore,
  type S3BlobStore,
  type S3BlobStoreOptions,
} from "../../src/media/blobs-s3.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { closedPort, S3_CREDENTIALS, type S3TestServer, startS3Server } from "../support/s3-server.ts";

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from("a small image, as far as anyone asks"),
]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>');
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let s3: S3TestServer;
/** A server that answers every request 503 SlowDown, as a store under too much load does. */
let overloaded: Server;
const stores: S3BlobStore[] = [];

const storeOf = (options: Partial<S3BlobStoreOptions> = {}): S3BlobStore => {
  const store = createS3BlobStore({
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    prefix: "tokens/",
    region: "us-east-1",
    credentials: S3_CREDENTIALS,
    forcePathStyle: true,
    ...options,
  });
  stores.push(store);
  return store;
};

before(async () => {
  s3 = await startS3Server();
  overloaded = createServer((_request, response) => {
    response
      .writeHead(503, { "content-type": "application/xml" })
      .end(
        '<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
      );
  });
  await new Promise<void>((resolve) => overloaded.listen(0, "127.0.0.1", resolve));
});

after(async () => {
  for (const store of stores) store.close();
  await new Promise((resolve) => overloaded.close(resolve));
  await s3.close();
});

describe("S3 blob store", () => {
  test("an image is stored at <prefix><first two hex>/<sha256> with its media type as Content-Type, and read back", async () => {
    const store = storeOf();
    const sha = await store.put(PNG, "image/png");
    assert.equal(sha, sha256(PNG));
    assert.deepEqual(await store.get(sha), { bytes: PNG, mimeType: "image/png" });

    // Read with a client of its own: the layout is the directory store's, the type is the object's.
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: S3_CREDENTIALS,
    });
    try {
      const object = await client.send(
        new GetObjectCommand({ Bucket: s3.bucket, Key: `tokens/${sha.slice(0, 2)}/${sha}` }),
      );
      assert.equal(object.ContentType, "image/png");
      assert.deepEqual(Buffer.from((await object.Body?.transformToByteArray()) ?? []), PNG);
    } finally {
      client.destroy();
    }
  });

  test("the same image stored again is not uploaded again; another image is", async () => {
    const store = storeOf({ prefix: "dedup/" });
    const first = await store.put(SVG, "image/svg+xml");
    const key = `dedup/${first.slice(0, 2)}/${first}`;
    assert.equal(s3.written.filter((k) => k === key).length, 1);

    assert.equal(await store.put(Uint8Array.from(SVG), "image/svg+xml"), first);
    assert.equal(await storeOf({ prefix: "dedup/" }).put(SVG, "image/svg+xml"), first);
    assert.equal(s3.written.filter((k) => k === key).length, 1, "a stored image was uploaded again");

    const other = Buffer.concat([SVG, Buffer.from("<!-- another -->")]);
    const second = await store.put(other, "image/svg+xml");
    assert.notEqual(second, first);
    assert.deepEqual(
      s3.written.filter((k) => k.startsWith("dedup/")),
      [key, `dedup/${second.slice(0, 2)}/${second}`],
    );
  });

  test("without a prefix the keys start at the bucket's root", async () => {
    const store = storeOf({ prefix: undefined });
    const bytes = Buffer.from("GIF89a, at the root");
    const sha = await store.put(bytes, "image/gif");
    assert.ok(s3.written.includes(`${sha.slice(0, 2)}/${sha}`), s3.written.join(", "));
    assert.equal((await store.get(sha))?.mimeType, "image/gif");
    assert.equal(store.location, `s3://${s3.bucket}`);
  });

  test("an image that is not there, or a name that is not a SHA-256, is undefined", async () => {
    const store = storeOf();
    assert.equal(await store.get("0".repeat(64)), undefined);
    assert.equal(await store.get("../../etc/passwd"), undefined);
    assert.equal(await store.get(sha256(PNG).toUpperCase()), undefined);
    // Stored under another prefix is not stored under this one.
    const sha = await storeOf({ prefix: "elsewhere/" }).put(Buffer.from("elsewhere"), "image/png");
    assert.equal(await store.get(sha), undefined);
  });

  test("an unknown access key is refused with a message that says to check the credentials", async () => {
    const store = storeOf({ credentials: { accessKeyId: "NOT-A-KEY", secretAccessKey: "x" } });
    for (const attempt of [
      () => store.get(sha256(PNG)),
      () => store.put(Buffer.from("refused"), "image/png"),
      () => store.check(),
    ]) {
      await assert.rejects(attempt, (error: Error) => {
        assert.ok(error instanceof BlobStoreRefusedError, String(error));
        assert.ok(error instanceof UserFacingError);
        assert.match(error.message, /^image store s3:\/\/images\/tokens\/: .* refused: access denied/);
        assert.match(error.message, /AWS_ACCESS_KEY_ID/);
        return true;
      });
    }
  });

  test("a bucket that does not exist is refused as such, not taken for a missing image", async () => {
    const store = storeOf({ bucket: "no-such-bucket" });
    await assert.rejects(
      store.get(sha256(PNG)),
      /s3:\/\/no-such-bucket\/tokens\/: reading an image refused: no such bucket/,
    );
    await assert.rejects(store.check(), /opening the bucket refused: no such bucket/);
  });

  test("an endpoint that is down is unavailable, a passing fault, and says why", async () => {
    const store = storeOf({ endpoint: `http://127.0.0.1:${await closedPort()}` });
    await assert.rejects(store.get(sha256(PNG)), (error: Error) => {
      assert.ok(error instanceof BlobStoreUnavailableError, String(error));
      assert.ok(error instanceof TransientError);
      assert.match(
        error.message,
        /^image store s3:\/\/images\/tokens\/: reading an image failed: .*ECONNREFUSED/,
      );
      return true;
    });
    await assert.rejects(store.put(PNG, "image/png"), BlobStoreUnavailableError);
  });

  test("a store that answers 503 SlowDown is unavailable too", async () => {
    const port = (overloaded.address() as AddressInfo).port;
    const store = storeOf({ endpoint: `http://127.0.0.1:${port}` });
    await assert.rejects(store.get(sha256(PNG)), (error: Error) => {
      assert.ok(error instanceof BlobStoreUnavailableError, String(error));
      assert.match(error.message, /reading an image failed: HTTP 503 SlowDown/);
      return true;
    });
  });
});

describe("opening the configured store", () => {
  const lifecycle = () => {
    const releases: (() => unknown)[] = [];
    return {
      signal: new AbortController().signal,
      defer: (release: () => unknown) => releases.push(release),
      release: async () => {
        for (const release of releases.reverse()) await release();
      },
    };
  };

  test("an s3:// URL with an endpoint opens the bucket, with the credentials of the environment", async () => {
    const config = parseBlobStoreConfig(
      { blobStore: `s3://${s3.bucket}/opened?endpoint=${s3.endpoint}` },
      { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" },
      "/unused",
    );
    const life = lifecycle();
    try {
      const store = await openBlobStore(config, silentLogger(), life);
      const sha = await store.put(PNG, "image/png");
      assert.ok(s3.written.includes(`opened/${sha.slice(0, 2)}/${sha}`));
      assert.equal((await store.get(sha))?.mimeType, "image/png");
    } finally {
      await life.release();
    }
  });

  test("a bucket that refuses stops the command at start, naming the option", async () => {
    const config = parseBlobStoreConfig(
      { blobStore: `s3://${s3.bucket}?endpoint=${s3.endpoint}` },
      { AWS_ACCESS_KEY_ID: "WRONG", AWS_SECRET_ACCESS_KEY: "WRONG" },
      "/unused",
    );
    const life = lifecycle();
    try {
      await assert.rejects(openBlobStore(config, silentLogger(), life), (error: Error) => {
        assert.ok(error instanceof UserFacingError);
        assert.match(
          error.message,
          /^--blob-store: image store s3:\/\/images: opening the bucket refused: access denied/,
        );
        return true;
      });
    } finally {
      await life.release();
    }
  });
});

describe("the REST route /images/<sha256> over an S3 store", () => {
  const logged: { msg: string; err?: { message?: string } }[] = [];
  const servers: FastifyInstance[] = [];

  /** A REST listener with no API operations: the image route needs no key, so the guard is never asked. */
  const listen = async (blobs: BlobStore): Promise<string> => {
    const guard: Guard = {
      admit: () => Promise.reject(new Error("no API operation is served here")),
    };
    const logger = pino(
      { level: "error" },
      { write: (line: string) => logged.push(JSON.parse(line) as (typeof logged)[number]) },
    );
    const app = await createRestServer({
      chain: "test",
      operations: new Map(),
      guard,
      metrics: createProcessMetrics(),
      logger,
      accessLog: silentLogger(),
      readiness: async () => judgeChain({ name: "test", chainId: 1, policy: DEFAULT_READINESS }, undefined),
      freshness: () => undefined,
      images: createImageServer({ blobs }),
    });
    servers.push(app);
    return app.listen({ host: "127.0.0.1", port: 0 });
  };

  after(async () => {
    for (const app of servers) await app.close();
  });

  test("serves an image stored in the bucket with its media type; a missing one is 404", async () => {
    const store = storeOf({ prefix: "served/" });
    const sha = await store.put(SVG, "image/svg+xml");
    const url = await listen(store);
    const served = await fetch(`${url}/images/${sha}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get("content-type"), "image/svg+xml");
    assert.equal(served.headers.get("etag"), `"${sha}"`);
    assert.match(served.headers.get("content-security-policy") ?? "", /sandbox/);
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), SVG);

    const missing = await fetch(`${url}/images/${"ab".repeat(32)}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { code: 5, message: "no such image", details: [] });
  });

  test("an image larger than the memory cache is streamed from the bucket; a small one is read once", async () => {
    const store = storeOf({ prefix: "streamed/" });
    // Not the same byte over and over, so that a chunk repeated or left out changes the hash.
    const large = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < large.length; i += 4) large.writeUInt32LE((i * 2654435761) >>> 0, i);
    const big = await store.put(large, "image/png");
    const small = await store.put(SVG, "image/svg+xml");
    let opened = 0;
    const url = await listen({
      ...store,
      open: (sha) => {
        opened++;
        return store.open(sha);
      },
    });
    const served = await fetch(`${url}/images/${big}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get("content-length"), String(large.length));
    assert.equal(sha256(Buffer.from(await served.arrayBuffer())), big);
    for (let i = 0; i < 3; i++) {
      const again = await fetch(`${url}/images/${small}`);
      assert.deepEqual(Buffer.from(await again.arrayBuffer()), SVG);
    }
    assert.equal(opened, 2, "the large image once, the small one once: then from memory");
    // A client that has the image is told so without a read of the bucket.
    const kept = await fetch(`${url}/images/${big}`, { headers: { "if-none-match": `"${big}"` } });
    assert.equal(kept.status, 304);
    assert.equal(opened, 2);
  });

  test("a store that is down answers 503, not 404, and the cause is logged", async () => {
    logged.length = 0;
    const url = await listen(storeOf({ endpoint: `http://127.0.0.1:${await closedPort()}` }));
    const answer = await fetch(`${url}/images/${sha256(PNG)}`);
    assert.equal(answer.status, 503);
    assert.equal(((await answer.json()) as { code: number }).code, 14);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]?.msg, "request failed");
    assert.match(logged[0]?.err?.message ?? "", /reading an image failed: .*ECONNREFUSED/);
  });

  test("a store that refuses the credentials answers 500, and the cause is logged", async () => {
    logged.length = 0;
    const url = await listen(storeOf({ credentials: { accessKeyId: "NOT-A-KEY", secretAccessKey: "x" } }));
    const answer = await fetch(`${url}/images/${sha256(PNG)}`);
    assert.equal(answer.status, 500);
    assert.deepEqual(await answer.json(), { code: 13, message: "internal error", details: [] });
    assert.match(logged[0]?.err?.message ?? "", /refused: access denied/);
  });
});
