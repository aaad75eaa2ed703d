/**
 * Webhook deliveries when `mintlens index` is killed (-9) while delivering and started again: the
 * receiver ends with every event, and the only repeats are batches that were in flight, sent again
 * whole under the same idempotency key.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { StreamEvent } from "../../src/core/stream-events.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { latestCursor, readStreamEvents } from "../../src/store/read/stream-events.ts";
import { ensureChain } from "../../src/store/tables/chain-state.ts";
import { getWebhook } from "../../src/store/tables/webhooks.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { runCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { nextIndexedBlock } from "../support/indexing.ts";
import { indexArguments, spawnMintlens } from "../support/mintlens-process.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";

const CHAIN_ID = 31337;
/** Only for a run that hangs: generous, so that a busy machine never makes a run look hung. */
const RUN_TIMEOUT_MS = 120_000;

let anvil: Anvil;
let head: number;
let db: TestDatabase;
let receiver: WebhookReceiver;

before(async () => {
  ({ anvil } = await startHistoryChain({
    chainId: CHAIN_ID,
    seed: "webhooks-crash",
    days: 6,
    genesis: "recent",
  }));
  head = Number(await rawRpc<string>(anvil.url, "eth_blockNumber", []));
  db = await createTestDatabase();
  receiver = await startWebhookReceiver();
});
after(async () => {
  await receiver?.close();
  await db?.close();
  await anvil?.stop();
  await stopTestServer();
});

/** `mintlens index` following the chain, delivering to loopback; killed with -9 or stopped by the test. */
function runIndex(more: readonly string[] = []) {
  return spawnMintlens(
    indexArguments({
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      databaseUrl: db.url,
      batchBlocks: 20,
      extra: [
        "--poll-interval",
        "100",
        "--webhook-allow",
        "127.0.0.1",
        "--webhook-retry-base",
        "50",
        "--webhook-retry-max",
        "200",
        ...more,
      ],
    }),
    { timeoutMs: RUN_TIMEOUT_MS },
  );
}

test("kill -9 while delivering and restarts: every event arrives, repeats only of the batch in flight", async (t) => {
  await ensureChain(db.sql, { chainId: CHAIN_ID, name: "test", nativeSymbol: "ETH", startBlock: 0 });
  const added = await runCommand([
    "webhooks",
    "add",
    receiver.url,
    "--chain",
    "test",
    "--from",
    "0",
    "--webhook-allow",
    "127.0.0.1",
    "--database-url",
    db.url,
  ]);
  assert.equal(added.code, 0, added.stderr);
  const [id, secret] = added.stdout.trim().split("\n") as [string, string];
  receiver.secrets.set(id, secret);
  // Slow enough that a kill often lands while a batch is in flight.
  receiver.answer = (d) => ({ status: d.problem ? 401 : 200, delayMs: 30 });

  let kills = 0;
  let metrics = "";
  for (let round = 0; round < 4; round++) {
    const run = runIndex();
    const seen = receiver.received.length;
    const deadline = Date.now() + 60_000;
    // Killed once a few more deliveries have arrived, at a point the round picks.
    while (receiver.received.length < seen + 2 + round && Date.now() < deadline) await sleep(5);
    await sleep(round * 7);
    run.kill();
    const { code, stderr } = await run.exited;
    assert.equal(code, null, `the process ended on its own: ${stderr}`);
    kills++;
  }
  // The last run serves its metrics, on a port of the system's choosing.
  const last = runIndex(["--metrics-port", "0"]);
  try {
    const deadline = Date.now() + 90_000;
    // Stopped only once it runs its deliverer (whose connections name it), not while it starts.
    for (;;) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the deliverer to start");
      const [running] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'mintlens-webhooks'`;
      if ((running?.n ?? 0) > 0) break;
      await sleep(50);
    }
    for (;;) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the deliveries");
      if ((await nextIndexedBlock(db.sql, CHAIN_ID)) > head) {
        const latest = await latestCursor(db.sql, CHAIN_ID);
        if ((await getWebhook(db.sql, id))?.cursor === latest) break;
      }
      await sleep(50);
    }
    const metricsUrl = /metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(last.stderr())?.[1];
    assert.ok(metricsUrl, `the metrics address is told: ${last.stderr()}`);
    const indexed = (await nextIndexedBlock(db.sql, CHAIN_ID)) - 1;
    // The indexer's height is set as each batch commits; the deliverer counts its paused
    // subscriptions at each look at them.
    for (;;) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for the metrics:\n${metrics}`);
      metrics = await (await fetch(metricsUrl)).text();
      if (
        metrics.includes(`mintlens_indexer_height{chain="test"} ${indexed}`) &&
        metrics.includes('mintlens_indexer_lag_blocks{chain="test"} 0') &&
        metrics.includes('mintlens_webhook_paused{chain="test"} 0') &&
        metrics.includes('mintlens_abort_listeners{signal="shutdown"}')
      )
        break;
      await sleep(50);
    }
  } finally {
    last.child.kill("SIGTERM");
    const { code, stderr } = await last.exited;
    assert.equal(code, 0, stderr);
  }

  const all: StreamEvent[] = [];
  let cursor = 0n;
  for (let i = 0; i < 1000; i++) {
    const page = await readStreamEvents(db.sql, CHAIN_ID, { after: cursor, limit: 1000 });
    all.push(...page.events);
    if (page.next === cursor) break;
    cursor = page.next;
  }
  assert.ok(all.length > 300, `the history has events (${all.length})`);
  assert.ok(
    receiver.received.every((d) => d.problem === undefined),
    "every delivery verifies",
  );
  const accepted = receiver.received.filter((d) => d.status === 200);
  // Every event, in order, once the repeats are set aside.
  assert.deepEqual(
    receiver.consumers.get(id)?.seen.map((e) => e.cursor),
    all.map((e) => e.cursor),
    "nothing missing",
  );
  // A repeat is a whole batch again, under its key: no event is in two different batches.
  const byKey = new Map<string, string>();
  const keyOfEvent = new Map<bigint, string>();
  for (const d of accepted) {
    const events = JSON.stringify(d.events.map((e) => e.cursor.toString()));
    const before = byKey.get(d.key);
    if (before !== undefined) assert.equal(events, before, `batch ${d.key} sent again with other events`);
    byKey.set(d.key, events);
    for (const e of d.events) {
      const other = keyOfEvent.get(e.cursor);
      assert.ok(other === undefined || other === d.key, `event ${e.cursor} in batches ${other} and ${d.key}`);
      keyOfEvent.set(e.cursor, d.key);
    }
  }
  const repeats = accepted.length - byKey.size;
  t.diagnostic(
    `${all.length} events in ${byKey.size} batches; ${kills} kills, ${repeats} batches sent again`,
  );
  assert.ok(repeats <= kills, `${repeats} batches repeated after ${kills} kills`);
});
