/**
 * A collection's traits and each token's rarity, end to end: the demo's collections pointed at
 * their metadata, indexed, their documents fetched by the worker and ranked, then read over REST
 * and gRPC and checked against a replay computed here from the token_metadata rows. A refetch
 * that changes an attribute moves one count; a removed document takes its traits out; the lists
 * page without repeats or gaps; the answers have the recorded answers' form.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import type { Address } from "../../src/core/hex.ts";
import { classifyAttribute } from "../../src/core/traits.ts";
import type { HistorySummary } from "../../src/demo/activity.ts";
import { type DemoMetadataServer, startDemoMetadataServer } from "../../src/demo/metadata-server.ts";
import { DEMO_METADATA_NAMES, pointDemoMetadata } from "../../src/demo/metadata-setup.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { createBlobStore } from "../../src/media/blobs.ts";
import {
  EMPTY_OUTCOME,
  queueTokens,
  type StoredAttribute,
  storeOutcome,
  takeDueTokens,
} from "../../src/store/tables/metadata.ts";
import { rankDueCollections } from "../../src/store/tables/rarity.ts";
import { type ApiClient, createApiFixtureOn } from "../support/api-client.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";
import { drainMetadataQueue } from "../support/metadata-worker.ts";

const CHAIN_ID = 31337;
const RECORDED = fileURLToPath(
  new URL("../../../shared/realdata/dashbrd-mnemonic-responses", import.meta.url),
);
const NOW_RANKED = { settleSeconds: 0, maxBehindSeconds: 0, collectionsPerPass: 100 };

let anvil: Anvil;
let db: TestDatabase;
let server: DemoMetadataServer;
let history: HistorySummary;
let api: ApiClient;
const blobDir = mkdtempSync(join(tmpdir(), "mintlens-traits-blobs-"));

type Json = Record<string, unknown>;
const hex = (address: string) => Buffer.from(address.slice(2), "hex");
/** PostgreSQL's COLLATE "C" order: the bytes of the UTF-8 text. */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function indexToHead(): Promise<void> {
  const head = Number(await rawRpc<string>(anvil.url, "eth_blockNumber", []));
  await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
}

function drainQueue(): Promise<void> {
  return drainMetadataQueue({
    sql: db.sql,
    chainId: CHAIN_ID,
    rpcUrl: anvil.url,
    server,
    ranked: true,
    timeoutMs: 60_000,
  });
}

// ---------------------------------------------------------------------------------------------
// The replay: what the answers must be, from the stored documents alone.

interface Replay {
  documents: number;
  strings: { name: string; value: string; count: number }[];
  numerics: { name: string; displayType: string; min: number; max: number }[];
  /** Per token id: score and rank. */
  rarity: Map<string, { score: number; rank: number }>;
}

async function replay(contract: string): Promise<Replay> {
  const rows = await db.sql<{ id: string; attributes: StoredAttribute[] }[]>`
    SELECT token_id::text AS id, attributes FROM token_metadata
    WHERE chain_id = ${CHAIN_ID} AND contract = ${hex(contract)} AND status = 'ok'`;
  const n = rows.length;
  const strings = new Map<string, { name: string; value: string; count: number }>();
  const numerics = new Map<string, { name: string; displayType: string; min: number; max: number }>();
  const perToken = new Map<string, Map<string, Set<string>>>();
  for (const row of rows) {
    const mine = new Map<string, Set<string>>();
    perToken.set(row.id, mine);
    for (const attribute of row.attributes) {
      const trait = classifyAttribute(attribute);
      if (trait.kind === "numeric") {
        const key = `${trait.name}\u0000${trait.displayType}`;
        const seen = numerics.get(key);
        numerics.set(key, {
          name: trait.name,
          displayType: trait.displayType,
          min: Math.min(seen?.min ?? trait.value, trait.value),
          max: Math.max(seen?.max ?? trait.value, trait.value),
        });
        continue;
      }
      const values = mine.get(trait.name) ?? new Set<string>();
      mine.set(trait.name, values);
      if (values.has(trait.value)) continue;
      values.add(trait.value);
      const key = `${trait.name}\u0000${trait.value}`;
      const entry = strings.get(key) ?? { name: trait.name, value: trait.value, count: 0 };
      entry.count++;
      strings.set(key, entry);
    }
  }
  // Information content, directly: over every name, the token's values, or "absent".
  const names = new Set([...strings.values()].map((s) => s.name));
  const holders = (name: string) => [...perToken.values()].filter((m) => m.has(name)).length;
  const scores = new Map<string, number>();
  for (const [id, mine] of perToken) {
    let bits = 0;
    for (const name of names) {
      const values = mine.get(name);
      if (values === undefined) bits += -Math.log2((n - holders(name)) / n);
      else for (const v of values) bits += -Math.log2((strings.get(`${name}\u0000${v}`)?.count ?? 0) / n);
    }
    scores.set(id, bits);
  }
  const rarity = new Map<string, { score: number; rank: number }>();
  for (const [id, score] of scores) {
    const rarer = [...scores.values()].filter((s) => s - score > 1e-7).length;
    rarity.set(id, { score, rank: rarer + 1 });
  }
  return {
    documents: n,
    strings: [...strings.values()].sort((a, b) => byteOrder(a.name, b.name) || byteOrder(a.value, b.value)),
    numerics: [...numerics.values()].sort(
      (a, b) => byteOrder(a.name, b.name) || byteOrder(a.displayType, b.displayType),
    ),
    rarity,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading the lists whole, page by page.

async function restPages(path: string, limit: number): Promise<Json[]> {
  const all: Json[] = [];
  let token = "";
  for (let pages = 0; pages < 500; pages++) {
    const answer = await api.get(
      `${path}?limit=${limit}${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`,
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const body = answer.body as { traits: Json[]; nextPageToken: string };
    assert.ok(body.traits.length <= limit);
    all.push(...body.traits);
    if (body.nextPageToken === "") return all;
    assert.equal(body.traits.length, limit, "only the last page is short");
    token = body.nextPageToken;
  }
  throw new Error("more than 500 pages");
}

async function grpcAll(method: "ListStringTraits" | "ListNumericTraits", contract: string): Promise<Json[]> {
  const all: Json[] = [];
  let pageToken = "";
  for (let pages = 0; pages < 500; pages++) {
    const { error, response } = await api.grpc("CollectionsService", method, {
      contractAddress: contract,
      limit: 2,
      ...(pageToken ? { pageToken } : {}),
    });
    assert.equal(error, null);
    const body = response as { traits: Json[]; nextPageToken: string };
    all.push(...body.traits);
    if (body.nextPageToken === "") return all;
    pageToken = body.nextPageToken;
  }
  throw new Error("more than 500 pages");
}

const expectedStrings = (r: Replay) =>
  r.strings.map((s) => ({
    name: s.name,
    value: s.value,
    nftsCount: String(s.count),
    nftsPercentage: (s.count / r.documents) * 100,
  }));
const expectedNumerics = (r: Replay) =>
  r.numerics.map((t) => ({ name: t.name, displayType: t.displayType, valueMin: t.min, valueMax: t.max }));

/** The answer of `path` once the API's cache has seen the newest data (it polls the version every 100 ms). */
async function settled(path: string, expected: unknown): Promise<unknown> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const body = (await api.get(path)).body;
    try {
      assert.deepEqual(body, expected);
      return body;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const collections: { key: string; address: string; replay: Replay }[] = [];

before(async () => {
  ({ anvil, history } = await startHistoryChain({
    chainId: CHAIN_ID,
    seed: "traits",
    days: 4,
    genesis: "recent",
  }));
  server = await startDemoMetadataServer(DEMO_METADATA_NAMES);
  await pointDemoMetadata(anvil.url, history.contracts, server);
  db = await createTestDatabase();
  api = await createApiFixtureOn(db.sql, CHAIN_ID, createBlobStore(blobDir));
  await indexToHead();
  await drainQueue();
  // Whatever the worker's last pass left behind is ranked now.
  await rankDueCollections(db.sql, CHAIN_ID, NOW_RANKED);
  for (const [key, contract] of Object.entries(history.contracts)) {
    const r = await replay(contract.address);
    if (r.documents > 0) collections.push({ key, address: contract.address.toLowerCase(), replay: r });
  }
});
after(async () => {
  await api?.close();
  await db?.close();
  await server?.close();
  await anvil?.stop();
  await stopTestServer();
  rmSync(blobDir, { recursive: true, force: true });
});

describe("a collection's traits", () => {
  test("every collection with documents: string and numeric traits over REST and gRPC are the replay's", async () => {
    assert.ok(collections.length >= 3, `collections with documents: ${collections.map((c) => c.key)}`);
    let strings = 0;
    let numerics = 0;
    for (const c of collections) {
      const base = `/collections/v1beta2/${c.address}/traits`;
      const rest = await restPages(`${base}/string`, 3);
      assert.deepEqual(rest, expectedStrings(c.replay), c.key);
      assert.deepEqual(await grpcAll("ListStringTraits", c.address), rest, `${c.key} over gRPC`);
      const numeric = await restPages(`${base}/numeric`, 1);
      assert.deepEqual(numeric, expectedNumerics(c.replay), c.key);
      assert.deepEqual(await grpcAll("ListNumericTraits", c.address), numeric, `${c.key} over gRPC`);
      strings += rest.length;
      numerics += numeric.length;
    }
    // The demo's documents: a fur of six (string) and a level of ten (`number`: DISPLAY_TYPE_STAT).
    assert.ok(strings >= 6, `${strings} string traits`);
    assert.ok(numerics >= 2, `${numerics} numeric traits`);
    const apes = collections.find((c) => c.key === "erc721");
    assert.ok(apes);
    assert.ok(apes.replay.numerics.some((t) => t.name === "Level" && t.displayType === "DISPLAY_TYPE_STAT"));
  });

  test("a refetch that changes an attribute moves one count; a removed document takes its traits out", async () => {
    // The collection with the most string traits.
    const c = collections.reduce((a, b) => (b.replay.strings.length > a.replay.strings.length ? b : a));
    const rows = await db.sql<{ id: string; attributes: StoredAttribute[] }[]>`
      SELECT token_id::text AS id, attributes FROM token_metadata
      WHERE chain_id = ${CHAIN_ID} AND contract = ${hex(c.address)} AND status = 'ok'
      ORDER BY token_id`;
    const row = rows.find((r) => r.attributes.some((a) => classifyAttribute(a).kind === "string"));
    assert.ok(row, `${c.key} has a token with a string trait`);
    const before = await replay(c.address);
    // Its first string trait becomes a value no other token has; its numeric ones become 1000.
    const index = row.attributes.findIndex((a) => classifyAttribute(a).kind === "string");
    assert.ok(index >= 0, "the token has a string trait");
    const changed = row.attributes.map((a, i) =>
      i === index
        ? { ...a, value: "Platinum" }
        : classifyAttribute(a).kind === "numeric"
          ? { ...a, value: "1000" }
          : a,
    );
    // Through the worker's own write: queued, taken, stored.
    assert.equal(
      await queueTokens(
        db.sql,
        CHAIN_ID,
        [{ contract: c.address as Address, tokenId: BigInt(row.id) }],
        "refresh",
      ),
      1,
    );
    const taken = await takeDueTokens(db.sql, CHAIN_ID, 10, 60);
    const token = taken.find((t) => t.tokenId === BigInt(row.id));
    assert.ok(token);
    const [doc] = await db.sql<Json[]>`
      SELECT uri, mime_type, raw, name FROM token_metadata
      WHERE chain_id = ${CHAIN_ID} AND contract = ${hex(c.address)} AND token_id = ${row.id}::numeric`;
    assert.ok(
      await storeOutcome(db.sql, CHAIN_ID, token, {
        ...EMPTY_OUTCOME,
        status: "ok",
        uri: String(doc?.uri),
        mimeType: String(doc?.mime_type),
        raw: String(doc?.raw),
        name: String(doc?.name),
        attributes: changed,
      }),
    );
    const afterRefetch = await replay(c.address);
    assert.equal(afterRefetch.documents, before.documents);
    const first = row.attributes[index];
    assert.ok(first);
    const count = (r: Replay, value: string) =>
      r.strings.find((s) => s.name === first.traitType && s.value === value)?.count ?? 0;
    assert.equal(count(afterRefetch, first.value), count(before, first.value) - 1);
    assert.equal(count(afterRefetch, "Platinum"), 1);
    const path = `/collections/v1beta2/${c.address}/traits/string?limit=500`;
    await settled(path, { traits: expectedStrings(afterRefetch), nextPageToken: "" });
    if (afterRefetch.numerics.length > 0) {
      await settled(`/collections/v1beta2/${c.address}/traits/numeric?limit=500`, {
        traits: expectedNumerics(afterRefetch),
        nextPageToken: "",
      });
      assert.ok(afterRefetch.numerics.some((t) => t.max === 1000));
    }

    // Ranked again: the one Platinum token is the rarest alone.
    const [dirty] = await db.sql<{ behind: boolean }[]>`
      SELECT changes > ranked_changes AS behind FROM collection_trait_totals
      WHERE chain_id = ${CHAIN_ID} AND contract = ${hex(c.address)}`;
    assert.equal(dirty?.behind, true, "the refetch left the ranks behind");
    await rankDueCollections(db.sql, CHAIN_ID, NOW_RANKED);
    const details = await settledRarity(c.address, row.id, (r) => r?.rank === "1");
    assert.equal(details?.rank, "1");
    await checkRarity(c.address, afterRefetch);

    // The document removed (as a rollback of its mint removes it): its traits go with it.
    await db.sql`
      DELETE FROM token_metadata WHERE chain_id = ${CHAIN_ID} AND contract = ${hex(c.address)} AND token_id = ${row.id}::numeric`;
    const removed = await replay(c.address);
    assert.equal(removed.documents, before.documents - 1);
    assert.equal(count(removed, "Platinum"), 0);
    await settled(path, { traits: expectedStrings(removed), nextPageToken: "" });
    await rankDueCollections(db.sql, CHAIN_ID, NOW_RANKED);
    await checkRarity(c.address, removed);
    const [gone] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM collection_traits
      WHERE chain_id = ${CHAIN_ID} AND contract = ${hex(c.address)} AND tokens <= 0`;
    assert.equal(gone?.n, 0, "the ranking pass removed the counts that reached 0");
  });

  test("pages by offset and by token agree, and bad requests are refused on both protocols", async () => {
    const c = collections.reduce((a, b) => (b.replay.strings.length > a.replay.strings.length ? b : a));
    const base = `/collections/v1beta2/${c.address}/traits/string`;
    const whole = (await api.get(`${base}?limit=500`)).body as { traits: Json[] };
    for (let offset = 0; offset < whole.traits.length; offset += 2) {
      const page = (await api.get(`${base}?limit=2&offset=${offset}`)).body as { traits: Json[] };
      assert.deepEqual(page.traits, whole.traits.slice(offset, offset + 2));
    }
    const first = (await api.get(`${base}?limit=2`)).body as { nextPageToken: string };
    const other = `/collections/v1beta2/${collections.find((x) => x !== c)?.address}/traits/string`;
    for (const [path, field] of [
      [`${base}?limit=501`, "limit"],
      [`${base}?offset=10001`, "offset"],
      [`${base}?pageToken=nonsense`, "page_token"],
      [`${other}?pageToken=${first.nextPageToken}`, "page_token"],
      [`/collections/v1beta2/0x12/traits/numeric`, "contract_address"],
    ] as const) {
      const answer = await api.get(path);
      assert.equal(answer.status, 400, path);
      assert.match((answer.body as { message: string }).message, new RegExp(`^${field}:`), path);
    }
    const unknown = `0x${"77".repeat(20)}`;
    for (const kind of ["string", "numeric"]) {
      const answer = await api.get(`/collections/v1beta2/${unknown}/traits/${kind}`);
      assert.equal(answer.status, 404);
    }
    const { error } = await api.grpc("CollectionsService", "ListNumericTraits", { contractAddress: unknown });
    assert.equal(error?.code, 5);
  });

  test("the SQL rule of what an attribute counts as is the TypeScript one", async () => {
    const display = fc.constantFrom(
      "number",
      "NUMBER",
      "Date",
      "boost_number",
      "boost_percentage",
      "string",
      "",
      "numbeR ",
    );
    const value = fc.oneof(
      fc.string(),
      fc.double({ noNaN: true }).map(String),
      fc.integer().map(String),
      fc.stringMatching(/^-?[0-9]{1,22}(\.[0-9]{1,22})?([eE][+-]?[0-9]{1,3})?$/),
    );
    const samples = fc.sample(fc.tuple(display, value), { numRuns: 2_000, seed: 23 });
    const clean = samples.map(([d, v]) => [d, v.replaceAll("\0", "")] as const);
    const rows = await db.sql<{ display: string; value: string; kind: string | null }[]>`
      SELECT d AS display, v AS value, trait_display_type(d, v) AS kind
      FROM unnest(${clean.map((s) => s[0])}::text[], ${clean.map((s) => s[1])}::text[]) AS u(d, v)`;
    assert.equal(rows.length, clean.length);
    for (const row of rows) {
      const trait = classifyAttribute({ traitType: "t", value: row.value, displayType: row.display });
      assert.equal(row.kind, trait.kind === "numeric" ? trait.displayType : null, JSON.stringify(row));
      if (trait.kind === "numeric") {
        const [back] = await db.sql<{ x: number }[]>`SELECT ${row.value}::double precision AS x`;
        assert.equal(back?.x, trait.value, row.value);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Rarity.

interface Rarity {
  method: string;
  score: number;
  rank: string;
  collectionSize: string;
  rankedAt: string;
}

async function settledRarity(contract: string, id: string, done: (r: Rarity | null) => boolean) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const answer = await api.get(`/foundational/v1beta2/nfts/${contract}/${id}/details`);
    const rarity = (answer.body as { rarity: Rarity | null }).rarity;
    if (done(rarity) || Date.now() > deadline) return rarity;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every token with a document has the replay's score and rank in its details, out of the replay's size. */
async function checkRarity(contract: string, r: Replay): Promise<void> {
  for (const [id, expected] of r.rarity) {
    const rarity = await settledRarity(
      contract,
      id,
      (x) => x?.rank === String(expected.rank) && Math.abs(x.score - expected.score) < 1e-6,
    );
    assert.ok(rarity, `${contract} #${id} is ranked`);
    assert.equal(rarity.method, "RARITY_METHOD_INFORMATION_CONTENT");
    assert.equal(rarity.rank, String(expected.rank), `${contract} #${id}`);
    assert.ok(Math.abs(rarity.score - expected.score) < 1e-6, `${rarity.score} against ${expected.score}`);
    assert.equal(rarity.collectionSize, String(r.documents));
    assert.match(rarity.rankedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  }
}

describe("each token's rarity", () => {
  test("every token with a document: the replay's score and rank, rank 1 the rarest, ties sharing one", async () => {
    await rankDueCollections(db.sql, CHAIN_ID, NOW_RANKED);
    for (const c of collections) c.replay = await replay(c.address);
    for (const c of collections) await checkRarity(c.address, c.replay);
    const ranks = collections.flatMap((c) => [...c.replay.rarity.values()].map((x) => x.rank));
    assert.ok(ranks.includes(1));
    assert.ok(new Set(ranks).size < ranks.length, "some tokens tie");
    // Over gRPC, the same.
    const c = collections[0];
    assert.ok(c);
    const [id, expected] = [...c.replay.rarity][0] ?? [];
    assert.ok(id && expected);
    const { error, response } = await api.grpc("FoundationalService", "GetNftDetails", {
      contractAddress: c.address,
      tokenId: id,
    });
    assert.equal(error, null);
    const rarity = (response as { rarity: Rarity }).rarity;
    assert.equal(rarity.method, "RARITY_METHOD_INFORMATION_CONTENT");
    assert.equal(rarity.rank, String(expected.rank));
  });

  test("a token without a document has no rarity", async () => {
    const [row] = await db.sql<{ contract: Uint8Array; id: string }[]>`
      SELECT t.contract, t.token_id::text AS id FROM tokens t
      WHERE t.chain_id = ${CHAIN_ID} AND NOT EXISTS (
        SELECT 1 FROM token_metadata m WHERE m.chain_id = t.chain_id AND m.contract = t.contract
          AND m.token_id = t.token_id AND m.status = 'ok')
      LIMIT 1`;
    assert.ok(row);
    const answer = await api.get(
      `/foundational/v1beta2/nfts/0x${Buffer.from(row.contract).toString("hex")}/${row.id}/details`,
    );
    assert.equal(answer.status, 200);
    assert.equal((answer.body as { rarity: unknown }).rarity, null);
  });
});

// ---------------------------------------------------------------------------------------------
// The recorded answers' form.

const recordedDir = RECORDED;
const recorded = (name: string) =>
  JSON.parse(readFileSync(join(recordedDir, name), "utf8")) as { traits: Json[] };
const form = (v: unknown) =>
  typeof v === "string" ? (/^\d+$/.test(v) ? "integer-string" : "string") : v === null ? "null" : typeof v;

describe("conformance with the original service's trait answers", { skip: !existsSync(recordedDir) }, () => {
  test("string traits: the recorded keys and value forms", async () => {
    const c = collections[0];
    assert.ok(c);
    const ours = (await api.get(`/collections/v1beta2/${c.address}/traits/string`)).body as {
      traits: Json[];
    };
    assert.ok(ours.traits.length > 0);
    for (const file of [
      "collection_traits_string.json",
      "collection_traits_string_alternate.json",
      "collection_traits_0x23581767a106ae21c074b2276D25e5C3e136a68b.json",
    ]) {
      for (const theirs of recorded(file).traits) {
        for (const mine of ours.traits) {
          assert.deepEqual(Object.keys(mine).sort(), Object.keys(theirs).sort(), file);
          for (const key of Object.keys(theirs)) {
            const a = form(mine[key]);
            const b = form(theirs[key]);
            // A value may be digits in one answer and words in another.
            if (key !== "value" && key !== "name") assert.equal(a, b, `${file}: ${key}`);
          }
        }
      }
    }
  });

  test("numeric traits: the recorded keys, number forms and display type spellings", async () => {
    const c = collections.find((x) => x.replay.numerics.length > 0);
    assert.ok(c);
    const ours = (await api.get(`/collections/v1beta2/${c.address}/traits/numeric`)).body as {
      traits: Json[];
    };
    const theirs = recorded("collection_traits_numeric.json").traits;
    const spellings = new Set(theirs.map((t) => t.displayType));
    assert.ok(
      ours.traits.some((t) => spellings.has(t.displayType)),
      "a display type the original used",
    );
    for (const mine of ours.traits) {
      for (const t of theirs) {
        assert.deepEqual(Object.keys(mine).sort(), Object.keys(t).sort());
        for (const key of Object.keys(t)) assert.equal(form(mine[key]), form(t[key]), key);
      }
      assert.match(String(mine.displayType), /^DISPLAY_TYPE_(STAT|BOOST|BOOST_PERCENTAGE|DATE)$/);
    }
  });
});
