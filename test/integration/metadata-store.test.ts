/**
 * Every outcome the worker can reach is stored, whatever its document held: NULs (JSON's `\u0000`
 * in names made from bytes32, NUL-padded token URIs), lone surrogates, binary bodies; attributes
 * are stored as JSON lists, and migration 0017 turns the strings earlier versions wrote into
 * lists. The API serves a binary body's token as one without a document.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeAbiParameters, type Hex } from "viem";
import type { Address } from "../../src/core/hex.ts";
import { createFetcher } from "../../src/metadata/fetch.ts";
import { findMetadata } from "../../src/metadata/worker.ts";
import { knownMigrations, migrate } from "../../src/store/pg/migrate.ts";
import {
  EMPTY_OUTCOME,
  type QueuedToken,
  storeOutcome,
  takeDueTokens,
} from "../../src/store/tables/metadata.ts";
import { type ApiClient, createApiFixtureOn } from "../support/api-client.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const CHAIN_ID = 5;
const CONTRACT = `0x${"ab".repeat(20)}` as Address;
let db: TestDatabase;
let api: ApiClient | undefined;

/** Known, queued ERC-721 tokens of CONTRACT, taken as the worker takes them. */
async function queued(ids: readonly bigint[]): Promise<QueuedToken[]> {
  const address = Buffer.from(CONTRACT.slice(2), "hex");
  await db.sql`
    INSERT INTO contracts (chain_id, address, types, mint_source, discovered_block)
    VALUES (${CHAIN_ID}, ${address}, '{TYPE_ERC721}', 'first_event', 1) ON CONFLICT DO NOTHING`;
  for (const id of ids) {
    await db.sql`
      INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
      VALUES (${CHAIN_ID}, ${address}, ${id.toString()}::numeric, 1, 0, 0, ${Buffer.alloc(32)}, now())
      ON CONFLICT DO NOTHING`;
    await db.sql`
      INSERT INTO metadata_queue (chain_id, contract, token_id, reason, due_at)
      VALUES (${CHAIN_ID}, ${address}, ${id.toString()}::numeric, 'mint', now() - interval '1 second')
      ON CONFLICT (chain_id, contract, token_id) DO UPDATE SET due_at = excluded.due_at`;
  }
  const taken = await takeDueTokens(db.sql, CHAIN_ID, ids.length, 300);
  assert.equal(taken.length, ids.length);
  return taken.sort((a, b) => Number(a.tokenId - b.tokenId));
}

const abiString = (text: string): Hex => encodeAbiParameters([{ type: "string" }], [text]);

before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await api?.close();
  await db?.close();
  await stopTestServer();
});

describe("storing what a hostile document holds", () => {
  test("NULs and lone surrogates in every field: the row is stored, attributes as a JSON list", async () => {
    const [token] = await queued([1n]);
    assert.ok(token);
    const stored = await storeOutcome(db.sql, CHAIN_ID, token, {
      ...EMPTY_OUTCOME,
      status: "ok",
      tokenUri: "ipfs://x\0\0",
      uri: "http://x.example/1\0",
      mimeType: "application/json",
      raw: '{"name":"a\0b"}\0',
      name: "Ape\0 #1\ud800",
      description: "\0",
      imageUriOriginal: "ipfs://img\0",
      animationUrl: "\0",
      externalUrl: "\0",
      attributes: [{ traitType: "Fur\0", value: "Gold\udc00", displayType: "" }],
    });
    assert.equal(stored, true);
    const [row] = await db.sql<
      { kind: string; attributes: unknown; raw: string; name: string; token_uri: string }[]
    >`SELECT jsonb_typeof(attributes) AS kind, attributes, raw, name, token_uri FROM token_metadata WHERE token_id = 1`;
    assert.equal(row?.kind, "array");
    assert.deepEqual(row?.attributes, [{ traitType: "Fur", value: "Gold\uFFFD", displayType: "" }]);
    assert.equal(row?.raw, '{"name":"a\uFFFDb"}\uFFFD');
    assert.equal(row?.name, "Ape #1\uFFFD");
    assert.equal(row?.token_uri, "ipfs://x");
  });

  test("through the worker: a bytes32 name, a NUL-padded token URI, a binary body; the API serves them", async () => {
    const doc = '{"name":"Ape #2\\u0000\\u0000","attributes":[{"trait_type":"Fur","value":"Gold\\u0000"}]}';
    const zip = Buffer.concat([Buffer.from("504b0304140000000800", "hex"), Buffer.from("a.json")]);
    const uris: Record<string, string> = {
      "2": `data:application/json,${doc}${"\0".repeat(7)}`,
      "3": `data:application/zip;base64,${zip.toString("base64")}`,
      "4": `data:application/json;base64,${Buffer.from('{"name":"tail"}\0\0\0').toString("base64")}`,
    };
    const client = {
      call: async (_to: Address, data: Hex) => abiString(uris[String(BigInt(`0x${data.slice(10)}`))] ?? ""),
    };
    const finding = {
      client,
      fetcher: createFetcher(),
      gateways: { ipfs: "http://127.0.0.1:9", arweave: "http://127.0.0.1:9" },
      perHost: <T>(_host: string, task: () => Promise<T>) => task(),
    };
    const tokens = await queued([2n, 3n, 4n]);
    for (const token of tokens) {
      const outcome = await findMetadata(token, finding);
      assert.equal(await storeOutcome(db.sql, CHAIN_ID, token, outcome), true, String(token.tokenId));
    }
    const rows = await db.sql<
      {
        t: string;
        status: string;
        error: string;
        raw: string | null;
        name: string;
        mime: string;
        attributes: unknown;
      }[]
    >`SELECT token_id::text AS t, status, error, raw, name, mime_type AS mime, attributes FROM token_metadata
      WHERE token_id BETWEEN 2 AND 4 ORDER BY token_id`;
    const [two, three, four] = rows;
    assert.equal(two?.status, "ok");
    assert.equal(two?.name, "Ape #2");
    assert.equal(two?.raw, doc, "the document as written: its \\u0000 escapes are plain text");
    assert.deepEqual(two?.attributes, [{ traitType: "Fur", value: "Gold", displayType: "" }]);
    assert.deepEqual(
      { status: three?.status, raw: three?.raw, mime: three?.mime },
      { status: "failed", raw: null, mime: "application/octet-stream" },
    );
    assert.match(three?.error ?? "", /^not a text document \(application\/octet-stream, 16 bytes\)$/);
    assert.deepEqual(
      { status: four?.status, raw: four?.raw, name: four?.name },
      { status: "ok", raw: '{"name":"tail"}', name: "tail" },
    );

    api = await createApiFixtureOn(db.sql, CHAIN_ID);
    const base = `/foundational/v1beta2/nfts/${CONTRACT}`;
    const raw = (await api.get(`${base}/2/raw_metadata`)).body as { metadata: { raw: string } };
    assert.equal(raw.metadata.raw, doc);
    const details = (await api.get(`${base}/2/details`)).body as { nft: { metadata: { name: string } } };
    assert.equal(details.nft.metadata.name, "Ape #2");
    // A binary body is no document: the token shows none, as one not fetched yet.
    assert.deepEqual((await api.get(`${base}/3/raw_metadata`)).body, { metadata: null });
    const binary = (await api.get(`${base}/3/details`)).body as { nft: { metadata: unknown } };
    assert.equal(binary.nft.metadata, null);
  });
});

describe("migration 0017", () => {
  test("attributes stored as JSON strings become the lists they hold; lists stay as they are", async () => {
    const known = await knownMigrations();
    const at = known.indexOf("0017_metadata_json");
    assert.ok(at > 0, known.join(" "));
    const old = await createTestDatabase({ migrations: at });
    try {
      const list = [{ traitType: "Fur", value: "Gold", displayType: "" }];
      // As earlier versions wrote them: the list's JSON text, sent as a parameter cast to jsonb.
      for (const [id, value] of [
        [1, JSON.stringify(list)],
        [2, "[]"],
      ] as const) {
        await old.sql`
          INSERT INTO token_metadata (chain_id, contract, token_id, status, fetched_at, attributes)
          VALUES (1, ${Buffer.alloc(20)}, ${id}, 'ok', now(), ${value}::jsonb)`;
      }
      await old.sql`
        INSERT INTO token_metadata (chain_id, contract, token_id, status, fetched_at, attributes)
        VALUES (1, ${Buffer.alloc(20)}, 3, 'ok', now(), ${old.sql.json(list)})`;
      const before = await old.sql<{ kind: string }[]>`
        SELECT jsonb_typeof(attributes) AS kind FROM token_metadata ORDER BY token_id`;
      assert.deepEqual(
        before.map((r) => r.kind),
        ["string", "string", "array"],
      );
      await migrate(old.url);
      const after = await old.sql<{ kind: string; attributes: unknown }[]>`
        SELECT jsonb_typeof(attributes) AS kind, attributes FROM token_metadata ORDER BY token_id`;
      assert.deepEqual(
        after.map((r) => [r.kind, r.attributes]),
        [
          ["array", list],
          ["array", []],
          ["array", list],
        ],
      );
    } finally {
      await old.close();
    }
  });
});
