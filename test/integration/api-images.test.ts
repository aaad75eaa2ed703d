/**
 * `/images/<sha256>` under load, over real sockets: a client that has an image is answered 304
 * without a read of the store; small images are read once and then served from memory; large ones
 * are streamed; a flood of requests for a large image keeps the process's memory bounded (excess
 * requests are refused 503 with Retry-After); a damaged file is not served as the image.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type RunningApi, startApi } from "../../src/api/server.ts";
import { loadTls } from "../../src/api/tls.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { type BlobStore, createBlobStore } from "../../src/media/blobs.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const MAX_READS = 4;
const LARGE_BYTES = 8 * 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let db: TestDatabase;
let api: RunningApi;
let url: string;
let dir: string;
let opened = 0;
let large: string;
let small: string;
const SMALL = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>');

before(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), "mintlens-images-"));
  const store = createBlobStore(join(dir, "blobs"));
  const bytes = Buffer.alloc(LARGE_BYTES);
  for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE((i * 2654435761) >>> 0, i);
  large = await store.put(bytes, "image/png");
  small = await store.put(SMALL, "image/svg+xml");
  const counting: BlobStore = {
    ...store,
    open: (sha) => {
      opened++;
      return store.open(sha);
    },
  };
  api = await startApi({
    sql: db.sql,
    chains: [{ name: "anvil", chainId: 31337, restPort: 0, grpcPort: 0 }],
    host: "127.0.0.1",
    tls: await loadTls(undefined, join(dir, "tls")),
    guard: { admit: () => Promise.reject(new Error("images need no key")) },
    metrics: createProcessMetrics(),
    logger: silentLogger(),
    blobs: counting,
    images: { maxReads: MAX_READS },
  });
  url = api.chains[0]?.restUrl ?? "";
});
after(async () => {
  await api?.close();
  await db?.close();
  await stopTestServer();
  rmSync(dir, { recursive: true, force: true });
});

test("If-None-Match with the image's tag is 304 without a read of the store", async () => {
  const before = opened;
  for (const tag of [`"${large}"`, `W/"${large}"`, `"other", "${large}"`]) {
    const answer = await fetch(`${url}/images/${large}`, { headers: { "if-none-match": tag } });
    assert.equal(answer.status, 304, tag);
    assert.equal(answer.headers.get("etag"), `"${large}"`);
    assert.match(answer.headers.get("cache-control") ?? "", /immutable/);
    assert.equal((await answer.arrayBuffer()).byteLength, 0);
  }
  assert.equal(opened, before);
  const other = await fetch(`${url}/images/${small}`, { headers: { "if-none-match": `"${large}"` } });
  assert.equal(other.status, 200);
  assert.deepEqual(Buffer.from(await other.arrayBuffer()), SMALL);
});

test("a small image is read from the store once, then served from memory", async () => {
  await fetch(`${url}/images/${small}`).then((r) => r.arrayBuffer());
  const before = opened;
  for (let i = 0; i < 20; i++) {
    const answer = await fetch(`${url}/images/${small}`);
    assert.equal(answer.headers.get("content-type"), "image/svg+xml");
    assert.deepEqual(Buffer.from(await answer.arrayBuffer()), SMALL);
  }
  assert.equal(opened, before);
});

test("a flood of requests for a large image keeps memory bounded: streamed, the excess refused with Retry-After", async () => {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const statuses = new Map<number, number>();
  const hashes = new Set<string>();
  const deadline = Date.now() + 60_000;
  try {
    await Promise.all(
      Array.from({ length: 200 }, async () => {
        if (Date.now() > deadline) return;
        const answer = await fetch(`${url}/images/${large}`);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 503) {
          assert.equal(answer.headers.get("retry-after"), "1");
          await answer.arrayBuffer();
          return;
        }
        assert.equal(answer.status, 200);
        assert.equal(answer.headers.get("content-length"), String(LARGE_BYTES));
        // Read as it arrives and hashed, never held whole.
        const hash = createHash("sha256");
        for await (const chunk of answer.body ?? []) hash.update(chunk as Uint8Array);
        hashes.add(hash.digest("hex"));
      }),
    );
  } finally {
    clearInterval(sampler);
  }
  assert.deepEqual([...hashes], [large]);
  assert.ok((statuses.get(200) ?? 0) >= 1, JSON.stringify([...statuses]));
  assert.deepEqual(
    [...statuses.keys()].filter((s) => s !== 200 && s !== 503),
    [],
  );
  // Read whole per request, 200 requests would hold 1.6 GiB.
  const grownMiB = (peak - baseline) / 1024 / 1024;
  assert.ok(grownMiB < 200, `the process grew by ${grownMiB.toFixed(0)} MiB`);
  // Every read ended: the store is read again as soon as a request comes.
  const again = await fetch(`${url}/images/${large}`);
  assert.equal(again.status, 200);
  await again.arrayBuffer();
});

test("a stored file that does not hash to its name is not served", async () => {
  const fake = sha256(Buffer.from("what the file should hold"));
  const folder = join(dir, "blobs", fake.slice(0, 2));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, fake), "something else");
  writeFileSync(join(folder, `${fake}.type`), "image/png");
  const answer = await fetch(`${url}/images/${fake}`);
  assert.equal(answer.status, 500);
  assert.ok(!(await answer.text()).includes("something else"));
  assert.equal((await fetch(`${url}/images/${"0".repeat(64)}`)).status, 404);
});
