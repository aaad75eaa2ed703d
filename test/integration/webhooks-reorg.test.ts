/**
 * Webhooks while the indexer follows a chain that reorganises: a receiver applying what it is sent
 * (deduplicated by cursor) ends with exactly the store's holdings and trades, and targets that fail
 * everything or never answer do not hold the indexer back (what they cost it is measured by
 * `npm run bench:ingest -- --compare-webhooks`).
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
  type ReceivedDelivery,
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
function deliver(indexerSql: Sql, settings: Partial<DelivererSettings> = {}) {
  const stop = new AbortController();
  const sql = openPoolLike(indexerSql, { max: 4 });
  const running = runWebhookDeliverer(
    {
      sql,
      chainId: CHAIN_ID,
      chain: "test",
      logger: silentLogger(),
      settings: { ...SETTINGS, ...settings },
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

  test("a target that never answers and targets failing everything, tried again at once, never hold the indexer back", async () => {
    const { anvil: history } = await startHistoryChain({
      chainId: CHAIN_ID,
      seed: "webhooks-pace",
      days: 8,
      genesis: "recent",
    });
    const silent = await startWebhookReceiver();
    silent.answer = () => "hang";
    try {
      const head = Number(await rawRpc<string>(history.url, "eth_blockNumber", []));
      const db = await createTestDatabase();
      databases.push(db);
      await indexUntil({ sql: db.sql, rpcUrl: history.url, chainId: CHAIN_ID, untilBlock: 0 });
      const doomed: string[] = [];
      for (let i = 0; i < 4; i++) doomed.push(await subscribe(db.sql, failing));
      const held = await subscribe(db.sql, silent);
      // Long enough that the silent target's first delivery is still waiting when indexing ends.
      const stop = deliver(db.sql, { timeoutMs: 600_000 });
      try {
        await indexUntil({
          sql: db.sql,
          rpcUrl: history.url,
          chainId: CHAIN_ID,
          untilBlock: Math.floor(head / 4),
        });
        await until("the silent target is sent a delivery", async () => silent.received.length > 0, 30_000);
        const waiting = silent.received[0] as ReceivedDelivery;
        const attemptsBefore = failing.keys.length;
        await indexUntil({ sql: db.sql, rpcUrl: history.url, chainId: CHAIN_ID, untilBlock: head });

        // The indexer went on to the head while that delivery was unanswered: nothing it does waits on one.
        assert.equal(await nextIndexedBlock(db.sql, CHAIN_ID), head + 1);
        assert.equal(silent.received.length, 1, "one delivery in flight per subscription");
        assert.equal(waiting.status, 0, "never answered");
        const latest = await latestCursor(db.sql, CHAIN_ID);
        assert.ok(latest > waiting.nextCursor, "events past the waiting delivery were written meanwhile");
        const stuck = await getWebhook(db.sql, held);
        assert.equal(
          stuck?.batch?.first,
          waiting.events[0]?.cursor,
          "the waiting delivery is its recorded batch",
        );
        assert.ok(stuck?.batch && stuck.cursor < stuck.batch.first, "nothing delivered past it");
        // The failing targets were tried again all along, each still at its first batch.
        assert.ok(failing.keys.length - attemptsBefore >= doomed.length * 2);
        for (const id of doomed) {
          const tried = new Set(failing.keys.filter((key) => key.startsWith(`${id}-`)));
          assert.equal(tried.size, 1, "always the same batch");
        }
      } finally {
        await stop();
      }
    } finally {
      await silent.close();
      await history.stop();
    }
  });
});
