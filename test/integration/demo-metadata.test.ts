/**
 * The demo's metadata, end to end: a generated history on anvil, its collections pointed at every
 * kind of location (http, an IPFS and an Arweave gateway stand-in, `data:` documents set per
 * token, documents drawn on chain, an ERC-1155 template, a host whose documents are gone), indexed,
 * fetched by the worker, moved by an EIP-4906 update, and read back through the API: every held
 * token of a collection with token URIs shows its name, its image served by Mintlens, and its raw
 * document.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { HistorySummary } from "../../src/demo/activity.ts";
import { type DemoMetadataServer, startDemoMetadataServer } from "../../src/demo/metadata-server.ts";
import {
  DEMO_INLINE_TOKENS,
  DEMO_METADATA_NAMES,
  moveGoneMetadata,
  pointDemoMetadata,
} from "../../src/demo/metadata-setup.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { createBlobStore } from "../../src/media/blobs.ts";
import { type ApiClient, createApiFixtureOn } from "../support/api-client.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";
import { drainMetadataQueue } from "../support/metadata-worker.ts";

const CHAIN_ID = 31337;
let anvil: Anvil;
let db: TestDatabase;
let server: DemoMetadataServer;
let history: HistorySummary;
let api: ApiClient;
const blobDir = mkdtempSync(join(tmpdir(), "mintlens-demo-blobs-"));
const blobs = createBlobStore(blobDir);

async function indexToHead(): Promise<void> {
  const head = Number(await rawRpc<string>(anvil.url, "eth_blockNumber", []));
  await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
}

function drainQueue(): Promise<void> {
  return drainMetadataQueue({ sql: db.sql, chainId: CHAIN_ID, rpcUrl: anvil.url, server, blobs });
}

before(async () => {
  ({ anvil, history } = await startHistoryChain({
    chainId: CHAIN_ID,
    seed: "metadata",
    days: 12,
    genesis: "recent",
  }));
  server = await startDemoMetadataServer(DEMO_METADATA_NAMES);
  await pointDemoMetadata(anvil.url, history.contracts, server);
  db = await createTestDatabase();
  api = await createApiFixtureOn(db.sql, CHAIN_ID, blobs);
});
after(async () => {
  await api?.close();
  await db?.close();
  await server?.close();
  await anvil?.stop();
  await stopTestServer();
  rmSync(blobDir, { recursive: true, force: true });
});

interface Details {
  nft: {
    metadata?: {
      metadataUri: { uri: string; mimeType: string };
      name: string;
      image: { uri: string; uriOriginal: string; mimeType: string };
    };
  };
}

const hex = (address: string) => Buffer.from(address.slice(2), "hex");

/** The held tokens of a collection, by id. */
async function heldTokens(contract: string): Promise<string[]> {
  const rows = await db.sql<{ id: string }[]>`
    SELECT DISTINCT token_id::text AS id FROM token_balances
    WHERE chain_id = ${CHAIN_ID} AND contract = ${hex(contract)} AND amount > 0 ORDER BY 1`;
  return rows.map((r) => r.id);
}

test("every held token of the demo's collections with token URIs shows its name, its image served by Mintlens, and its raw document", async () => {
  const { contracts } = history;
  await indexToHead();
  await drainQueue();

  // The consecutive collection's host answers 404: its tokens are failed, to be tried again in an hour.
  const mcon = contracts.erc721Consecutive.address;
  const gone = await db.sql<{ status: string; error: string }[]>`
    SELECT DISTINCT m.status, m.error FROM token_metadata m
    JOIN token_balances b ON b.chain_id = m.chain_id AND b.contract = m.contract AND b.token_id = m.token_id
    WHERE m.contract = ${hex(mcon)} AND b.amount > 0`;
  assert.deepEqual([...gone], [{ status: "failed", error: "HTTP 404" }]);

  // Its contract points at the new home and says so (EIP-4906): the next batch queues them again.
  await moveGoneMetadata(anvil.url, contracts, server);
  await indexToHead();
  const [requeued] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM metadata_queue WHERE contract = ${hex(mcon)} AND due_at <= now()`;
  assert.ok((requeued?.n ?? 0) > 0, "the update made the consecutive collection's tokens due");
  await drainQueue();

  const expectations: { key: keyof typeof contracts; name: RegExp; uri: RegExp; original: RegExp }[] = [
    {
      key: "erc721",
      name: /^Mintlens Apes #\d+/,
      uri: /^(http:\/\/127\.0\.0\.1:\d+\/mape\/\d+|data:)/,
      original: /./,
    },
    {
      key: "erc721Create2",
      name: /^Factory Punks #\d+$/,
      // Where the document was found: the configured gateway.
      uri: /^http:\/\/127\.0\.0\.1:\d+\/ipfs\/bafy[a-z0-9]+\/\d+$/,
      original: /^ipfs:\/\/bafy[a-z0-9]+\/\d+\.svg$/,
    },
    {
      key: "erc721Create",
      name: /^Factory Frogs #\d+$/,
      uri: /^data:application\/json;base64,/,
      original: /^data:image\/svg\+xml;base64,/,
    },
    {
      key: "paidMint",
      name: /^Mintlens Passes #\d+$/,
      uri: /^http:\/\/127\.0\.0\.1:\d+\/arweave\/[\w-]{43}\/\d+$/,
      original: /^ar:\/\/[\w-]{43}\/\d+\.svg$/,
    },
    {
      key: "erc1155",
      name: /^Mintlens Editions #\d+$/,
      uri: /^http:\/\/127\.0\.0\.1:\d+\/editions\/[0-9a-f]{64}\.json$/,
      original: /^http:\/\/127\.0\.0\.1:\d+\/editions\/[0-9a-f]{64}\.svg$/,
    },
    {
      key: "erc721Consecutive",
      name: /^Mintlens Consecutive #\d+$/,
      uri: /^http:\/\/127\.0\.0\.1:\d+\/mcon\/\d+$/,
      original: /^http:\/\/127\.0\.0\.1:\d+\/mcon\/\d+\.svg$/,
    },
  ];
  const images = new Set<string>();
  let checked = 0;
  for (const e of expectations) {
    const contract = contracts[e.key].address;
    const ids = await heldTokens(contract);
    assert.ok(ids.length > 0, `${e.key} has held tokens`);
    for (const id of ids) {
      const what = `${e.key} #${id}`;
      const details = await api.get(`/foundational/v1beta2/nfts/${contract}/${id}/details`);
      assert.equal(details.status, 200, what);
      const metadata = (details.body as Details).nft.metadata;
      assert.ok(metadata, `${what} has metadata`);
      assert.match(metadata.name, e.name, what);
      assert.match(metadata.metadataUri.uri, e.uri, what);
      assert.match(metadata.image.uriOriginal, e.original, what);
      assert.match(metadata.image.uri, /^http:\/\/127\.0\.0\.1:\d+\/images\/[0-9a-f]{64}$/, what);
      assert.equal(metadata.image.mimeType, "image/svg+xml", what);
      const raw = await api.get(`/foundational/v1beta2/nfts/${contract}/${id}/raw_metadata`);
      const document = (raw.body as { metadata: { raw: string } | null }).metadata;
      assert.ok(document, `${what} has its raw document`);
      assert.equal((JSON.parse(document.raw) as { name?: string }).name, metadata.name, what);
      images.add(metadata.image.uri);
      checked++;
    }
  }
  // Each image is served by Mintlens itself, as an SVG that cannot run script.
  for (const uri of images) {
    const served = await api.raw(uri);
    assert.equal(served.status, 200, uri);
    assert.equal(served.headers.get("content-type"), "image/svg+xml");
    assert.match(served.headers.get("content-security-policy") ?? "", /sandbox/);
    assert.match(await served.text(), /^<svg /);
  }
  assert.ok(checked >= 50, `checked ${checked} tokens`);

  // The tokens with documents of their own: a percent-encoded `data:` JSON whose image is drawn in it.
  let inline = 0;
  for (const id of DEMO_INLINE_TOKENS) {
    const [row] = await db.sql<{ uri: string; name: string; image: string; status: string }[]>`
      SELECT uri, name, image_uri_original AS image, status FROM token_metadata
      WHERE contract = ${hex(contracts.erc721.address)} AND token_id = ${id.toString()}::numeric`;
    if (row?.status !== "ok") continue; // burnt in the generated history: no URI any more
    assert.match(row.uri, /^data:application\/json;charset=utf-8,%7B/);
    assert.equal(row.name, `Mintlens Apes #${id} (one of one)`);
    assert.match(row.image, /^data:image\/svg\+xml/);
    inline++;
  }
  assert.ok(inline > 0, "a token with a document of its own is held");

  // Without token URIs, as on mainnet: a clear "none", never an error loop.
  for (const key of ["punks", "legacyErc721"] as const) {
    const states = await db.sql<{ status: string }[]>`
      SELECT DISTINCT status FROM token_metadata WHERE contract = ${hex(contracts[key].address)}`;
    assert.deepEqual([...states], [{ status: "none" }], key);
  }
});
