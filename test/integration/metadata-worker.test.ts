/**
 * The metadata worker end to end: tokens minted on anvil are queued by the indexer's batches; the
 * worker asks each contract for its token URI, fetches the documents from a local server (allowed
 * by the allow-list) or decodes them in place, and the API's NFT details and raw metadata show
 * them. A missing document, a refused address and a contract without URIs each end in their state.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Abi } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import type { Address } from "../../src/core/hex.ts";
import { type Logger, silentLogger } from "../../src/core/logger.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import { connectDevChain, type DevChain } from "../../src/devchain/deploy.ts";
import { type BlobStore, createBlobStore } from "../../src/media/blobs.ts";
import { createFetcher } from "../../src/metadata/fetch.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import { runMetadataWorker } from "../../src/metadata/worker.ts";
import { queueCollection } from "../../src/store/tables/metadata.ts";
import { PENDING_METADATA_SQL } from "../../src/store/tables/tokens.ts";
import { type ApiClient, createApiFixtureOn } from "../support/api-client.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";
import { capturingLogger } from "../support/logs.ts";

const CHAIN_ID = 31337;
let anvil: Anvil;
let chain: DevChain;
let db: TestDatabase;
let server: Server;
let port: number;
let api: ApiClient;
let deployer: Address;
const blobDir = mkdtempSync(join(tmpdir(), "mintlens-blobs-"));

const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><rect width="9" height="9"/></svg>';
const DOCS: Record<string, string> = {
  "/meta/1":
    '{"name":"Ape #1","description":"first","image":"ipfs://QmYHU3Yc5QLiNHCDGA9Wn5cEW6hiRb64JGLdvUis9xzbk5/1.png","attributes":[{"trait_type":"Fur","value":"Gold"}]}',
  "/meta/2": '{"name":"Ape #2","image_url":"https://img.example/2.png"}',
};

async function deploy(name: "TestERC721" | "TestERC1155", args: unknown[]): Promise<Address> {
  const { abi, bytecode } = loadArtifact(name);
  const hash = await chain.walletClient.deployContract({
    abi: abi as Abi,
    bytecode,
    args,
    account: deployer,
    chain: null,
  });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  assert.ok(receipt.contractAddress);
  return receipt.contractAddress.toLowerCase() as Address;
}

async function send(
  to: Address,
  name: "TestERC721" | "TestERC1155",
  functionName: string,
  args: unknown[],
): Promise<void> {
  const { abi } = loadArtifact(name);
  const hash = await chain.walletClient.writeContract({
    address: to,
    abi: abi as Abi,
    functionName,
    args,
    account: deployer,
    chain: null,
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });
}

/** Runs the worker until it has worked on `count` tokens; the test fails if that takes 30 s. */
async function workOn(
  count: number,
  o: { blobs: BlobStore; logger?: Logger; outcomes?: string[] },
): Promise<void> {
  const client = createChainClient({ url: anvil.url });
  const stop = new AbortController();
  const outcomes = o.outcomes ?? [];
  const worker = runMetadataWorker(
    {
      sql: db.sql,
      chainId: CHAIN_ID,
      client,
      fetcher: createFetcher({ allow: parseAllowList([`127.0.0.1:${port}`]), limits: { timeoutMs: 2_000 } }),
      // The gateways are the local server too: nothing leaves the machine (it has no such content: 404).
      gateways: { ipfs: `http://127.0.0.1:${port}`, arweave: `http://127.0.0.1:${port}/ar` },
      blobs: o.blobs,
      logger: o.logger ?? silentLogger(),
      idleMs: 50,
      onToken: (token, status) => {
        outcomes.push(`${token.contract}/${token.tokenId}:${status}`);
        if (outcomes.length === count) stop.abort();
      },
    },
    stop.signal,
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      worker,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`stuck: ${outcomes.join(" ")}`)), 30_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    stop.abort();
    await client.close();
  }
}

before(async () => {
  server = createServer((req, res) => {
    const doc = DOCS[req.url ?? ""];
    if (doc) return res.writeHead(200, { "content-type": "text/plain" }).end(doc);
    if (req.url === "/img/2.svg")
      return res.writeHead(200, { "content-type": "application/octet-stream" }).end(SVG);
    return res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  DOCS["/meta/2"] = `{"name":"Ape #2","image_url":"http://127.0.0.1:${port}/img/2.svg"}`;
  anvil = await startAnvil({ chainId: CHAIN_ID });
  chain = connectDevChain(anvil.url);
  const [first] = await chain.walletClient.requestAddresses();
  assert.ok(first);
  deployer = first.toLowerCase() as Address;
  db = await createTestDatabase();
});
after(async () => {
  await api?.close();
  await db?.close();
  await anvil?.stop();
  await stopTestServer();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(blobDir, { recursive: true, force: true });
});

test("minted tokens get their documents through the worker, and the API shows them", async () => {
  const apes = await deploy("TestERC721", ["Apes", "APE"]);
  await send(apes, "TestERC721", "setBaseURI", [`http://127.0.0.1:${port}/meta/`]);
  await send(apes, "TestERC721", "mintBatch", [deployer, 1n, 3n]); // 3 has no document: 404
  const elsewhere = await deploy("TestERC721", ["Elsewhere", "ELS"]);
  await send(elsewhere, "TestERC721", "setBaseURI", ["http://169.254.169.254/latest/"]);
  await send(elsewhere, "TestERC721", "mint", [deployer, 7n]);
  const inline = await deploy("TestERC721", ["Inline", "INL"]);
  const json = Buffer.from('{"name":"On chain","image":"data:image/svg+xml;base64,PHN2Zy8+"}').toString(
    "base64",
  );
  await send(inline, "TestERC721", "setBaseURI", [`data:application/json;base64,${json}#`]);
  await send(inline, "TestERC721", "mint", [deployer, 5n]);
  const editions = await deploy("TestERC1155", [`http://127.0.0.1:${port}/editions/{id}.json`]);
  DOCS[`/editions/${"0".repeat(63)}a.json`] = '{"name":"Edition 10","properties":{"edition":"open"}}';
  await send(editions, "TestERC1155", "mint", [deployer, 10n, 5n, "0x"]);

  const head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
  await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
  const [queued] = await db.sql.unsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM (${PENDING_METADATA_SQL}) p WHERE chain_id = ${CHAIN_ID}`,
  );
  assert.equal(queued?.n, 6, "each minted token is pending from the batch that minted it");

  const blobs = createBlobStore(blobDir);
  const outcomes: string[] = [];
  await workOn(6, { blobs, outcomes });

  const rows = await db.sql<{ c: string; t: string; status: string; error: string }[]>`
    SELECT '0x' || encode(contract, 'hex') AS c, token_id::text AS t, status, error FROM token_metadata ORDER BY 1, 2`;
  const state = Object.fromEntries(
    rows.map((r) => [`${r.c}/${r.t}`, `${r.status}${r.error ? `: ${r.error}` : ""}`]),
  );
  assert.equal(state[`${apes}/1`], "ok");
  assert.equal(state[`${apes}/2`], "ok");
  assert.match(state[`${apes}/3`] ?? "", /^failed: HTTP 404/);
  assert.match(state[`${elsewhere}/7`] ?? "", /^failed: refused: 169\.254\.169\.254 is a linkLocal address/);
  assert.equal(state[`${inline}/5`], "ok");
  assert.equal(state[`${editions}/10`], "ok");
  // Refused fetches stay queued, to be tried again after an hour, their refusal counted; the others left the queue.
  const left = await db.sql<{ t: string; hours: number; refusals: number }[]>`
    SELECT token_id::text AS t, round(extract(epoch FROM due_at - now()) / 3600)::int AS hours, refusals
    FROM metadata_queue`;
  assert.deepEqual(left.map((r) => [r.t, r.hours, r.refusals]).sort(), [
    ["3", 1, 1],
    ["7", 1, 1],
  ]);

  api = await createApiFixtureOn(db.sql, CHAIN_ID, blobs);
  // The image of #2, cached and served by the API itself, as an SVG that cannot run its script.
  const second = (await api.get(`/foundational/v1beta2/nfts/${apes}/2/details`)).body as {
    nft: { metadata: { image: { uri: string; uriOriginal: string; mimeType: string } } };
  };
  const image = second.nft.metadata.image;
  assert.equal(image.uriOriginal, `http://127.0.0.1:${port}/img/2.svg`);
  assert.equal(image.mimeType, "image/svg+xml");
  assert.match(image.uri, /^http:\/\/127\.0\.0\.1:\d+\/images\/[0-9a-f]{64}$/);
  const served = await api.raw(image.uri);
  assert.equal(served.status, 200);
  assert.equal(served.headers.get("content-type"), "image/svg+xml");
  assert.match(served.headers.get("content-security-policy") ?? "", /sandbox/);
  assert.match(served.headers.get("cache-control") ?? "", /immutable/);
  assert.equal(await served.text(), SVG);
  assert.equal((await api.raw(image.uri.replace(/[0-9a-f]{64}$/, "0".repeat(64)))).status, 404);
  const details = (await api.get(`/foundational/v1beta2/nfts/${apes}/1/details`)).body as {
    nft: { metadata: unknown };
  };
  assert.deepEqual(details.nft.metadata, {
    metadataUri: { uri: `http://127.0.0.1:${port}/meta/1`, mimeType: "application/json" },
    name: "Ape #1",
    description: "first",
    image: {
      uri: "",
      uriOriginal: "ipfs://QmYHU3Yc5QLiNHCDGA9Wn5cEW6hiRb64JGLdvUis9xzbk5/1.png",
      mimeType: "",
    },
  });
  const raw = (await api.get(`/foundational/v1beta2/nfts/${apes}/1/raw_metadata`)).body as {
    metadata: { raw: string; indexedAt: string };
  };
  assert.equal(raw.metadata.raw, DOCS["/meta/1"]);
  assert.match(raw.metadata.indexedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const onChain = (await api.get(`/foundational/v1beta2/nfts/${inline}/5/details`)).body as {
    nft: { metadata: { name: string; metadataUri: { mimeType: string } } };
  };
  assert.equal(onChain.nft.metadata.name, "On chain");
  const failed = (await api.get(`/foundational/v1beta2/nfts/${apes}/3/raw_metadata`)).body;
  assert.deepEqual(failed, { metadata: null });

  // An operator's refresh queues a collection again, due now.
  assert.equal(await queueCollection(db.sql, CHAIN_ID, apes, "refresh"), 3);
  const due = await db.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM metadata_queue WHERE due_at <= now()`;
  assert.equal(due[0]?.n, 3);
});

test("an image cache that fails keeps the documents and the images cached before, and says why", async () => {
  const [row] = await db.sql<{ c: string; image: string }[]>`
    SELECT '0x' || encode(contract, 'hex') AS c, image_uri AS image FROM token_metadata
    WHERE image_uri <> '' AND token_id = 2`;
  assert.ok(row, "the first test cached an image");
  const apes = row.c as Address;
  const cachedBefore = row.image;
  assert.equal(await queueCollection(db.sql, CHAIN_ID, apes, "refresh"), 3);
  const { logger, entries } = capturingLogger();
  const broken: BlobStore = {
    put: async () => {
      throw new Error("the bucket refused the request: AccessDenied");
    },
    get: async () => undefined,
    open: async () => undefined,
  };
  await workOn(3, { blobs: broken, logger });
  const [two] = await db.sql<{ status: string; image_uri: string; name: string }[]>`
    SELECT status, image_uri, name FROM token_metadata WHERE contract = ${Buffer.from(apes.slice(2), "hex")} AND token_id = 2`;
  // The image cached before is kept: an image that could not be stored this time replaces nothing.
  assert.deepEqual({ ...two }, { status: "ok", image_uri: cachedBefore, name: "Ape #2" });
  const cache = entries().filter((w) => w.msg.startsWith("storing token images in the image cache failed"));
  assert.equal(cache.length, 1, JSON.stringify(entries()));
  assert.match(cache[0]?.err?.message ?? "", /AccessDenied/);
});
