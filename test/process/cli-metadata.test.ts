/**
 * `mintlens metadata`, the worker on its own, as a process: it fetches the documents of the
 * tokens the indexer queued (from a local server the allow-list lets it reach), caches their
 * images in the blob directory, counts them in its metrics, and a SIGTERM stops it cleanly.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Abi } from "viem";
import type { Address } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import { connectDevChain } from "../../src/devchain/deploy.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="4" height="4"/></svg>';
let anvil: Anvil;
let db: TestDatabase;
let server: Server;
let port: number;
const blobDir = mkdtempSync(join(tmpdir(), "mintlens-cli-metadata-"));

before(async () => {
  server = createServer((req, res) => {
    const m = /^\/apes\/(\d+)(\.svg)?$/.exec(req.url ?? "");
    if (!m) return res.writeHead(404).end();
    if (m[2]) return res.writeHead(200, { "content-type": "image/svg+xml" }).end(SVG);
    return res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ name: `Ape #${m[1]}`, image: `http://127.0.0.1:${port}/apes/${m[1]}.svg` }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  anvil = await startAnvil({ chainId: 31337 });
  db = await createTestDatabase();
});
after(async () => {
  await db?.close();
  await anvil?.stop();
  await stopTestServer();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(blobDir, { recursive: true, force: true });
});

test("mintlens metadata fetches the queued tokens' documents and images, and stops on SIGTERM", async () => {
  const chain = connectDevChain(anvil.url);
  const [account] = await chain.walletClient.requestAddresses();
  assert.ok(account);
  const { abi, bytecode } = loadArtifact("TestERC721");
  const send = async (hash: Promise<`0x${string}`>) =>
    chain.publicClient.waitForTransactionReceipt({ hash: await hash });
  const deployed = await send(
    chain.walletClient.deployContract({
      abi: abi as Abi,
      bytecode,
      args: ["Apes", "APE"],
      account,
      chain: null,
    }),
  );
  const apes = deployed.contractAddress as Address;
  const write = (functionName: string, args: unknown[]) =>
    send(
      chain.walletClient.writeContract({
        address: apes,
        abi: abi as Abi,
        functionName,
        args,
        account,
        chain: null,
      }),
    );
  await write("setBaseURI", [`http://127.0.0.1:${port}/apes/`]);
  await write("mintBatch", [account, 1n, 3n]);
  const head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
  await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: 31337, untilBlock: head });

  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/main.ts",
      "metadata",
      "--chain",
      `test=${anvil.url}`,
      "--chain-id",
      "31337",
      "--native-symbol",
      "ETH",
      "--database-url",
      db.url,
      "--metadata-allow",
      `127.0.0.1:${port}`,
      "--blob-dir",
      blobDir,
      "--metrics-port",
      "0",
    ],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: "", MINTLENS_CHAINS: "" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  try {
    for (const until = Date.now() + 60_000; ; ) {
      const rows = await db.sql<{ id: string; name: string; image: string }[]>`
        SELECT token_id::text AS id, name, image_uri AS image FROM token_metadata WHERE status = 'ok' ORDER BY token_id`;
      if (rows.length === 3) {
        assert.deepEqual(
          rows.map((r) => r.name),
          ["Ape #1", "Ape #2", "Ape #3"],
        );
        // One image, cached once under its hash.
        assert.equal(new Set(rows.map((r) => r.image)).size, 1);
        const sha = rows[0]?.image.replace("/images/", "") ?? "";
        assert.match(sha, /^[0-9a-f]{64}$/);
        assert.ok(
          readdirSync(join(blobDir, sha.slice(0, 2))).includes(sha),
          "the image is in the blob directory",
        );
        break;
      }
      assert.ok(Date.now() < until, `not fetched in time:\n${stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const [left] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM metadata_queue`;
    assert.equal(left?.n, 0, "the tokens left the queue");
    // Its metrics count the three tokens fetched.
    const metricsUrl = /metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(stderr)?.[1];
    assert.ok(metricsUrl, `the metrics address is told: ${stderr.slice(-2000)}`);
    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(metrics, /^mintlens_metadata_tokens_total\{chain="test",status="ok"\} 3$/m);
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0, stderr.slice(-2000));
  clearTimeout(killer);
});
