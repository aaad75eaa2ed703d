import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Address } from "../../src/core/hex.ts";
import { generateHistory, historyGenesisTimestamp } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { connectDatabase, toHex } from "../../src/store/pg/database.ts";
import { EMPTY_OUTCOME, storeOutcome } from "../../src/store/tables/metadata.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startFaultProxy } from "../support/fault-proxy.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";
import { indexArguments, spawnMintlens } from "../support/mintlens-process.ts";
import { snapshotStore } from "../support/snapshot.ts";

const CHAIN_ID = 31337;

let anvil: Anvil;
let head: number;
let reference: TestDatabase;
let referenceSnapshot: Record<string, unknown[]>;
const databases: TestDatabase[] = [];

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

/** Only for a run that hangs: generous, so that a busy machine never makes a run look hung. */
const RUN_TIMEOUT_MS = 180_000;

/** Runs `mintlens index` as its own process and resolves with its exit code and stderr (null code: killed). */
function runIndexProcess(
  databaseUrl: string,
  rpcUrl: string,
  stopAt: number,
  killWhen?: (kill: () => void, exited: Promise<unknown>) => void,
) {
  const run = spawnMintlens(
    indexArguments({ rpcUrl, chainId: CHAIN_ID, databaseUrl, batchBlocks: 4, stopAt }),
    {
      timeoutMs: RUN_TIMEOUT_MS,
    },
  );
  killWhen?.(run.kill, run.exited);
  return run.exited;
}

/** Whether the indexer has registered its chain (it migrated and connected); fails over with the storm. */
async function indexingBegun(db: TestDatabase): Promise<boolean> {
  const rows = await db.sql`SELECT 1 FROM chains WHERE chain_id = ${CHAIN_ID}`.catch(() => []);
  return rows.length > 0;
}

describe("indexer resilience", () => {
  before(async () => {
    ({ anvil } = await startHistoryChain({
      chainId: CHAIN_ID,
      seed: "resilience",
      days: 60,
      genesis: "recent",
    }));
    head = Number(await rawRpc<string>(anvil.url, "eth_blockNumber", []));
    reference = await freshDatabase();
    await indexUntil({ sql: reference.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
    referenceSnapshot = await snapshotStore(reference.sql);
    assert.ok((referenceSnapshot.nft_transfers?.length ?? 0) > 500, "the reference run indexed the history");
    // Kills, dropped connections and reorganisations are checked on the sales too.
    assert.ok((referenceSnapshot.sales?.length ?? 0) >= 10, "the history has sales");
    assert.ok((referenceSnapshot.punk_bids?.length ?? 0) > 0, "the history has punk bids");
  });
  after(async () => {
    for (const db of databases) await db.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("kill -9 at random points during a backfill, restarted each time, ends identical to an uninterrupted run", async () => {
    const db = await freshDatabase();
    let seed = 20240501;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const nextBlock = async () => {
      const [row] = await db.sql<
        { next_block: string }[]
      >`SELECT next_block FROM chains WHERE chain_id = ${CHAIN_ID}`;
      return Number(row?.next_block ?? 0);
    };
    const KILLS = 6;
    let kills = 0;
    let finished = false;
    const progress: number[] = [];
    for (let attempt = 0; attempt < 40; attempt++) {
      const from = await nextBlock();
      const killWhen =
        kills >= KILLS
          ? undefined
          : attempt === 0
            ? // Before anything is committed: during start-up or the first batch.
              (kill: () => void) => setTimeout(kill, Math.floor(random() * 800))
            : // Once the indexer has committed past a random block, then a random few milliseconds
              // later: the kill lands between commits or in the middle of one.
              async (kill: () => void, exited: Promise<unknown>) => {
                const target = Math.max(from, 1) + Math.ceil((head - from) * 0.4 * random());
                let running = true;
                void exited.then(() => {
                  running = false;
                });
                while (running && (await nextBlock()) < target) await sleep(2);
                await sleep(Math.floor(random() * 20));
                if (running) kill();
              };
      const { code, stderr, hung } = await runIndexProcess(db.url, anvil.url, head, killWhen);
      assert.ok(!hung, `a run did not exit within ${RUN_TIMEOUT_MS / 1000} s: ${stderr}`);
      progress.push(await nextBlock());
      if (code === 0) {
        finished = true;
        break;
      }
      assert.equal(code, null, `the indexer failed on its own: ${stderr}`);
      kills++;
    }
    assert.ok(finished, `the indexer finished (progress after each run: ${progress.join(", ")})`);
    assert.ok(
      kills >= 3,
      `it was killed mid-backfill several times (${kills}; progress ${progress.join(", ")})`,
    );
    assert.ok(
      progress.some((p, i) => i < progress.length - 1 && p > 0 && p <= head),
      "at least one kill landed after some batches were committed and before the end",
    );
    assert.deepEqual(await snapshotStore(db.sql), referenceSnapshot);
  });

  test("database connections dropped mid-run, the chain lock's among them, are retried: the store is the same", async () => {
    const db = await freshDatabase();
    const name = new URL(db.url).pathname.slice(1);
    // Every connection of the indexer's database, at chosen points of its progress: the writes,
    // the reads, and the connection holding the chain lock. Terminated as a failover would.
    const killAt = new Set([2, 5, 9, 14, 20]);
    let reports = 0;
    const terminations: Promise<unknown>[] = [];
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      untilBlock: head,
      tuning: { maxBlocksPerBatch: 4 },
      onProgress: () => {
        if (!killAt.has(++reports)) return;
        terminations.push(
          reference.sql`
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = ${name} AND pid <> pg_backend_pid()`,
        );
      },
    });
    await Promise.all(terminations);
    assert.equal(terminations.length, killAt.size, "every planned termination happened during the run");
    // The test's own pool lost its connections too: read the result on a new one.
    const check = await connectDatabase(db.url);
    try {
      assert.deepEqual(await snapshotStore(check), referenceSnapshot);
    } finally {
      await check.end();
    }
  });

  test("the mintlens process under a storm of terminated database connections neither crashes nor hangs, and the store is the same", async () => {
    const db = await freshDatabase();
    const name = new URL(db.url).pathname.slice(1);
    // Every connection of the indexer's database, every 40 ms for 6 s once indexing has begun:
    // connections die while connecting, while idle, in the middle of pipelined writes and while
    // holding the lock.
    let terminated = 0;
    let storm: Promise<void> = Promise.resolve();
    const { code, stderr, hung } = await runIndexProcess(db.url, anvil.url, head, (_kill, exited) => {
      let running = true;
      void exited.then(() => {
        running = false;
      });
      storm = (async () => {
        while (running && (await indexingBegun(db)) === false) await sleep(20);
        const until = Date.now() + 6_000;
        while (running && Date.now() < until) {
          await sleep(40);
          const ended = await reference.sql`
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = ${name} AND pid <> pg_backend_pid()`;
          terminated += ended.length;
        }
      })();
    });
    await storm;
    assert.ok(!hung, `the run did not exit within ${RUN_TIMEOUT_MS / 1000} s: ${stderr}`);
    assert.equal(code, 0, `the indexer exited cleanly: ${stderr.slice(-2000)}`);
    assert.ok(terminated >= 5, `connections were terminated during the run (${terminated})`);
    const retries = stderr.match(/"kind":"outage"/g)?.length ?? 0;
    assert.ok(retries >= 2, `the lost connections were retried as outages (${retries})`);
    const check = await connectDatabase(db.url);
    try {
      assert.deepEqual(await snapshotStore(check), referenceSnapshot);
    } finally {
      await check.end();
    }
  });

  test("through a node that throttles, fails, hangs, drops and truncates answers, the store is the same", async () => {
    const proxy = await startFaultProxy({
      upstream: anvil.url,
      seed: 7,
      maxLogRange: 20,
      rates: {
        tooManyRequests: 0.04,
        serverError: 0.04,
        hang: 0.03,
        reset: 0.06,
        truncate: 0.04,
        dropBatchElement: 0.04,
        nullBlock: 0.02,
      },
    });
    try {
      const db = await freshDatabase();
      await indexUntil({
        sql: db.sql,
        rpcUrl: proxy.url,
        chainId: CHAIN_ID,
        untilBlock: head,
        // Small JSON-RPC batches make many HTTP requests, so every kind of fault gets its turn.
        tuning: { rpcTimeoutMs: 1000, rpcRetries: 12, rpcBatchSize: 4 },
      });
      for (const kind of [
        "tooManyRequests",
        "serverError",
        "hang",
        "reset",
        "truncate",
        "dropBatchElement",
        "nullBlock",
      ] as const) {
        assert.ok(proxy.counters[kind] > 0, `the proxy injected ${kind}`);
      }
      assert.ok(
        proxy.counters.rangeRefused.some((n) => n > 0),
        "the proxy refused log ranges",
      );
      assert.deepEqual(await snapshotStore(db.sql), referenceSnapshot);
    } finally {
      await proxy.close();
    }
  });

  test("a reorganisation replaces the last blocks: the store matches a fresh index of the new chain", async () => {
    // A chain of its own, so the shared one stays as the other tests expect it.
    const fork = await startAnvil({ chainId: CHAIN_ID, timestamp: historyGenesisTimestamp(40) });
    try {
      await generateHistory({ rpcUrl: fork.url, seed: "trunk", days: 20 });
      const snapshot = await rawRpc<string>(fork.url, "evm_snapshot", []);
      const forkPoint = Number(await rawRpc<string>(fork.url, "eth_blockNumber", []));
      await generateHistory({ rpcUrl: fork.url, seed: "orphaned", days: 5 });
      const oldHead = Number(await rawRpc<string>(fork.url, "eth_blockNumber", []));
      const db = await freshDatabase();
      await indexUntil({ sql: db.sql, rpcUrl: fork.url, chainId: CHAIN_ID, untilBlock: oldHead });
      const orphaned = await snapshotStore(db.sql);
      // As if the metadata worker had fetched every token so far (their queue rows stay, as the
      // fresh index has them too).
      await db.sql`
        INSERT INTO token_metadata (chain_id, contract, token_id, status, raw, fetched_at)
        SELECT chain_id, contract, token_id, 'ok', '{"name":"before"}', now() FROM tokens`;
      const stillMinted = await db.sql<{ contract: Uint8Array; token_id: string }[]>`
        SELECT contract, token_id::text FROM tokens WHERE block_number <= ${forkPoint} ORDER BY contract, token_id`;
      const orphanedMint = await db.sql<{ contract: Uint8Array; token_id: string }[]>`
        SELECT contract, token_id::text FROM tokens WHERE block_number > ${forkPoint}`;
      assert.ok(orphanedMint.length > 0, "the orphaned branch minted tokens");

      assert.equal(await rawRpc<boolean>(fork.url, "evm_revert", [snapshot]), true);
      await generateHistory({ rpcUrl: fork.url, seed: "canonical", days: 8 });
      const newHead = Number(await rawRpc<string>(fork.url, "eth_blockNumber", []));
      assert.ok(newHead > oldHead, "the new branch is longer");
      await indexUntil({ sql: db.sql, rpcUrl: fork.url, chainId: CHAIN_ID, untilBlock: newHead });

      const fresh = await freshDatabase();
      await indexUntil({ sql: fresh.sql, rpcUrl: fork.url, chainId: CHAIN_ID, untilBlock: newHead });
      const expected = await snapshotStore(fresh.sql);
      assert.notDeepEqual(
        orphaned.contracts,
        expected.contracts,
        "the orphaned branch had contracts of its own",
      );
      const after = (rows: unknown[] | undefined) =>
        (rows ?? []).filter((r) => Number((r as { block_number: string }).block_number) > forkPoint).length;
      assert.ok(after(orphaned.sales) > 0, "the orphaned branch had sales to roll back");
      assert.ok(after(expected.sales) > 0, "the new branch has sales of its own");
      assert.ok(forkPoint < oldHead);
      assert.deepEqual(await snapshotStore(db.sql), expected);
      assert.ok((expected.metadata_queue?.length ?? 0) > 0, "minted tokens are pending for their metadata");

      // Metadata of tokens minted before the fork is kept; of those minted on the orphaned branch, forgotten.
      const kept = await db.sql<{ contract: Uint8Array; token_id: string }[]>`
        SELECT contract, token_id::text FROM token_metadata ORDER BY contract, token_id`;
      assert.ok(stillMinted.length > 0);
      assert.deepEqual(kept, stillMinted);
      // A worker that fetched an orphaned token while the reorganisation took it stores nothing.
      const minted = new Set(
        (
          await db.sql<
            { key: string }[]
          >`SELECT encode(contract, 'hex') || ':' || token_id AS key FROM tokens`
        ).map((r) => r.key),
      );
      const gone = orphanedMint.find((t) => !minted.has(`${toHex(t.contract).slice(2)}:${t.token_id}`));
      assert.ok(gone, "a token of the orphaned branch is not minted on the new one");
      const token = { contract: toHex(gone.contract) as Address, tokenId: BigInt(gone.token_id), lease: "0" };
      assert.equal(
        await storeOutcome(db.sql, CHAIN_ID, token, { ...EMPTY_OUTCOME, status: "ok", raw: "{}" }),
        false,
      );
      const stored = await db.sql`
        SELECT 1 FROM token_metadata WHERE contract = ${gone.contract} AND token_id = ${gone.token_id}::numeric`;
      assert.equal(stored.length, 0, "an outcome for a token no longer queued is not stored");
    } finally {
      await fork.stop();
    }
  });
});
