/**
 * The commands that serve: `mintlens start`, as a process, indexes Ethereum, Polygon and Optimism
 * side by side (three anvil nodes with those chain ids) and serves each on listeners of its own,
 * then stops cleanly on SIGTERM; `mintlens serve` serves the same store afterwards; `mintlens call`
 * is a working gRPC client. `serve`, `call` and `metadata refresh` run in the test's own process.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { generateKey } from "../../src/api/keys.ts";
import { historyGenesisTimestamp } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { runCommand, startCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHAINS = [
  { name: "ethereum", chainId: 1, days: 3 },
  { name: "polygon", chainId: 137, days: 1 },
  { name: "optimism", chainId: 10, days: 0 },
] as const;

interface Running {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

function run(args: string[]): Running {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", MINTLENS_CHAINS: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const killer = setTimeout(() => child.kill("SIGKILL"), 240_000);
  void exited.then(() => clearTimeout(killer));
  return { child, stderr: () => stderr, exited };
}

/** The REST URL and gRPC address each chain's line announces, once all are there. */
async function listeners(
  running: { stderr: () => string },
  names: readonly string[],
): Promise<Map<string, { rest: string; grpc: string }>> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const found = new Map<string, { rest: string; grpc: string }>();
    for (const m of running.stderr().matchAll(/^(\w+) \(chain \d+\): REST (\S+)\s+gRPC (\S+)/gm)) {
      found.set(m[1] as string, { rest: m[2] as string, grpc: m[3] as string });
    }
    if (names.every((n) => found.has(n))) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no listeners announced:\n${running.stderr()}`);
}

describe("mintlens start and serve", () => {
  const anvils: Anvil[] = [];
  let db: TestDatabase;
  let dataDir: string;
  let key: string;
  before(async () => {
    for (const chain of CHAINS) {
      anvils.push(
        chain.days > 0
          ? (
              await startHistoryChain({
                chainId: chain.chainId,
                seed: chain.name,
                days: chain.days,
                genesis: "recent",
              })
            ).anvil
          : await startAnvil({ chainId: chain.chainId, timestamp: historyGenesisTimestamp(1) }),
      );
    }
    db = await createTestDatabase();
    const k = generateKey();
    await insertApiKey(db.sql, { userName: "cli", keyId: k.keyId, keyHash: k.hash });
    key = k.key;
    dataDir = mkdtempSync(join(tmpdir(), "mintlens-cli-api-"));
  });
  after(async () => {
    for (const anvil of anvils) await anvil.stop();
    await db?.close();
    await stopTestServer();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const get = async (url: string) => {
    const response = await fetch(url, { headers: { "x-api-key": key } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown[]> };
  };

  /** Each chain's contracts as its own listener lists them, and as the store holds them. */
  async function checkEachChainServesItsOwn(found: Map<string, { rest: string; grpc: string }>) {
    const lists = new Map<string, string[]>();
    for (const chain of CHAINS) {
      const url = found.get(chain.name)?.rest;
      const answer = await get(`${url}/foundational/v1beta2/contracts?limit=500`);
      assert.equal(answer.status, 200);
      const listed = (answer.body.contracts as { address: string }[]).map((c) => c.address);
      const stored = await db.sql<{ a: string }[]>`
        SELECT '0x' || encode(address, 'hex') AS a FROM contracts WHERE chain_id = ${chain.chainId}`;
      assert.deepEqual(new Set(listed), new Set(stored.map((r) => r.a)), chain.name);
      lists.set(chain.name, listed);
    }
    assert.ok((lists.get("ethereum")?.length ?? 0) > 5);
    assert.ok((lists.get("polygon")?.length ?? 0) > 5);
    assert.deepEqual(lists.get("optimism"), []);
    // Same deployer and nonces, so the same addresses; different activity, so different holders.
    const erc721 = lists.get("ethereum")?.[0];
    const owners = async (chain: string) =>
      (await get(`${found.get(chain)?.rest}/collections/v1beta2/${erc721}/owners_list`)).body.owner;
    assert.notDeepEqual(await owners("ethereum"), await owners("polygon"));
  }

  test("start: three chains indexed and served side by side, each on its own listeners; SIGTERM stops it cleanly", async () => {
    const start = run([
      "start",
      ...CHAINS.flatMap((c, i) => ["--chain", `${c.name}=${anvils[i]?.url}`]),
      "--confirmations",
      "0",
      "--rate-pools",
      "",
      "--usd-tokens",
      "",
      "--database-url",
      db.url,
      "--data-dir",
      dataDir,
      "--rest-port",
      "0",
      "--grpc-port",
      "0",
      "--metrics-port",
      "0",
      "--metrics-host",
      "127.0.0.3",
      "--poll-interval",
      "200",
    ]);
    try {
      const found = await listeners(
        start,
        CHAINS.map((c) => c.name),
      );
      // Indexed to each node's head.
      const deadline = Date.now() + 120_000;
      for (;;) {
        const heads = await Promise.all(
          anvils.map(async (a) => {
            const r = await fetch(a.url, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
            });
            return Number(((await r.json()) as { result: string }).result);
          }),
        );
        const rows = await db.sql<
          { chain_id: string; next_block: string }[]
        >`SELECT chain_id::text, next_block::text FROM chains`;
        const next = new Map(rows.map((r) => [Number(r.chain_id), Number(r.next_block)]));
        if (CHAINS.every((c, i) => (next.get(c.chainId) ?? 0) > (heads[i] ?? 0))) break;
        assert.ok(Date.now() < deadline, `not indexed in time:\n${start.stderr().slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      await checkEachChainServesItsOwn(found);
      // Each indexer runs at its node's head: its chain is ready (once the readiness, kept 1 s, is read again).
      for (const chain of CHAINS) {
        for (const until = Date.now() + 10_000; ; ) {
          const ready = await fetch(`${found.get(chain.name)?.rest}/readyz`);
          const text = await ready.text();
          if (ready.status === 200) break;
          assert.ok(Date.now() < until, `${chain.name}: ${text}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      // gRPC on each chain's own port, through the built-in client.
      const cert = join(dataDir, "tls", "grpc-cert.pem");
      // The key comes from a file or the environment, never from the command line.
      const keyFile = join(dataDir, "api-key");
      writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
      for (const [i, chain] of CHAINS.entries()) {
        const port = found.get(chain.name)?.grpc.split(":").at(-1);
        const target = ["--address", `localhost:${port}`, "--ca", cert];
        const call = await runCommand(
          [
            "call",
            "FoundationalService/ListContracts",
            '{"limit": 500}',
            ...target,
            ...(i === 0 ? ["--key-file", keyFile] : []),
          ],
          i === 0 ? { MINTLENS_API_KEY: "" } : { MINTLENS_API_KEY: key },
        );
        assert.equal(call.code, 0, call.stderr);
        const contracts = (JSON.parse(call.stdout) as { contracts: unknown[] }).contracts;
        const [stored] = await db.sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM contracts WHERE chain_id = ${chain.chainId}`;
        assert.equal(contracts.length, stored?.n, chain.name);
      }
      const onCommandLine = await runCommand(["call", "FoundationalService/ListContracts", "--key", key]);
      assert.notEqual(onCommandLine.code, 0);
      assert.match(onCommandLine.stderr, /unknown option '--key'/);
      const metricsUrl = /metrics: (\S+)/.exec(start.stderr())?.[1];
      // On its own host, apart from the API's.
      assert.match(metricsUrl ?? "", /^http:\/\/127\.0\.0\.3:\d+\/metrics$/);
      assert.match(found.get("ethereum")?.rest ?? "", /^http:\/\/127\.0\.0\.1:/);
      assert.ok(metricsUrl);
      const metrics = await (await fetch(metricsUrl)).text();
      for (const chain of CHAINS)
        assert.match(metrics, new RegExp(`mintlens_indexer_height\\{chain="${chain.name}"\\} \\d+`));
      // The metadata worker runs beside the indexers and counts what it looked for.
      const counted = new RegExp(
        `mintlens_metadata_tokens_total\\{chain="${CHAINS[0]?.name}",status="\\w+"\\} [1-9]`,
      );
      for (const until = Date.now() + 30_000; ; ) {
        if (counted.test(await (await fetch(metricsUrl)).text())) break;
        assert.ok(Date.now() < until, "the metadata worker's tokens are counted");
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      start.child.kill("SIGTERM");
    }
    assert.equal(await start.exited, 0, start.stderr().slice(-2000));
  });

  test("serve: the same store's chains, with no chain named, and refuses a chain it does not hold; metadata refresh", async () => {
    const serve = startCommand([
      "serve",
      "--database-url",
      db.url,
      "--data-dir",
      dataDir,
      "--rest-port",
      "0",
      "--grpc-port",
      "0",
      "--metrics-port",
      "off",
      "--response-cache",
      "0",
      "--ready-heartbeat",
      "1",
    ]);
    try {
      const found = await listeners(
        serve,
        CHAINS.map((c) => c.name),
      );
      await checkEachChainServesItsOwn(found);
      // No indexer runs any more (start was stopped): what it recorded in the store says so.
      await new Promise((r) => setTimeout(r, 1_100));
      const ready = await fetch(`${found.get("ethereum")?.rest}/readyz`);
      assert.equal(ready.status, 503);
      const body = (await ready.json()) as { status: string; reasons: string[]; indexedBlock: number };
      assert.equal(body.status, "NOT_SERVING");
      assert.match(body.reasons.join(), /the indexer last recorded the node's head [\d.]+ s ago/);
      assert.ok(body.indexedBlock > 0);
    } finally {
      serve.stop();
    }
    assert.equal(await serve.exited, 0, serve.stderr().slice(-2000));
    const refused = await runCommand([
      "serve",
      "--database-url",
      db.url,
      "--chain",
      "base",
      "--metrics-port",
      "off",
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /chain: base is not in the store/);

    // An operator's refresh queues a collection's tokens again.
    const [collection] = await db.sql<{ a: string; n: number }[]>`
      SELECT '0x' || encode(contract, 'hex') AS a, count(*)::int AS n FROM tokens WHERE chain_id = 1
      GROUP BY contract ORDER BY 2 DESC LIMIT 1`;
    assert.ok(collection);
    const refresh = await runCommand([
      "metadata",
      "refresh",
      collection.a,
      "--chain",
      "ethereum",
      "--database-url",
      db.url,
    ]);
    assert.equal(refresh.code, 0, refresh.stderr);
    assert.equal(refresh.stdout, `queued ${collection.n} tokens\n`);
    const refreshToken = (id: string) =>
      runCommand([
        "metadata",
        "refresh",
        collection.a,
        "--token",
        id,
        "--chain",
        "ethereum",
        "--database-url",
        db.url,
      ]);
    const [known] = await db.sql<{ id: string }[]>`
      SELECT token_id::text AS id FROM tokens WHERE contract = ${Buffer.from(collection.a.slice(2), "hex")} LIMIT 1`;
    assert.ok(known);
    const one = await refreshToken(known.id);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout, "queued 1 token\n");
    const unknown = await refreshToken("123456789");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /token 123456789 of 0x[0-9a-f]{40} is not known on ethereum/);
    const badRefresh = await runCommand([
      "metadata",
      "refresh",
      "0x12",
      "--chain",
      "ethereum",
      "--database-url",
      db.url,
    ]);
    assert.equal(badRefresh.code, 1);
    assert.match(badRefresh.stderr, /contract: 0x12 is not an address/);
  });
});
