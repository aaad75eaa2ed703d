/**
 * The live event stream over both transports, on real sockets and a store the real indexer wrote:
 * what each sends against what the store reads, resuming (gRPC's nextCursor, SSE's Last-Event-ID),
 * `now` and live events, confirmed mode, the ordinary errors before a stream starts, keys and the
 * per-key cap, heartbeats, a consumer that stops reading, and shutdown.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import * as grpc from "@grpc/grpc-js";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { startApi } from "../../src/api/server.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { endOfRow, type StreamEvent } from "../../src/core/stream-events.ts";
import { runLiveActivity } from "../../src/demo/live.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { readStreamEvents, type StreamQuery } from "../../src/store/read/stream-events.ts";
import { clearSpamOverride, setSpamOverride } from "../../src/store/tables/spam-overrides.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";
import { startCommand } from "../support/cli.ts";
import { indexUntil } from "../support/indexing.ts";
import { openGrpcStream, openSseStream } from "../support/stream-clients.ts";
import { contractOf, StreamConsumer } from "../support/stream-consumer.ts";
import { eventFromWire } from "../support/stream-wire.ts";

const HEARTBEAT_MS = 300;
const STALL_MS = 1_500;
const MAX_PER_KEY = 3;
/** Small messages: a consumer that stops reading fills its transport's buffers with a short history. */
const BATCH = 7;

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({
    days: 3,
    seed: "stream-transports",
    streams: {
      heartbeatMs: HEARTBEAT_MS,
      stallMs: STALL_MS,
      maxPerKey: MAX_PER_KEY,
      pollMs: 50,
      batchLimit: BATCH,
    },
  });
});
after(async () => f?.close());

const grpcPort = () => Number(f.grpcAddress.split(":").at(-1));
const grpcStream = (request: Record<string, unknown>, key: string | null = f.key) =>
  openGrpcStream(`localhost:${grpcPort()}`, f.tls.cert, key, request);
const sseStream = (query: string, headers: Record<string, string> = {}, key: string | null = f.key) =>
  openSseStream(`${f.restUrl}/v1beta2/stream/events${query}`, {
    ...(key === null ? {} : { "x-api-key": key }),
    ...headers,
  });

/** Every event the store reads after `from` with `query`'s filters, read directly. */
async function readAll(query: Omit<StreamQuery, "after" | "limit">, from = 0n): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  let cursor = from;
  for (let calls = 0; calls < 10_000; calls++) {
    const page = await readStreamEvents(f.sql, API_CHAIN_ID, { ...query, after: cursor, limit: 1000 });
    events.push(...page.events);
    if (page.next === cursor) return events;
    cursor = page.next;
  }
  throw new Error("the stream did not end");
}

const latest = async () => (await readStreamEvents(f.sql, API_CHAIN_ID, { after: "now", limit: 1 })).next;
const heartbeatAt = (cursor: bigint) => (m: { event: string; id: string | undefined }) =>
  m.event === "heartbeat" && m.id === cursor.toString();

describe("what the stream sends", () => {
  test("from cursor 0 both transports send exactly what the store reads, then heartbeats at the newest cursor", async () => {
    const newest = await latest();
    const sales = await readAll({ kinds: ["sale"] });
    const everything = await readAll({});
    assert.ok(
      sales.length > 0 && everything.length > 100,
      `the history has events and sales: ${everything.length} events, ${sales.length} sales`,
    );
    const g = grpcStream({ after: "0", kinds: ["STREAM_EVENT_KIND_SALE"] });
    const s = await sseStream("?after=0");
    try {
      assert.equal(s.status, 200);
      assert.equal(s.headers.get("content-type"), "text/event-stream; charset=utf-8");
      assert.equal(s.headers.get("cache-control"), "no-store");
      assert.equal(s.headers.get("x-accel-buffering"), "no");
      await g.until("a heartbeat at the newest cursor", (batches) =>
        batches.some((b) => b.events.length === 0 && b.next === newest),
      );
      assert.deepEqual(
        g.batches.flatMap((b) => b.events),
        sales,
      );
      assert.ok(g.batches.every((b) => b.events.length <= BATCH));
      await s.until("a heartbeat at the newest cursor", (messages) => messages.some(heartbeatAt(newest)));
      assert.deepEqual(s.events(), everything);
      // Each message's id is its event's cursor; a consumer applies them without a gap or repeat.
      const consumer = new StreamConsumer();
      consumer.apply(s.events());
      const heartbeat = s.messages.find((m) => m.event === "heartbeat");
      assert.deepEqual(JSON.parse(heartbeat?.data ?? "{}"), {
        nextCursor: newest.toString(),
        headBlock: String(f.history.blocks.last),
      });
      // Idle: a heartbeat about every HEARTBEAT_MS.
      const before = s.messages.length;
      await sleep(HEARTBEAT_MS * 4);
      const beats = s.messages.length - before;
      assert.ok(beats >= 2 && beats <= 6, `${beats} heartbeats in ${HEARTBEAT_MS * 4} ms`);
    } finally {
      g.close();
      s.close();
    }
  });

  test("resuming: after a gRPC nextCursor, or an SSE Last-Event-ID (which wins over after), comes exactly what follows", async () => {
    const everything = await readAll({});
    const mid = everything[Math.floor(everything.length / 2)] as StreamEvent;
    const rest = everything.filter((e) => e.cursor > mid.cursor);
    const newest = await latest();
    const s = await sseStream("?after=0", { "Last-Event-ID": mid.cursor.toString() });
    const g = grpcStream({ after: mid.cursor.toString() });
    try {
      await s.until("the newest cursor", (messages) => messages.some(heartbeatAt(newest)));
      assert.deepEqual(s.events(), rest);
      await g.until("the newest cursor", (batches) => batches.some((b) => b.next === newest));
      assert.deepEqual(
        g.batches.flatMap((b) => b.events),
        rest,
      );
    } finally {
      s.close();
      g.close();
    }
  });

  test("confirmed mode sends only events that deep below the head, without retractions", async () => {
    const depth = 5;
    const confirmed = await readAll({ confirmations: depth });
    const g = grpcStream({ after: "0", mode: "STREAM_MODE_CONFIRMED", confirmations: depth });
    try {
      await g.until("a heartbeat", (batches) => batches.some((b) => b.events.length === 0));
      const events = g.batches.flatMap((b) => b.events);
      assert.deepEqual(events, confirmed);
      assert.ok(events.length > 0);
      for (const e of events) {
        assert.notEqual(e.kind, "retraction");
        if (e.kind !== "retraction") assert.ok(e.blockNumber <= f.history.blocks.last - depth);
      }
    } finally {
      g.close();
    }
  });

  test("now: a stream sends only what is indexed after it opened, live, each transport with its filters", async () => {
    const g = grpcStream({ kinds: ["STREAM_EVENT_KIND_TRANSFER", "STREAM_EVENT_KIND_OWNERSHIP"] });
    const s = await sseStream("");
    try {
      // The first message of a stream with nothing to send is a heartbeat naming where it starts.
      await g.until("the first heartbeat", (batches) => batches.length > 0);
      await s.until("the first heartbeat", (messages) => messages.length > 0);
      const start = g.batches[0]?.next as bigint;
      assert.equal(s.messages[0]?.id, start.toString());
      assert.equal(start, await latest());
      const stop = new AbortController();
      const indexer = indexUntil({
        sql: f.sql,
        rpcUrl: f.anvil.url,
        chainId: API_CHAIN_ID,
        signal: stop.signal,
      });
      const live = runLiveActivity({
        rpcUrl: f.anvil.url,
        seed: "stream-live",
        contracts: f.history.contracts,
        intervalMs: 200,
        actionsPerTick: 4,
        signal: stop.signal,
      });
      try {
        // The consumers see events while the indexer writes them, not only once it stops.
        await g.until("a live event", (batches) => batches.some((b) => b.events.length > 0), 20_000);
        await sleep(1_000);
      } finally {
        stop.abort();
        await Promise.allSettled([indexer, live]);
      }
      // What the indexer had stored when it stopped: both consumers end there.
      const newest = await latest();
      assert.ok(newest > start, "new events were indexed");
      await g.until("the newest cursor", (batches) => batches.some((b) => b.next === newest));
      await s.until("the newest cursor", (messages) => messages.some((m) => m.id === newest.toString()));
      assert.deepEqual(
        g.batches.flatMap((b) => b.events),
        await readAll({ kinds: ["transfer", "ownership"] }, start),
      );
      assert.deepEqual(s.events(), await readAll({}, start));
    } finally {
      g.close();
      s.close();
    }
  });
});

describe("refusals before a stream starts", () => {
  test("excludeSpam leaves out every event of a collection judged spam, over both transports", async () => {
    const everything = await readAll({});
    const sale = everything.find((e) => e.kind === "sale");
    assert.ok(sale?.kind === "sale");
    await setSpamOverride(f.sql, API_CHAIN_ID, sale.contract, true, "test");
    const newest = await latest();
    const g = grpcStream({ after: "0", excludeSpam: true });
    const s = await sseStream("?after=0&excludeSpam=true");
    try {
      const kept = everything.filter((e) => contractOf(e) !== sale.contract);
      assert.ok(kept.length > 0 && kept.length < everything.length);
      assert.deepEqual(await readAll({ excludeSpam: true }), kept);
      await g.until("the newest cursor", (batches) => batches.some((b) => b.next === newest));
      assert.deepEqual(
        g.batches.flatMap((b) => b.events),
        kept,
      );
      await s.until("the newest cursor", (messages) => messages.some(heartbeatAt(newest)));
      assert.deepEqual(s.events(), kept);
    } finally {
      g.close();
      s.close();
      await clearSpamOverride(f.sql, API_CHAIN_ID, sale.contract);
    }
    const bad = await sseStream("?excludeSpam=maybe");
    assert.equal(bad.status, 400);
    assert.match(JSON.parse(bad.body ?? "{}").message, /^exclude_spam: /);
  });

  test("malformed values are 400 / INVALID_ARGUMENT naming the field", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["?kinds=STREAM_EVENT_KIND_UNSPECIFIED", { kinds: ["STREAM_EVENT_KIND_UNSPECIFIED"] }, "kinds"],
      ["?contractAddresses=0x12", { contractAddresses: ["0x12"] }, "contract_addresses"],
      ["?addresses=nope", { addresses: ["nope"] }, "addresses"],
      ["?after=-3", { after: "-3" }, "after"],
      ["?confirmations=3", { confirmations: 3 }, "confirmations"],
      [
        "?mode=STREAM_MODE_CONFIRMED&confirmations=10001",
        { mode: "STREAM_MODE_CONFIRMED", confirmations: 10_001 },
        "confirmations",
      ],
    ];
    for (const [query, request, field] of cases) {
      const s = await sseStream(query);
      assert.equal(s.status, 400, query);
      const body = JSON.parse(s.body ?? "{}") as { code: number; message: string };
      assert.equal(body.code, 3);
      assert.ok(body.message.startsWith(`${field}: `), body.message);
      const g = grpcStream(request);
      const end = await g.ended;
      g.close();
      assert.equal(end.code, grpc.status.INVALID_ARGUMENT, JSON.stringify(request));
      assert.ok(end.details.startsWith(`${field}: `), end.details);
    }
  });

  test("a cursor past the newest event, and one whose events were pruned, are FAILED_PRECONDITION naming where to resume", async () => {
    const ahead = (await latest()) + 100n;
    const s = await sseStream(`?after=${ahead}`);
    assert.equal(s.status, 400);
    assert.equal((JSON.parse(s.body ?? "{}") as { code: number }).code, 9);
    const g = grpcStream({ after: ahead.toString() });
    assert.equal((await g.ended).code, grpc.status.FAILED_PRECONDITION);
    g.close();

    const [saved] = await f.sql<{ pruned_through: string | null }[]>`
      SELECT pruned_through FROM stream_state WHERE chain_id = ${API_CHAIN_ID}`;
    await f.sql`
      INSERT INTO stream_state (chain_id, pruned_through) VALUES (${API_CHAIN_ID}, 10)
      ON CONFLICT (chain_id) DO UPDATE SET pruned_through = 10`;
    try {
      const oldest = endOfRow(10n).toString();
      const pruned = await sseStream("?after=5");
      assert.equal(pruned.status, 400);
      const body = JSON.parse(pruned.body ?? "{}") as { code: number; message: string };
      assert.equal(body.code, 9);
      assert.ok(body.message.startsWith("after: ") && body.message.includes(oldest), body.message);
      assert.equal(pruned.headers.get("mintlens-oldest-cursor"), oldest);
      const g2 = grpcStream({ after: "5" });
      const end = await g2.ended;
      g2.close();
      assert.equal(end.code, grpc.status.FAILED_PRECONDITION);
      assert.ok(end.details.includes(oldest), end.details);
      assert.equal(end.trailers["mintlens-oldest-cursor"], oldest);
    } finally {
      await f.sql`UPDATE stream_state SET pruned_through = ${saved?.pruned_through ?? null}
                  WHERE chain_id = ${API_CHAIN_ID}`;
    }
  });

  test("no key is 401 / UNAUTHENTICATED; a key over its open streams is 429 / RESOURCE_EXHAUSTED until one closes", async () => {
    const s = await sseStream("", {}, null);
    assert.equal(s.status, 401);
    const g = grpcStream({}, null);
    assert.equal((await g.ended).code, grpc.status.UNAUTHENTICATED);
    g.close();

    const key = await f.newKey("streams-cap");
    const open = await Promise.all(Array.from({ length: MAX_PER_KEY }, () => sseStream("", {}, key)));
    try {
      assert.deepEqual(
        open.map((o) => o.status),
        Array(MAX_PER_KEY).fill(200),
      );
      const over = await sseStream("", {}, key);
      assert.equal(over.status, 429);
      assert.equal((JSON.parse(over.body ?? "{}") as { code: number }).code, 8);
      assert.ok(Number(over.headers.get("retry-after")) >= 1);
      const overGrpc = grpcStream({}, key);
      assert.equal((await overGrpc.ended).code, grpc.status.RESOURCE_EXHAUSTED);
      overGrpc.close();
      // Another key is not counted against this one.
      const other = await sseStream("");
      assert.equal(other.status, 200);
      other.close();
      open.pop()?.close();
      let again = 0;
      for (let i = 0; i < 100 && again !== 200; i++) {
        await sleep(20);
        const s2 = await sseStream("", {}, key);
        again = s2.status;
        s2.close();
      }
      assert.equal(again, 200, "a slot frees when its stream closes");
    } finally {
      for (const o of open) o.close();
    }
  });
});

describe("slow consumers and shutdown", () => {
  test("a consumer that stops reading is ended after the stall timeout with its resume cursor; another carries on", async () => {
    const key = await f.newKey("slow");
    const newest = await latest();
    const slow = grpcStream({ after: "0" }, key);
    slow.pause();
    const other = await sseStream("");
    try {
      const stalledAt = Date.now();
      // Meanwhile the other stream beats on.
      await other.until("heartbeats while the slow one stalls", (m) => m.length >= 3, STALL_MS * 3);
      await sleep(STALL_MS);
      slow.resume();
      const end = await slow.ended;
      assert.equal(end.code, grpc.status.RESOURCE_EXHAUSTED, end.details);
      assert.ok(Date.now() - stalledAt >= STALL_MS);
      const resume = BigInt(end.trailers["mintlens-resume-cursor"] ?? "-1");
      const last = slow.batches.at(-1);
      assert.equal(resume, last?.next, "the cursor after the last batch written");
      assert.ok(resume < newest, "the stream stopped before the end: the slow consumer held it");
      assert.ok(end.details.includes(resume.toString()));
      // What it got is a prefix of the stream, and resuming from its cursor gives the rest.
      const got = slow.batches.flatMap((b) => b.events);
      const everything = await readAll({});
      assert.deepEqual(got, everything.slice(0, got.length));
      const resumed = grpcStream({ after: resume.toString() }, key);
      await resumed.until("the newest cursor", (batches) => batches.some((b) => b.next === newest));
      assert.deepEqual([...got, ...resumed.batches.flatMap((b) => b.events)], everything);
      resumed.close();
    } finally {
      slow.close();
      other.close();
    }
  });

  test("shutdown ends every open stream with the cursor to resume from; mintlens watch resumes there on the next server", async () => {
    const keys = createKeyVerifier({ sql: f.sql });
    await keys.refresh();
    const serveOn = (grpcPort: number) =>
      startApi({
        sql: f.sql,
        chains: [{ name: "anvil", chainId: API_CHAIN_ID, restPort: 0, grpcPort }],
        host: "127.0.0.1",
        tls: f.tls,
        guard: createGuard({ keys, pointsPerSecond: 0 }),
        metrics: createProcessMetrics(),
        logger: silentLogger(),
        streams: { heartbeatMs: HEARTBEAT_MS },
      });
    const api = await serveOn(0);
    const served = api.chains[0];
    assert.ok(served);
    const g = openGrpcStream(`localhost:${served.grpcPort}`, f.tls.cert, f.key, {});
    const s = await openSseStream(`${served.restUrl}/v1beta2/stream/events`, { "x-api-key": f.key });
    const dir = mkdtempSync(join(tmpdir(), "mintlens-stream-watch-"));
    const ca = join(dir, "cert.pem");
    writeFileSync(ca, f.tls.cert);
    const everything = await readAll({});
    const watch = startCommand(
      ["watch", "--after", "0", "--address", `localhost:${served.grpcPort}`, "--ca", ca],
      { MINTLENS_API_KEY: f.key },
    );
    const printed = () =>
      watch
        .stdout()
        .split("\n")
        .filter((l) => l !== "").length;
    let next: Awaited<ReturnType<typeof serveOn>> | undefined;
    try {
      await g.until("the first heartbeat", (b) => b.length > 0);
      await s.until("the first heartbeat", (m) => m.length > 0);
      for (let i = 0; i < 500 && printed() < everything.length; i++) await sleep(20);
      assert.equal(printed(), everything.length, "watch printed every event");
      const newest = await latest();
      const closing = Date.now();
      await api.close();
      assert.ok(Date.now() - closing < 5_000, "within the server's grace");
      const end = await g.ended;
      assert.equal(end.code, grpc.status.UNAVAILABLE);
      assert.equal(end.trailers["mintlens-resume-cursor"], newest.toString());
      await s.finished;
      const last = s.messages.at(-1);
      assert.equal(last?.event, "end");
      assert.equal(last?.id, newest.toString());
      assert.deepEqual(JSON.parse(last?.data ?? "{}").reason, "shutdown");
      assert.equal(JSON.parse(last?.data ?? "{}").resumeCursor, newest.toString());
      // watch says so and comes back, on a server at the same address, from where it was.
      for (let i = 0; i < 250 && !watch.stderr().includes("reconnecting"); i++) await sleep(20);
      assert.match(
        watch.stderr(),
        new RegExp(`UNAVAILABLE.*reconnecting in [\\d.]+ s from cursor ${newest}`),
      );
      next = await serveOn(served.grpcPort);
      // Connected again once it stops saying it reconnects (its waits grow to 2 s by then).
      await sleep(2_500);
      const said = watch.stderr();
      await sleep(2_500);
      assert.equal(watch.stderr(), said, "watch is connected to the next server");
      assert.equal(printed(), everything.length, "nothing printed twice after reconnecting");
    } finally {
      watch.stop();
      await watch.exited;
      g.close();
      s.close();
      await next?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the command line", () => {
  test("mintlens call prints each message as a JSON line until stopped; mintlens watch one line per event", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mintlens-stream-cli-"));
    const ca = join(dir, "cert.pem");
    writeFileSync(ca, f.tls.cert);
    const newest = await latest();
    const sales = await readAll({ kinds: ["sale"] });
    const address = `localhost:${grpcPort()}`;
    const env = { MINTLENS_API_KEY: f.key };
    const lines = (text: string) => text.split("\n").filter((l) => l !== "");
    const waitFor = async (what: string, done: () => boolean) => {
      for (let i = 0; i < 500 && !done(); i++) await sleep(20);
      assert.ok(done(), what);
    };
    try {
      const call = startCommand(
        [
          "call",
          "StreamService/StreamEvents",
          '{"after":"0","kinds":["STREAM_EVENT_KIND_SALE"]}',
          "--address",
          address,
          "--ca",
          ca,
        ],
        env,
      );
      const messages = () =>
        lines(call.stdout()).map((l) => JSON.parse(l) as { events: unknown[]; nextCursor: string });
      await waitFor("call reaches the newest cursor", () =>
        messages().some((m) => m.nextCursor === newest.toString()),
      );
      call.stop();
      assert.equal(await call.exited, 0, call.stderr());
      assert.deepEqual(
        messages().flatMap((m) => m.events.map(eventFromWire)),
        sales,
      );

      const watch = startCommand(
        ["watch", "--kind", "sale", "--after", "0", "--address", address, "--ca", ca],
        env,
      );
      await waitFor("watch prints every sale", () => lines(watch.stdout()).length >= sales.length);
      await sleep(HEARTBEAT_MS);
      watch.stop();
      assert.equal(await watch.exited, 0, watch.stderr());
      const printed = lines(watch.stdout());
      assert.equal(printed.length, sales.length);
      printed.forEach((line, i) => {
        const sale = sales[i];
        assert.ok(sale?.kind === "sale" || sale?.kind === "retraction");
        assert.match(line, / sale /);
        if (sale.kind === "sale") assert.ok(line.includes(`#${sale.blockNumber}`), line);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
