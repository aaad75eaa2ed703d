/**
 * Hostile metadata thrown at the real worker (property-based): a server on loopback answers NUL
 * names, binary bodies, bodies of 5 MiB, gzip bombs, deep nesting, slow and endless answers, wrong
 * types and huge attribute lists; contracts answer NUL-padded token URIs and `data:` URIs holding
 * the same payloads. Every token must end with a stored row, or queued for a retry within the
 * worker's budget; no row may be refused by PostgreSQL; the process must still answer. Then 32
 * hostile documents at once through `findMetadata`, with the memory they cost measured.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import v8 from "node:v8";
import vm from "node:vm";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { encodeAbiParameters, type Hex } from "viem";
import type { Address } from "../../src/core/hex.ts";
import { createFetcher } from "../../src/metadata/fetch.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import { findMetadata, MAX_ATTEMPTS, runMetadataWorker } from "../../src/metadata/worker.ts";
import type { QueuedToken } from "../../src/store/tables/metadata.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { capturingLogger } from "../support/logs.ts";

const CHAIN_ID = 7;
const CONTRACT = `0x${"cd".repeat(20)}` as Address;
const MIB = 1024 * 1024;
const TIMEOUT_MS = 400;
let db: TestDatabase;
let server: Server;
let port: number;

const repeat = (unit: string, bytes: number) => unit.repeat(Math.floor(bytes / unit.length));
const BOMB = gzipSync(Buffer.alloc(50 * MIB));
const ZIP = Buffer.concat([Buffer.from("504b0304140000000800", "hex"), Buffer.alloc(300, 7)]);
const PDF = Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << >> endobj\n", "latin1");
const WAV = Buffer.concat([
  Buffer.from("RIFF\x24\x08\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00", "latin1"),
  Buffer.alloc(64, 0x81),
]);

/** The hostile bodies the server answers, by name: just under and far over the document's limits. */
const BODIES: Record<string, Buffer | string> = {
  "nul-name": `{"name":"Ape\\u0000\\u0000\\u0000","description":"a\\u0000b","attributes":[{"trait_type":"T\\u0000","value":"V\\u0000"}]}\0\0`,
  "nul-bytes": "name\0with\0NUL bytes\0\0\0",
  surrogates: '{"name":"\\ud800","attributes":[{"trait_type":"\\udc00x","value":"\\ud83d"}]}',
  zip: ZIP,
  pdf: PDF,
  wav: WAV,
  "not-utf8": Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
  "five-mib": repeat(" ", 5 * MIB),
  "empty-arrays": `[${repeat("[],", MIB - 8)}[]]`,
  "empty-objects": `[${repeat("{},", MIB - 8)}{}]`,
  deep: `${"[".repeat(400_000)}${"]".repeat(400_000)}`,
  "deep-objects": `${'{"a":'.repeat(100)}1${"}".repeat(100)}`,
  "tiny-attributes": `{"attributes":[${repeat("1,", MIB - 40)}1]}`,
  "many-attributes": JSON.stringify({
    name: "Many",
    attributes: Array.from({ length: 20_000 }, (_, i) => ({ trait_type: `t${i}`, value: i })),
  }),
  "long-strings": JSON.stringify({
    name: "n".repeat(200_000),
    description: "d".repeat(300_000),
    image: `http://x/${"i".repeat(100_000)}`,
    attributes: [{ trait_type: "t".repeat(100_000), value: "v".repeat(100_000) }],
  }),
  null: "null",
  number: "7",
  string: '"just a string"',
  array: "[1,2,3]",
  "attributes-string": '{"name":"S","attributes":"Gold"}',
  "attributes-nested": '{"name":"N","attributes":[{"trait_type":"a","value":{"b":[1,2]}},[1],null,7,"x"]}',
  "name-types":
    '{"name":["x"],"description":{"a":1},"image":7,"attributes":{"Fur":null,"Eyes":[1],"Hat":true}}',
};

/** How a token's URI points at its body: fetched from the server, or inline, padded or not. */
type Kind = keyof typeof BODIES | "gzip-bomb" | "endless" | "slow" | "declared-huge" | "html-error";
const SERVED: Kind[] = [
  ...(Object.keys(BODIES) as Kind[]),
  "gzip-bomb",
  "endless",
  "slow",
  "declared-huge",
  "html-error",
];
/** Inline `data:` URIs of the bodies small enough for a contract to return. */
const INLINE = [
  "nul-name",
  "nul-bytes",
  "surrogates",
  "zip",
  "pdf",
  "wav",
  "not-utf8",
  "deep-objects",
  "null",
  "array",
  "attributes-nested",
  "name-types",
] as const;

interface Plan {
  kind: Kind;
  how: "http" | "data-base64" | "data-raw" | "nul-inside" | "only-nuls" | "refused-address";
  padding: number;
}

const plan: fc.Arbitrary<Plan> = fc.oneof(
  fc.record({ kind: fc.constantFrom(...SERVED), how: fc.constant("http" as const), padding: fc.nat(40) }),
  fc.record({
    kind: fc.constantFrom(...INLINE),
    how: fc.constantFrom("data-base64" as const, "data-raw" as const),
    padding: fc.nat(40),
  }),
  fc.record({
    kind: fc.constantFrom(...SERVED),
    how: fc.constantFrom("nul-inside" as const, "only-nuls" as const, "refused-address" as const),
    padding: fc.nat(40),
  }),
);

/** The string the contract returns for a token planned so: its URI, as hostile as planned. */
function tokenUri(p: Plan, id: number): string {
  const pad = "\0".repeat(p.padding);
  const body = BODIES[p.kind] ?? "";
  switch (p.how) {
    case "http":
      return `http://127.0.0.1:${port}/h/${p.kind}/${id}${pad}`;
    case "data-base64":
      return `data:application/json;base64,${Buffer.from(body).toString("base64")}${pad}`;
    case "data-raw":
      return `data:application/json,${Buffer.from(body).toString("latin1")}${pad}`;
    case "nul-inside":
      return `http://127.0.0.1:${port}/h/${p.kind}/${id}\0\x01garbage${pad}`;
    case "only-nuls":
      return "\0".repeat(32 + p.padding);
    case "refused-address":
      return `http://169.254.169.254/latest/${id}${pad}`;
  }
}

before(async () => {
  server = createServer((req, res) => {
    const [, , kind = ""] = (req.url ?? "").split("/");
    const body = BODIES[kind];
    if (body !== undefined) return res.writeHead(200, { "content-type": "application/json" }).end(body);
    if (kind === "gzip-bomb") return res.writeHead(200, { "content-encoding": "gzip" }).end(BOMB);
    if (kind === "declared-huge") return res.writeHead(200, { "content-length": String(1 << 30) }).end();
    if (kind === "html-error")
      return res.writeHead(503, { "content-type": "text/html" }).end("<html>down</html>");
    if (kind === "slow") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
      // Beyond the fetch's deadline, and ended with the server.
      return void setTimeout(() => res.end("}"), TIMEOUT_MS * 5).unref();
    }
    if (kind === "endless") {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x5b);
      const push = () => {
        while (!res.destroyed && res.write(chunk)) {}
        if (!res.destroyed) res.once("drain", push);
      };
      return push();
    }
    if (req.url === "/alive") return res.end("yes");
    return res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  db = await createTestDatabase();
  await db.sql`
    INSERT INTO contracts (chain_id, address, types, mint_source, discovered_block)
    VALUES (${CHAIN_ID}, ${Buffer.from(CONTRACT.slice(2), "hex")}, '{TYPE_ERC721}', 'first_event', 1)`;
});
after(async () => {
  await db?.close();
  await stopTestServer();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/**
 * Whether a plan's body reaches the worker as binary. Written raw into a `data:` URI, bytes
 * become characters (a PDF's high bytes are then text) and the URI ends at its first NUL.
 */
const binary = (p: Plan) =>
  p.how === "data-raw"
    ? p.kind === "zip" || p.kind === "wav"
    : ["zip", "pdf", "wav", "not-utf8"].includes(p.kind);

const abiString = (text: string): Hex => encodeAbiParameters([{ type: "string" }], [text]);
const idOf = (data: Hex) => Number(BigInt(`0x${data.slice(10)}`));

/** Queues tokens 1..n of CONTRACT, due now, with nothing stored for them yet. */
async function queue(n: number): Promise<void> {
  const address = Buffer.from(CONTRACT.slice(2), "hex");
  await db.sql`DELETE FROM token_metadata`;
  await db.sql`DELETE FROM metadata_queue`;
  await db.sql`
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT ${CHAIN_ID}, ${address}, g, 'mint' FROM generate_series(1, ${n}::int) g`;
}

describe("hostile metadata", () => {
  test("every token ends stored or in a counted retry; nothing is refused by PostgreSQL", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(plan, { minLength: 24, maxLength: 48 }), async (plans) => {
        await queue(plans.length);
        const uris = plans.map((p, i) => tokenUri(p, i + 1));
        const client = { call: async (_to: Address, data: Hex) => abiString(uris[idOf(data) - 1] ?? "") };
        const { logger, entries } = capturingLogger();
        const outcomes = new Map<number, string>();
        const stop = new AbortController();
        const worker = runMetadataWorker(
          {
            sql: db.sql,
            chainId: CHAIN_ID,
            client,
            fetcher: createFetcher({
              allow: parseAllowList([`127.0.0.1:${port}`]),
              limits: { timeoutMs: TIMEOUT_MS },
            }),
            gateways: { ipfs: `http://127.0.0.1:${port}`, arweave: `http://127.0.0.1:${port}` },
            logger,
            concurrency: 32,
            perHost: 32,
            idleMs: 20,
            onToken: (token, status) => {
              outcomes.set(Number(token.tokenId), status);
              if (outcomes.size === plans.length) stop.abort();
            },
          },
          stop.signal,
        );
        const deadline = setTimeout(() => stop.abort(), 6_000);
        await worker;
        clearTimeout(deadline);

        assert.equal(
          outcomes.size,
          plans.length,
          `worked on: ${[...outcomes.keys()].sort((a, b) => a - b).join(",")}`,
        );
        const refused = entries().filter((e) => /failed/.test(e.msg));
        assert.deepEqual(refused, [], "no outcome failed to be stored");
        const rows = await db.sql<{ t: number; status: string; error: string }[]>`
          SELECT token_id::int AS t, status, error FROM token_metadata`;
        const queued = await db.sql<{ t: number; attempts: number; error: string }[]>`
          SELECT token_id::int AS t, attempts, last_error AS error FROM metadata_queue`;
        const stored = new Map(rows.map((r) => [r.t, r]));
        const waiting = new Map(queued.map((r) => [r.t, r]));
        for (const [i, p] of plans.entries()) {
          const id = i + 1;
          const row = stored.get(id);
          const retry = waiting.get(id);
          const what = `${id} ${JSON.stringify(p)}: ${JSON.stringify(row ?? retry)}`;
          if (row === undefined) {
            assert.equal(outcomes.get(id), "retry", what);
            assert.ok(retry !== undefined && retry.attempts >= 1 && retry.attempts <= MAX_ATTEMPTS, what);
            assert.notEqual(retry.error, "", what);
            continue;
          }
          // What each plan must come to: a slow or failing server is retried, never stored as a document.
          if (p.how === "only-nuls") assert.equal(row.status, "none", what);
          else if (p.how === "refused-address") assert.match(row.error, /169\.254\.169\.254/, what);
          else if (binary(p)) assert.match(`${row.status} ${row.error}`, /^failed not a text document/, what);
          else if (["five-mib", "gzip-bomb", "endless", "declared-huge"].includes(p.kind))
            assert.match(`${row.status} ${row.error}`, /^failed larger than \d+ bytes/, what);
          else if (
            ["empty-arrays", "empty-objects", "tiny-attributes", "deep", "deep-objects"].includes(p.kind)
          )
            assert.match(
              `${row.status} ${row.error}`,
              /^failed a JSON document (of more than|nested deeper)/,
              what,
            );
          else assert.equal(row.status, "ok", what);
        }
        // Every stored attribute list is a list, of at most 1,000 attributes.
        const [lists] = await db.sql<{ bad: number; most: number }[]>`
          SELECT count(*) FILTER (WHERE jsonb_typeof(attributes) <> 'array')::int AS bad,
                 coalesce(max(jsonb_array_length(attributes)), 0)::int AS most
          FROM token_metadata`;
        assert.equal(lists?.bad, 0);
        assert.ok((lists?.most ?? 0) <= 1_000, `${lists?.most} attributes`);
        // The process, its server and the database still answer.
        assert.equal(await (await fetch(`http://127.0.0.1:${port}/alive`)).text(), "yes");
      }),
      // Each run drives the worker over a few dozen tokens; a handful of runs stays within the time budget.
      { numRuns: 3, interruptAfterTimeLimit: 15_000 },
    );
  });

  test("32 hostile documents at once cost bounded memory", async (t) => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    const kinds: Kind[] = [
      "empty-arrays",
      "empty-objects",
      "deep",
      "tiny-attributes",
      "many-attributes",
      "long-strings",
      "endless",
      "gzip-bomb",
    ];
    const tokens: QueuedToken[] = Array.from({ length: 32 }, (_, i) => ({
      contract: CONTRACT,
      tokenId: BigInt(i + 1),
      attempts: 0,
      refusals: 0,
      types: ["TYPE_ERC721"],
      lease: "0",
    }));
    const finding = {
      client: {
        call: async (_to: Address, data: Hex) =>
          abiString(`http://127.0.0.1:${port}/h/${kinds[(idOf(data) - 1) % kinds.length]}/${idOf(data)}`),
      },
      fetcher: createFetcher({ allow: parseAllowList([`127.0.0.1:${port}`]), limits: { timeoutMs: 5_000 } }),
      gateways: { ipfs: `http://127.0.0.1:${port}`, arweave: `http://127.0.0.1:${port}` },
      perHost: <T>(_host: string, task: () => Promise<T>) => task(),
    };
    const used = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    gc();
    const base = used();
    let peak = base;
    const sampler = setInterval(() => {
      peak = Math.max(peak, used());
    }, 1);
    const outcomes = await Promise.all(tokens.map((token) => findMetadata(token, finding)));
    clearInterval(sampler);
    peak = Math.max(peak, used());
    const growth = (peak - base) / MIB;
    t.diagnostic(
      `heap + external: ${(base / MIB).toFixed(0)} MiB before, peak ${(peak / MIB).toFixed(0)} MiB, growth ${growth.toFixed(0)} MiB`,
    );
    // 32 documents of at most 1 MiB, each held as bytes and as a string (twice for UTF-16),
    // plus what parsing at most 100,000 values builds (a few MiB): about 200 MiB at the very worst.
    assert.ok(growth < 256, `grew ${growth.toFixed(0)} MiB`);
    for (const [i, o] of outcomes.entries()) {
      const kind = kinds[i % kinds.length];
      if (kind === "many-attributes" || kind === "long-strings") assert.equal(o.status, "ok", kind);
      else assert.equal(o.status, "failed", kind);
      assert.ok(o.attributes.length <= 1_000);
    }
  });
});
