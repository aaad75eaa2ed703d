/**
 * Webhook deliveries on a real store and real sockets: a chain's history indexed from anvil, a
 * deliverer reading its stream, receivers on loopback that verify every delivery as docs/webhooks.md
 * says, and the `mintlens webhooks` commands run through the real command line.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Registry } from "prom-client";
import { silentLogger } from "../../src/core/logger.ts";
import type { StreamEvent } from "../../src/core/stream-events.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import { toHex } from "../../src/store/pg/database.ts";
import { latestCursor, readStreamEvents } from "../../src/store/read/stream-events.ts";
import { clearSpamOverride, setSpamOverride } from "../../src/store/tables/spam-overrides.ts";
import { getWebhook, removeWebhook, webhookLog } from "../../src/store/tables/webhooks.ts";
import { type DelivererSettings, runWebhookDeliverer } from "../../src/webhooks/deliverer.ts";
import { createWebhookMetrics } from "../../src/webhooks/metrics.ts";
import { runCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";
import { contractOf } from "../support/stream-consumer.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";

const CHAIN_ID = 31337;
const LOOPBACK = parseAllowList(["127.0.0.1"]);

let db: TestDatabase;
let anvil: Anvil;
let receiver: WebhookReceiver;
/** Every event of the indexed history, in cursor order. */
let all: StreamEvent[];

/** Waits, bounded in time, until `done` holds. */
async function until(what: string, done: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

/** `mintlens webhooks …` against the test's database. */
function webhooks(args: string[]) {
  return runCommand(["webhooks", ...args, "--database-url", db.url]);
}

/** Adds a subscription through the command line; returns its id and secret, and tells the receiver the secret. */
async function add(args: string[], target = receiver): Promise<{ id: string; secret: string }> {
  const result = await webhooks([
    "add",
    target.url,
    "--chain",
    "test",
    "--webhook-allow",
    "127.0.0.1",
    ...args,
  ]);
  assert.equal(result.code, 0, result.stderr);
  const [id, secret] = result.stdout.trim().split("\n") as [string, string];
  target.secrets.set(id, secret);
  return { id, secret };
}

/** A deliverer with short waits, until the returned stop is called. */
function deliver(settings: Partial<DelivererSettings> = {}, registry?: Registry) {
  const stop = new AbortController();
  const running = runWebhookDeliverer(
    {
      sql: db.sql,
      chainId: CHAIN_ID,
      chain: "test",
      logger: silentLogger(),
      settings: {
        allow: LOOPBACK,
        timeoutMs: 2000,
        policy: { baseDelayMs: 20, maxDelayMs: 100, pauseFailures: 1000, pauseAfterMs: 3_600_000 },
        ...settings,
      },
      ...(registry ? { metrics: createWebhookMetrics(registry) } : {}),
      refreshMs: 50,
      wakeMs: 20,
    },
    stop.signal,
  );
  return async () => {
    stop.abort();
    await running;
  };
}

const accepted = (id: string) =>
  receiver.received.filter((d) => d.subscriptionId === id && d.status >= 200 && d.status < 300);

before(async () => {
  db = await createTestDatabase();
  ({ anvil } = await startHistoryChain({ chainId: CHAIN_ID, seed: "webhooks", days: 4, genesis: "recent" }));
  const response = await fetch(anvil.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
  });
  const head = Number(((await response.json()) as { result: string }).result);
  await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
  all = [];
  let cursor = 0n;
  for (let i = 0; i < 1000; i++) {
    const page = await readStreamEvents(db.sql, CHAIN_ID, { after: cursor, limit: 1000 });
    all.push(...page.events);
    if (page.next === cursor) break;
    cursor = page.next;
  }
  receiver = await startWebhookReceiver();
});
after(async () => {
  await receiver?.close();
  await anvil?.stop();
  await db?.close();
  await stopTestServer();
});

describe("deliveries", () => {
  test("arrive signed, in cursor order, in batches of at most 100, with the filters kept; the receiver ends with the store's holdings", async () => {
    assert.ok(all.length > 300, `the history has events (${all.length})`);
    const sale = all.find((e) => e.kind === "sale");
    assert.ok(sale && sale.kind === "sale", "the history has trades");
    const everything = await add(["--from", "0"]);
    const trades = await add(["--from", "0", "--kind", "sale", "--contract", sale.contract]);
    const latest = await latestCursor(db.sql, CHAIN_ID);
    const stop = deliver();
    try {
      await until("both are delivered through the newest cursor", async () => {
        const a = await getWebhook(db.sql, everything.id);
        const b = await getWebhook(db.sql, trades.id);
        return a?.cursor === latest && b?.cursor === latest;
      });
    } finally {
      await stop();
    }
    const mine = receiver.received.filter((d) => [everything.id, trades.id].includes(d.subscriptionId));
    assert.deepEqual(
      mine.filter((d) => d.problem !== undefined),
      [],
      "every delivery verifies",
    );
    for (const d of mine) {
      assert.equal(d.headers["content-type"], "application/json");
      assert.equal(d.headers["mintlens-webhook-id"], d.subscriptionId);
      assert.equal(d.headers["mintlens-delivery-id"], d.key);
      const first = d.events[0]?.cursor;
      const last = d.events.at(-1)?.cursor;
      assert.equal(d.key, `${d.subscriptionId}-${first}-${last}`);
      assert.ok(d.events.length >= 1 && d.events.length <= 100);
    }
    for (const hook of [everything, trades]) {
      const cursors = accepted(hook.id).flatMap((d) => d.events.map((e) => e.cursor));
      assert.deepEqual(
        cursors,
        [...cursors].sort((x, y) => (x < y ? -1 : 1)),
        "in cursor order",
      );
      assert.equal(new Set(cursors).size, cursors.length, "each event once");
    }
    assert.deepEqual(
      accepted(everything.id).flatMap((d) => d.events.map((e) => e.cursor)),
      all.map((e) => e.cursor),
      "every event",
    );
    assert.deepEqual(
      accepted(trades.id).flatMap((d) => d.events.map((e) => e.cursor)),
      all.filter((e) => e.kind === "sale" && e.contract === sale.contract).map((e) => e.cursor),
      "the collection's trades alone",
    );
    // The bodies carry the stream's wire form: applied, they give the store's holdings.
    const balances = await db.sql<
      { contract: Uint8Array; token_id: string; holder: Uint8Array; amount: string }[]
    >`
      SELECT contract, token_id::text, holder, amount::text FROM token_balances
      WHERE chain_id = ${CHAIN_ID} AND amount <> 0`;
    assert.deepEqual(
      receiver.consumers.get(everything.id)?.units,
      new Map(
        balances.map((b) => [`${toHex(b.contract)}:${b.token_id}:${toHex(b.holder)}`, BigInt(b.amount)]),
      ),
    );
    const log = await webhookLog(db.sql, everything.id, 1000);
    assert.equal(log.length, accepted(everything.id).length, "each attempt logged");
    assert.ok(log.every((l) => l.status === 200 && l.attempt === 1));
    await removeWebhook(db.sql, everything.id);
    await removeWebhook(db.sql, trades.id);
  });

  test("a subscription added with --exclude-spam gets no event of a collection judged spam, and is listed so", async () => {
    const sale = all.find((e) => e.kind === "sale");
    assert.ok(sale && sale.kind === "sale");
    await setSpamOverride(db.sql, CHAIN_ID, sale.contract, true, "test");
    const hook = await add(["--from", "0", "--exclude-spam"]);
    const latest = await latestCursor(db.sql, CHAIN_ID);
    const stop = deliver();
    try {
      await until(
        "it is delivered through the newest cursor",
        async () => (await getWebhook(db.sql, hook.id))?.cursor === latest,
      );
      const expected = all.filter((e) => contractOf(e) !== sale.contract).map((e) => e.cursor);
      assert.ok(expected.length > 0 && expected.length < all.length);
      assert.deepEqual(
        accepted(hook.id).flatMap((d) => d.events.map((e) => e.cursor)),
        expected,
      );
      const listed = await webhooks(["list"]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout.split("\n").find((l) => l.includes(hook.id)) ?? "", /exclude-spam/);
    } finally {
      await stop();
      await clearSpamOverride(db.sql, CHAIN_ID, sale.contract);
      // The other tests count every subscription's deliveries.
      await removeWebhook(db.sql, hook.id);
    }
  });

  test("a target answering 500 gets the same batch again under the same key, then the rest", async () => {
    const hook = await add(["--from", "0"]);
    let failures = 0;
    receiver.answer = (d) =>
      d.subscriptionId === hook.id && failures++ < 3 ? { status: 500 } : { status: d.problem ? 401 : 200 };
    const latest = await latestCursor(db.sql, CHAIN_ID);
    const stop = deliver();
    try {
      await until(
        "it is delivered through",
        async () => (await getWebhook(db.sql, hook.id))?.cursor === latest,
      );
    } finally {
      await stop();
    }
    const got = receiver.received.filter((d) => d.subscriptionId === hook.id);
    assert.deepEqual(
      got.slice(0, 4).map((d) => d.status),
      [500, 500, 500, 200],
    );
    const [first] = got as [(typeof got)[number]];
    for (const again of got.slice(1, 4)) {
      assert.equal(again.key, first.key, "the same idempotency key");
      assert.deepEqual(again.events, first.events, "the same events");
      assert.equal(again.problem, undefined);
    }
    assert.deepEqual(
      accepted(hook.id).flatMap((d) => d.events.map((e) => e.cursor)),
      all.map((e) => e.cursor),
      "then the rest, nothing lost or repeated",
    );
    const log = await webhooks(["log", hook.id, "--limit", "1000"]);
    assert.equal(log.code, 0, log.stderr);
    const lines = log.stdout.trim().split("\n").slice(1).reverse();
    assert.equal(lines.length, accepted(hook.id).length + 3);
    assert.match(
      lines[0] as string,
      new RegExp(
        `${first.events[0]?.cursor}-${first.events.at(-1)?.cursor}\\s+\\d+\\s+1\\s+500\\s+\\d+\\s+HTTP 500`,
      ),
    );
    assert.match(lines[3] as string, /\s4\s+200\s/);
    receiver.answer = (d) => ({ status: d.problem ? 401 : 200 });
    await removeWebhook(db.sql, hook.id);
  });

  test("a target that always fails is paused after the threshold, listed so, and resumes from the batch it stopped at", async () => {
    const hook = await add(["--from", "0"]);
    let down = true;
    receiver.answer = (d) =>
      d.subscriptionId === hook.id && down ? { status: 503 } : { status: d.problem ? 401 : 200 };
    const registry = new Registry();
    let stop = deliver(
      { policy: { baseDelayMs: 10, maxDelayMs: 40, pauseFailures: 5, pauseAfterMs: 200 } },
      registry,
    );
    try {
      await until("it is paused", async () => (await getWebhook(db.sql, hook.id))?.state === "paused");
      await until("the metric says so", async () =>
        (await registry.metrics()).includes('mintlens_webhook_paused{chain="test"} 1'),
      );
      const attempts = receiver.received.filter((d) => d.subscriptionId === hook.id).length;
      await sleep(300);
      assert.equal(
        receiver.received.filter((d) => d.subscriptionId === hook.id).length,
        attempts,
        "nothing is sent while paused",
      );
      assert.ok(attempts >= 5, `${attempts} attempts`);
      const metrics = await registry.metrics();
      assert.match(
        metrics,
        new RegExp(`mintlens_webhook_deliveries_total\\{chain="test",outcome="http_error"\\} ${attempts}`),
      );
    } finally {
      await stop();
    }
    const listed = await webhooks(["list"]);
    assert.equal(listed.code, 0, listed.stderr);
    const line = listed.stdout.split("\n").find((l) => l.startsWith(hook.id)) ?? "";
    assert.match(line, /paused: \d+ failures in a row over \d+ m?s/);
    assert.match(line, /HTTP 503/);
    assert.ok(!listed.stdout.includes(hook.secret), "never the secret");

    down = false;
    const resumed = await webhooks(["resume", hook.id]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((await getWebhook(db.sql, hook.id))?.failures, 0);
    const latest = await latestCursor(db.sql, CHAIN_ID);
    stop = deliver();
    try {
      await until(
        "it is delivered through",
        async () => (await getWebhook(db.sql, hook.id))?.cursor === latest,
      );
    } finally {
      await stop();
    }
    const got = receiver.received.filter((d) => d.subscriptionId === hook.id);
    assert.ok(got.every((d) => d.key === got[0]?.key || d.status === 200));
    assert.equal(accepted(hook.id)[0]?.key, got[0]?.key, "the first batch, delivered at last");
    assert.deepEqual(
      accepted(hook.id).flatMap((d) => d.events.map((e) => e.cursor)),
      all.map((e) => e.cursor),
    );
    receiver.answer = (d) => ({ status: d.problem ? 401 : 200 });
    await removeWebhook(db.sql, hook.id);
  });

  test("a private address is refused at add without the allow flag, and at delivery when the deliverer does not allow it", async () => {
    const refused = await webhooks(["add", receiver.url, "--chain", "test"]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused: 127\.0\.0\.1 is a loopback address.*--webhook-allow/);
    const named = await webhooks(["add", `http://localhost:${receiver.port}/hook`, "--chain", "test"]);
    assert.equal(named.code, 1);
    assert.match(named.stderr, /refused: localhost resolves to .*loopback/);
    for (const bad of ["ftp://bot.example/", "https://user:pw@bot.example/"]) {
      const result = await webhooks(["add", bad, "--chain", "test"]);
      assert.equal(result.code, 1, bad);
    }
    assert.equal((await webhooks(["list"])).stdout.trim().split("\n").length, 1, "none added");

    const hook = await add(["--from", "0"]);
    const stop = deliver({ allow: [] });
    try {
      await until("two attempts are logged", async () => (await webhookLog(db.sql, hook.id, 10)).length >= 2);
    } finally {
      await stop();
    }
    assert.equal(
      receiver.received.filter((d) => d.subscriptionId === hook.id).length,
      0,
      "never connected to",
    );
    const [last] = await webhookLog(db.sql, hook.id, 1);
    assert.equal(last?.status, undefined);
    assert.match(last?.error ?? "", /refused: 127\.0\.0\.1 is a loopback address/);
    await removeWebhook(db.sql, hook.id);
  });

  test("a hanging, redirecting or flooding target is bounded and never holds up another", async () => {
    const hanging = await add(["--from", "0"]);
    const moving = await add(["--from", "0"]);
    const flooding = await add(["--from", "0"]);
    const healthy = await add(["--from", "0"]);
    const flood = "x".repeat(8 * 1024 * 1024);
    receiver.answer = (d) =>
      d.subscriptionId === hanging.id
        ? "hang"
        : d.subscriptionId === moving.id
          ? { status: 302 }
          : d.subscriptionId === flooding.id
            ? { status: 200, body: flood }
            : { status: d.problem ? 401 : 200 };
    const latest = await latestCursor(db.sql, CHAIN_ID);
    const stop = deliver({ timeoutMs: 300 });
    const started = Date.now();
    try {
      await until("the healthy and the flooding ones are delivered through", async () => {
        const [a, b] = [await getWebhook(db.sql, healthy.id), await getWebhook(db.sql, flooding.id)];
        return a?.cursor === latest && b?.cursor === latest;
      });
      await until(
        "the hanging one timed out",
        async () => (await webhookLog(db.sql, hanging.id, 1)).length > 0,
      );
    } finally {
      await stop();
    }
    assert.ok(Date.now() - started < 10_000);
    const [timedOut] = await webhookLog(db.sql, hanging.id, 1);
    assert.equal(timedOut?.error, "no answer within 300 ms");
    assert.ok((timedOut?.durationMs ?? 0) < 1500, `${timedOut?.durationMs} ms`);
    const [redirected] = await webhookLog(db.sql, moving.id, 1);
    assert.equal(redirected?.status, 302);
    assert.equal(redirected?.error, "HTTP 302 (redirects are not followed)");
    assert.equal((await getWebhook(db.sql, moving.id))?.cursor, 0n, "a redirect is no delivery");
    receiver.answer = (d) => ({ status: d.problem ? 401 : 200 });
    for (const h of [hanging, moving, flooding, healthy]) await removeWebhook(db.sql, h.id);
  });

  test("the commands: a subscription added from now gets only what comes; list, log and remove", async () => {
    const latest = await latestCursor(db.sql, CHAIN_ID);
    const hook = await add(["--kind", "transfer", "--kind", "ownership", "--confirmations", "3"]);
    const stored = await getWebhook(db.sql, hook.id);
    assert.equal(stored?.cursor, latest, "from now");
    assert.deepEqual(stored?.kinds, ["transfer", "ownership"]);
    assert.equal(stored?.confirmations, 3);
    const mine = await webhooks([
      "add",
      receiver.url,
      "--chain",
      "test",
      "--webhook-allow",
      "127.0.0.1",
      "--secret",
      "a-secret-the-operator-chose-1",
      "--from",
      "0",
    ]);
    assert.equal(mine.code, 0, mine.stderr);
    assert.match(mine.stdout, /^wh_[0-9a-f]{16}\n$/, "a secret given is not printed back");
    const ahead = await webhooks([
      "add",
      receiver.url,
      "--chain",
      "test",
      "--webhook-allow",
      "127.0.0.1",
      "--from",
      `${latest + 100n}`,
    ]);
    assert.equal(ahead.code, 1);
    assert.match(ahead.stderr, /past the newest event/);

    const listed = await webhooks(["list", "--chain", "test"]);
    assert.equal(listed.code, 0, listed.stderr);
    const [header, ...lines] = listed.stdout.trim().split("\n");
    assert.match(header ?? "", /^ID\s+CHAIN\s+URL\s+FILTERS\s+STATE\s+CURSOR\s+FAILURES\s+LAST ERROR$/);
    assert.equal(lines.length, 2);
    assert.match(
      lines.find((l) => l.startsWith(hook.id)) ?? "",
      new RegExp(
        `test\\s+${receiver.url}\\s+kinds=transfer,ownership confirmations=3\\s+active\\s+${latest}\\s+0\\s+-`,
      ),
    );
    assert.ok(
      !listed.stdout.includes(hook.secret) && !listed.stdout.includes("a-secret-the-operator-chose-1"),
    );

    const removed = await webhooks(["remove", hook.id]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(await getWebhook(db.sql, hook.id), undefined);
    const again = await webhooks(["remove", hook.id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, new RegExp(`no webhook ${hook.id}`));
    assert.equal((await webhooks(["resume", hook.id])).code, 1);
    assert.equal((await webhooks(["log", hook.id])).code, 1);
    const other = mine.stdout.trim();
    assert.equal((await webhooks(["remove", other])).code, 0);
  });
});
