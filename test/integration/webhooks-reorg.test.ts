/**
 * Webhooks while the indexer follows a chain that reorganises: a receiver applying what it is sent
 * (deduplicated by cursor) ends with exactly the store's holdings and trades, and a target that
 * fails everything costs the indexer nothing it would notice.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../../src/core/logger.ts";
import { historyGenesisTimestamp } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import { openPoolLike, type Sql } from "../../src/store/pg/database.ts";
import { latestCursor } from "../../src/store/read/stream-events.ts";
import { getWebhook, insertWebhook } from "../../src/store/tables/webhooks.ts";
import { type DelivererSettings, runWebhookDeliverer } from "../../src/webhooks/deliverer.ts";
import { newWebhookId, newWebhookSecret } from "../../src/webhooks/signature.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil, nextIndexedBlock } from "../support/indexing.ts";
import { runReorganisingHistory, storeTruth, until } from "../support/reorganising-chain.ts";
import {
  startFailingTarget,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.ts";

const CHAIN_ID = 31337;
const SETTINGS: Partial<DelivererSettings> = {
  allow: parseAllowList(["127.0.0.1"]),
  timeoutMs: 2000,
  // A failing target is tried again every 50 ms at most: twelve thousand times the default's pace.
  policy: { baseDelayMs: 10, maxDelayMs: 50, pauseFailures: 1_000_000, pauseAfterMs: 3_600_000 },
};

/** Subscribes `receiver` to every event from the start. */
async function subscribe(
  sql: Sql,
  receiver: { url: string; secrets?: Map<string, string> },
): Promise<string> {
  const id = newWebhookId();
  const secret = newWebhookSecret();
  receiver.secrets?.set(id, secret);
  await insertWebhook(sql, {
    id,
    chainId: CHAIN_ID,
    url: receiver.url,
    secret,
    kinds: [],
    contracts: [],
    addresses: [],
    confirmations: undefined,
    cursor: 0n,
  });
  return id;
}

/** A deliverer on a pool of its own, as `mintlens index` runs it. */
function deliver(indexerSql: Sql) {
  const stop = new AbortController();
  const sql = openPoolLike(indexerSql, { max: 4 });
  const running = runWebhookDeliverer(
    {
      sql,
      chainId: CHAIN_ID,
      chain: "test",
      logger: silentLogger(),
      settings: SETTINGS,
      refreshMs: 50,
      wakeMs: 20,
    },
    stop.signal,
  );
  return async () => {
    stop.abort();
    await running;
    await sql.end({ timeout: 5 });
  };
}

const databases: TestDatabase[] = [];
let good: WebhookReceiver;
let failing: Awaited<ReturnType<typeof startFailingTarget>>;

before(async () => {
  good = await startWebhookReceiver();
  failing = await startFailingTarget();
});
after(async () => {
  await good?.close();
  await failing?.close();
  for (const db of databases) await db.close();
  await stopTestServer();
});

describe("webhooks on a reorganising chain", () => {
  let anvil: Anvil | undefined;
  after(async () => {
    await anvil?.stop();
  });

  test("a receiver applying what it is sent ends with exactly the store's holdings and trades", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const chain = await startAnvil({ chainId: CHAIN_ID, timestamp: historyGenesisTimestamp(20) });
    anvil = chain;
    const indexing = new AbortController();
    const indexer = indexUntil({
      sql: db.sql,
      rpcUrl: chain.url,
      chainId: CHAIN_ID,
      signal: indexing.signal,
      tuning: { maxBlocksPerBatch: 3, pollIntervalMs: 50 },
    });
    await until(
      "the indexer registers the chain",
      async () => (await nextIndexedBlock(db.sql, CHAIN_ID)) > 0,
    );
    const id = await subscribe(db.sql, good);
    const doomed = await subscribe(db.sql, failing);
    const stop = deliver(db.sql);
    try {
      await runReorganisingHistory({
        sql: db.sql,
        chainId: CHAIN_ID,
        rpcUrl: chain.url,
        seed: "webhooks",
        trunkDays: 5,
        catchUpMs: 60_000,
        // The orphaned blocks' events reach the receiver before they are taken back.
        onOrphaned: async () => {
          const orphaned = await latestCursor(db.sql, CHAIN_ID);
          await until(
            "the receiver is sent the orphaned blocks",
            async () => (await getWebhook(db.sql, id))?.cursor === orphaned,
            60_000,
          );
        },
      });
      const latest = await latestCursor(db.sql, CHAIN_ID);
      await until(
        "the receiver is delivered through the newest cursor",
        async () => (await getWebhook(db.sql, id))?.cursor === latest,
        60_000,
      );
    } finally {
      indexing.abort();
      await indexer.catch(() => {});
      await stop();
    }
    const consumer = good.consumers.get(id);
    assert.ok(consumer);
    assert.ok(
      consumer.seen.some((e) => e.kind === "retraction"),
      "the reorganisations were retracted to the receiver",
    );
    assert.equal(consumer.ignored, 0, "a retraction only of what it was sent");
    assert.ok(good.received.every((d) => d.problem === undefined));

    const truth = await storeTruth(db.sql, CHAIN_ID);
    assert.deepEqual(consumer.units, truth.holdings, "0 lost, 0 counted twice");
    assert.deepEqual(consumer.tradeSummary(), truth.trades);
    // The failing target was tried again and again, and is still at its first batch.
    const tried = failing.keys.filter((key) => key.startsWith(`${doomed}-`));
    assert.ok(tried.length > 10, `${tried.length} attempts`);
    assert.equal(new Set(tried).size, 1, "always the same batch");
    const stuck = await getWebhook(db.sql, doomed);
    assert.equal(`${doomed}-${stuck?.batch?.first}-${stuck?.batch?.last}`, tried[0], "the batch recorded");
    assert.ok(stuck?.batch && stuck.cursor < stuck.batch.first, "not delivered past it");
    // Each attempt answered is a failure recorded; one the deliverer's shutdown cut short is not.
    assert.ok(
      stuck && (stuck.failures === tried.length || stuck.failures === tried.length - 1),
      `${stuck?.failures} failures recorded for ${tried.length} attempts`,
    );
  });

  test("targets failing everything, tried again at once, do not slow the indexer down", async (t) => {
    const { anvil: history } = await startHistoryChain({
      chainId: CHAIN_ID,
      seed: "webhooks-pace",
      days: 8,
      genesis: "recent",
    });
    try {
      const head = Number(await rawRpc<string>(history.url, "eth_blockNumber", []));
      const index = async (withTargets: boolean): Promise<number> => {
        const db = await createTestDatabase();
        databases.push(db);
        let stop: (() => Promise<void>) | undefined;
        if (withTargets) {
          await indexUntil({ sql: db.sql, rpcUrl: history.url, chainId: CHAIN_ID, untilBlock: 0 });
          for (let i = 0; i < 4; i++) await subscribe(db.sql, failing);
          stop = deliver(db.sql);
        }
        const started = performance.now();
        try {
          await indexUntil({ sql: db.sql, rpcUrl: history.url, chainId: CHAIN_ID, untilBlock: head });
          return performance.now() - started;
        } finally {
          await stop?.();
        }
      };
      const attemptsBefore = failing.keys.length;
      // Once without, to warm up, then alternately; the medians compared.
      await index(false);
      const without: number[] = [];
      const withTargets: number[] = [];
      for (let run = 0; run < 2; run++) {
        without.push(await index(false));
        withTargets.push(await index(true));
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
      const timings = `indexing took ${withTargets.map(Math.round)} ms with failing targets, ${without.map(Math.round)} ms without; ${failing.keys.length - attemptsBefore} attempts`;
      t.diagnostic(timings);
      // Each of the four targets was tried again meanwhile.
      assert.ok(failing.keys.length - attemptsBefore >= 4 * 2, timings);
      assert.ok(median(withTargets) < median(without) * 1.5 + 1000, timings);
    } finally {
      await history.stop();
    }
  });
});
