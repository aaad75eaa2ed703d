/**
 * Mintlens across databases: a PostgreSQL 15 primary and a streaming standby of it; `mintlens
 * index` writes two chains to the primary, each in a database of its own, while two `mintlens
 * serve` processes read both from the standby as a read-only role. A transfer committed on the
 * primary reaches both within the freshness target (the one-second data version poll plus
 * replication), the measured delay printed; while the standby's replay is paused, both keep
 * answering the state it holds; each chain's listeners answer its own contracts and not found for
 * the other's. Runs where Debian's PostgreSQL 15 binaries are (CI installs them); skipped elsewhere.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { generateKey } from "../../src/api/keys.ts";
import type { Address } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import {
  connectDevChain,
  type DevChain,
  deployArtifact,
  devAddress,
  sendContractTx,
} from "../../src/devchain/deploy.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { runCommand } from "../support/cli.ts";
import { type ReplicaCluster, replicaClusterUnavailable, startReplicaCluster } from "../support/replica.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Version poll (1 s) plus replication, with room for a busy machine: the target, asserted. */
const FRESHNESS_TARGET_MS = 5_000;
/** How long a serve process waits for a request's minBlock before refusing it. */
const MIN_BLOCK_WAIT_MS = 3_000;
/** Only for a hang. */
const GIVE_UP_MS = 60_000;

const CHAINS = [
  { name: "alpha", chainId: 901, database: "mintlens", deployer: 1, holder: 2 },
  { name: "beta", chainId: 902, database: "mintlens_beta", deployer: 3, holder: 4 },
] as const;
type ChainName = (typeof CHAINS)[number]["name"];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Running {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** The real `mintlens` as a child process, killed by PID after four minutes should it hang. */
function run(args: string[]): Running {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: "", MINTLENS_CHAINS: "", MINTLENS_LOG_LEVEL: "warn" },
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

async function stopProcess(running: Running | undefined): Promise<void> {
  if (running === undefined || running.child.exitCode !== null) return;
  running.child.kill("SIGTERM");
  const killer = setTimeout(() => running.child.kill("SIGKILL"), 15_000);
  await running.exited;
  clearTimeout(killer);
}

/** Each chain's REST URL, once the process has announced all of them. */
async function restUrls(running: Running): Promise<Map<string, string>> {
  const deadline = Date.now() + GIVE_UP_MS;
  while (Date.now() < deadline) {
    const found = new Map<string, string>();
    for (const m of running.stderr().matchAll(/^(\w+) \(chain \d+\): REST (\S+)/gm)) {
      found.set(m[1] as string, m[2] as string);
    }
    if (CHAINS.every((c) => found.has(c.name))) return found;
    if (running.child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`no listeners announced:\n${running.stderr()}`);
}

/** Polls `check` every 25 ms until it holds; the time it took, or a failure after `limitMs`. */
async function until(what: string, check: () => Promise<boolean>, limitMs = GIVE_UP_MS): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (await check()) return Date.now() - started;
    await sleep(25);
  }
  assert.fail(`${what}: not within ${limitMs} ms`);
}

const skip = replicaClusterUnavailable();

describe("a database per chain, read through a streaming replica", { skip }, () => {
  let cluster: ReplicaCluster;
  const anvils = new Map<ChainName, Anvil>();
  const chains = new Map<ChainName, DevChain>();
  const contracts = new Map<ChainName, Address>();
  const primaries = new Map<ChainName, postgres.Sql>();
  let indexer: Running | undefined;
  const serves: Running[] = [];
  /** Per serve process, each chain's REST URL. */
  const listeners: Map<string, string>[] = [];
  let key: string;
  const dataDirs: string[] = [];

  before(async () => {
    // The cluster and the chains start side by side.
    const starting = startReplicaCluster();
    const chainsReady = Promise.all(
      CHAINS.map(async (chain) => {
        const anvil = await startAnvil({ chainId: chain.chainId });
        anvils.set(chain.name, anvil);
        const dev = connectDevChain(anvil.url);
        chains.set(chain.name, dev);
        // Different deployers: the two chains' collections have different addresses.
        const deployed = await deployArtifact(dev, "TestERC721", [chain.name, chain.name.toUpperCase()], {
          from: devAddress(chain.deployer),
        });
        contracts.set(chain.name, deployed.address);
        return mint(chain.name, devAddress(chain.holder), 1n);
      }),
    );
    const [started] = await Promise.allSettled([starting, chainsReady]);
    if (started.status === "fulfilled") cluster = started.value;
    const minted = await chainsReady;
    cluster = await starting;
    const admin = postgres(cluster.primaryUrl("postgres"), { max: 1, onnotice: () => {} });
    for (const chain of CHAINS) await admin.unsafe(`CREATE DATABASE ${chain.database}`);
    // Reads only: the API needs no write on the standby, where none is possible anyway.
    await admin.unsafe("CREATE ROLE reader LOGIN; GRANT pg_read_all_data TO reader");
    await admin.end();
    for (const chain of CHAINS) {
      primaries.set(chain.name, postgres(cluster.primaryUrl(chain.database), { max: 2, onnotice: () => {} }));
    }
    const migrated = await runCommand(["migrate", ...databaseFlags((db) => cluster.primaryUrl(db))]);
    assert.equal(migrated.code, 0, migrated.stderr);
    const k = generateKey();
    await insertApiKey(primaries.get("alpha") as postgres.Sql, {
      userName: "replica",
      keyId: k.keyId,
      keyHash: k.hash,
    });
    key = k.key;

    const indexFlags = [
      ...CHAINS.flatMap((c) => [
        "--chain",
        `${c.name}=${anvils.get(c.name)?.url}`,
        "--chain-id",
        `${c.name}=${c.chainId}`,
      ]),
      "--native-symbol",
      "ETH",
      "--confirmations",
      "0",
      "--poll-interval",
      "100",
      "--rate-pools",
      "",
      "--usd-tokens",
      "",
      ...databaseFlags((db) => cluster.primaryUrl(db)),
    ];
    // The chains' first blocks, indexed in the test's own process (no second start of node), so
    // that the serve processes find both chains on the standby as they start.
    const first = await runCommand(["index", ...indexFlags, "--stop-at", String(Math.min(...minted))]);
    assert.equal(first.code, 0, first.stderr);
    await until("both chains replicated", async () => {
      const found = await Promise.all(
        CHAINS.map(async (c) => {
          const sql = postgres(cluster.standbyUrl(c.database, "reader"), { max: 1, onnotice: () => {} });
          try {
            return (await sql`SELECT 1 FROM chains WHERE chain_id = ${c.chainId}`).length === 1;
          } finally {
            await sql.end();
          }
        }),
      );
      return found.every(Boolean);
    });
    // The indexer goes on as a process of its own, beside the two serve processes.
    indexer = run(["index", ...indexFlags]);
    for (let i = 0; i < 2; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), "mintlens-replica-serve-"));
      dataDirs.push(dataDir);
      serves.push(
        run([
          "serve",
          ...databaseFlags((db) => cluster.standbyUrl(db, "reader")),
          "--data-dir",
          dataDir,
          "--rest-port",
          "0",
          "--grpc-port",
          "0",
          "--metrics-port",
          "off",
          "--api-pool-size",
          "4",
          "--min-block-wait",
          String(MIN_BLOCK_WAIT_MS),
        ]),
      );
    }
    for (const serve of serves) listeners.push(await restUrls(serve));
  });

  after(async () => {
    await Promise.all([...serves, indexer].map(stopProcess));
    for (const sql of primaries.values()) await sql.end();
    for (const anvil of anvils.values()) await anvil.stop();
    await cluster?.stop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  /** The default database bare, every other chain's with its name. */
  function databaseFlags(url: (database: string) => string): string[] {
    return CHAINS.flatMap((c, i) => [
      "--database-url",
      i === 0 ? url(c.database) : `${c.name}=${url(c.database)}`,
    ]);
  }

  async function mint(chain: ChainName, to: Address, tokenId: bigint): Promise<number> {
    const receipt = await sendContractTx(chains.get(chain) as DevChain, {
      address: contracts.get(chain) as Address,
      abi: loadArtifact("TestERC721").abi,
      functionName: "mint",
      args: [to, tokenId],
    });
    return Number(receipt.blockNumber);
  }

  async function transfer(chain: ChainName, from: Address, to: Address, tokenId: bigint): Promise<number> {
    const receipt = await sendContractTx(chains.get(chain) as DevChain, {
      address: contracts.get(chain) as Address,
      abi: loadArtifact("TestERC721").abi,
      functionName: "transferFrom",
      args: [from, to, tokenId],
      from,
    });
    return Number(receipt.blockNumber);
  }

  /** Once the primary holds `block` of `chain` committed (the indexer's own commit). */
  async function committedOnPrimary(chain: ChainName, block: number): Promise<void> {
    const sql = primaries.get(chain) as postgres.Sql;
    const chainId = CHAINS.find((c) => c.name === chain)?.chainId ?? 0;
    await until(`${chain} block ${block} committed on the primary`, async () => {
      const [row] = await sql<{ next: string }[]>`
        SELECT next_block::text AS next FROM chains WHERE chain_id = ${chainId}`;
      return row !== undefined && Number(row.next) > block;
    });
  }

  async function get(
    base: string | undefined,
    path: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${base}${path}`, { headers: { "x-api-key": key } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /**
   * The owners of a token as one serve process answers them; `query` adds request parameters (such
   * as the least block an answer must reflect).
   */
  async function ownersThrough(
    serve: number,
    chain: ChainName,
    tokenId: bigint,
    query: Record<string, string> = {},
  ): Promise<string[]> {
    const search = new URLSearchParams(query).toString();
    const path = `/foundational/v1beta2/nfts/${contracts.get(chain)}/${tokenId}/owners${search ? `?${search}` : ""}`;
    const answer = await get(listeners[serve]?.get(chain), path);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return (answer.body.owners as { address: string }[]).map((o) => o.address);
  }

  test("a transfer committed on the primary shows through both serve processes on the standby within the target", async () => {
    const [from, to] = [devAddress(2), devAddress(5)];
    assert.deepEqual(await ownersThrough(0, "alpha", 1n), [from]);
    const block = await transfer("alpha", from, to, 1n);
    await committedOnPrimary("alpha", block);
    const delays = await Promise.all(
      serves.map((_, serve) =>
        until(`serve ${serve} shows the transfer`, async () => {
          const owners = await ownersThrough(serve, "alpha", 1n);
          return owners.length === 1 && owners[0] === to;
        }),
      ),
    );
    console.log(
      `# committed on the primary to shown by each serve process on the standby: ${delays.join(" ms, ")} ms`,
    );
    for (const delay of delays) assert.ok(delay < FRESHNESS_TARGET_MS, `${delay} ms`);
  });

  test("while the standby's replay is paused, both serve processes keep answering the state it holds", async () => {
    const [from, to] = [devAddress(5), devAddress(6)];
    await until("the previous transfer shown", async () => (await ownersThrough(0, "alpha", 1n))[0] === from);
    await cluster.pauseReplay();
    try {
      const block = await transfer("alpha", from, to, 1n);
      await committedOnPrimary("alpha", block);
      // A client that saw this block asks for it: a standby that has not replayed it waits its
      // --min-block-wait and refuses, with a retry hint, rather than answer the older state.
      const primaryHeight = block;
      assert.ok(primaryHeight > 0);
      const path = `/foundational/v1beta2/nfts/${contracts.get("alpha")}/1/owners?minBlock=${primaryHeight}`;
      const started = Date.now();
      const refused = await fetch(`${listeners[0]?.get("alpha")}${path}`, { headers: { "x-api-key": key } });
      const waited = Date.now() - started;
      assert.equal(refused.status, 503, await refused.text());
      assert.ok(Number(refused.headers.get("retry-after")) >= 1, "a retry hint");
      assert.ok(
        BigInt(refused.headers.get("mintlens-block") ?? "0") < BigInt(primaryHeight),
        "the block it holds",
      );
      assert.ok(waited >= MIN_BLOCK_WAIT_MS - 50, `refused after waiting ${waited} ms`);
      // Past a version poll and more: nothing replayed, so nothing changes.
      const watchUntil = Date.now() + 2_500;
      while (Date.now() < watchUntil) {
        for (const serve of serves.keys()) {
          assert.deepEqual(await ownersThrough(serve, "alpha", 1n), [from], `serve ${serve}`);
        }
        await sleep(100);
      }
      // Asked again while the standby catches up: the answer waits for the block, then shows the transfer.
      const waiting = ownersThrough(1, "alpha", 1n, { minBlock: String(primaryHeight) });
      await sleep(100);
      await cluster.resumeReplay();
      assert.deepEqual(await waiting, [to], "the answer at the asked block");
    } finally {
      await cluster.resumeReplay();
    }
    await Promise.all(
      serves.map((_, serve) =>
        until(
          `serve ${serve} catches up once replay resumes`,
          async () => (await ownersThrough(serve, "alpha", 1n))[0] === to,
          15_000,
        ),
      ),
    );
  });

  test("two chains in two databases: each listener answers its own chain's contracts and not found for the other's", async () => {
    for (const serve of serves.keys()) {
      for (const chain of CHAINS) {
        const other = CHAINS.find((c) => c.name !== chain.name)?.name as ChainName;
        const base = listeners[serve]?.get(chain.name);
        const own = await get(base, `/foundational/v1beta2/nfts/${contracts.get(chain.name)}/1/details`);
        assert.equal(own.status, 200, `${chain.name}: ${JSON.stringify(own.body)}`);
        const theirs = await get(base, `/foundational/v1beta2/nfts/${contracts.get(other)}/1/details`);
        assert.equal(
          theirs.status,
          404,
          `${other}'s contract through ${chain.name}: ${JSON.stringify(theirs.body)}`,
        );
      }
    }
    // Each chain's rows are in its own database only.
    for (const chain of CHAINS) {
      for (const [name, sql] of primaries) {
        const [row] = await sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM nft_transfers WHERE chain_id = ${chain.chainId}`;
        if (name === chain.name) assert.ok((row?.n ?? 0) > 0, `${chain.name} in its database`);
        else assert.equal(row?.n, 0, `${chain.name} in ${name}'s database`);
      }
    }
  });
});
