/**
 * The outbox of the live event stream on a real chain and a real store: consumers reading it by
 * cursor while the indexer follows a chain that reorganises end with exactly the store's holdings and
 * trades, confirmed consumers never hear of a shallow reorganisation, retention prunes in bounded
 * batches and a pruned cursor is refused with the cursor to resume from. That each read is one
 * range of the outbox's key is store-stream-plans.test.ts's, on a table large enough for the
 * planner to choose as it would in production.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { silentLogger } from "../../src/core/logger.ts";
import type { SaleContent, StreamEvent } from "../../src/core/stream-events.ts";
import { historyGenesisTimestamp } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { pruneStreamPass, runStreamRetention } from "../../src/indexer/stream-retention.ts";
import type { Sql } from "../../src/store/pg/database.ts";
import { listNftTransfers } from "../../src/store/read/nft-transfers.ts";
import { readStreamEvents, StreamCursorError } from "../../src/store/read/stream-events.ts";
import type { SaleRow } from "../../src/store/tables/sales.ts";
import { clearSpamOverride, setSpamOverride } from "../../src/store/tables/spam-overrides.ts";
import { encodeStreamTrades, pruneStream, streamStatements } from "../../src/store/tables/stream-events.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil, nextIndexedBlock } from "../support/indexing.ts";
import { runReorganisingHistory, storeTruth, until } from "../support/reorganising-chain.ts";
import { contractOf, readWholeStream, StreamConsumer } from "../support/stream-consumer.ts";

const CHAIN_ID = 31337;
/** Deeper than any reorganisation below: a consumer this far behind the head never sees one. */
const CONFIRMATIONS = 40;
/** Shallower than every reorganisation below. */
const SHALLOW = 2;

/** A consumer polling the stream in a loop, as a transport would, until stopped. */
function poll(sql: Sql, confirmations: number | undefined, limit: number) {
  const consumer = new StreamConsumer();
  let cursor = 0n;
  let stop = false;
  let calls = 0;
  const done = (async () => {
    // Bounded in count too: a loop that never ends fails the test rather than hanging it.
    while (!stop && calls < 200_000) {
      calls++;
      const page = await readStreamEvents(sql, CHAIN_ID, {
        after: cursor,
        limit,
        ...(confirmations === undefined ? {} : { confirmations }),
      });
      consumer.apply(page.events);
      if (page.next === cursor) await sleep(5);
      cursor = page.next;
    }
  })();
  return {
    consumer,
    cursor: () => cursor,
    async stop() {
      stop = true;
      await done;
    },
  };
}

let db: TestDatabase;
let anvil: Anvil;

before(async () => {
  db = await createTestDatabase();
  anvil = await startAnvil({ chainId: CHAIN_ID, timestamp: historyGenesisTimestamp(40) });
});
after(async () => {
  await anvil?.stop();
  await db?.close();
  await stopTestServer();
});

describe("the outbox on a reorganising chain", () => {
  test("consumers reading while the indexer runs through reorganisations end with the store's holdings and trades", async () => {
    const indexing = new AbortController();
    const indexer = indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      signal: indexing.signal,
      tuning: { maxBlocksPerBatch: 3, pollIntervalMs: 50 },
    });
    await until(
      "the indexer registers the chain",
      async () => (await nextIndexedBlock(db.sql, CHAIN_ID)) > 0,
    );
    const live = poll(db.sql, undefined, 37);
    const confirmed = poll(db.sql, CONFIRMATIONS, 53);
    // Confirmed, but shallower than the reorganisations: it hears of them.
    const shallow = poll(db.sql, SHALLOW, 41);
    try {
      const depths = await runReorganisingHistory({
        sql: db.sql,
        chainId: CHAIN_ID,
        rpcUrl: anvil.url,
        seed: "stream",
        trunkDays: 12,
      });
      for (const depth of depths) {
        assert.ok(depth > SHALLOW, "the reorganisation is deeper than the shallow depth");
        assert.ok(depth < CONFIRMATIONS, "the reorganisation is shallower than the confirmed depth");
      }
      // The last block is indexed: both consumers read up to the newest cursor.
      const latest = (await readStreamEvents(db.sql, CHAIN_ID, { after: "now", limit: 1 })).next;
      await until("the consumers catch up", async () => live.cursor() >= latest);
      await until("the confirmed consumer stops at the confirmed depth", async () => {
        const page = await readStreamEvents(db.sql, CHAIN_ID, {
          after: confirmed.cursor(),
          limit: 1,
          confirmations: CONFIRMATIONS,
        });
        return page.events.length === 0;
      });
      await until("the shallow consumer reaches its depth", async () => {
        const page = await readStreamEvents(db.sql, CHAIN_ID, {
          after: shallow.cursor(),
          limit: 1,
          confirmations: SHALLOW,
        });
        return page.events.length === 0;
      });
    } finally {
      indexing.abort();
      await indexer.catch(() => {});
      await live.stop();
      await confirmed.stop();
      await shallow.stop();
    }

    // Retractions were sent for both reorganisations, and the live consumer holds the store's truth.
    const retractions = live.consumer.seen.filter((e) => e.kind === "retraction");
    assert.ok(retractions.length > 0, "the reorganisations were retracted");
    assert.ok(
      live.consumer.seen.some((e) => e.kind === "verdict"),
      "later blocks gave verdicts on trades sent before",
    );
    const [counts] = await db.sql<{ retractions: string; rollbacks: string }[]>`
      SELECT count(*) FILTER (WHERE retracts IS NOT NULL) AS retractions,
             count(DISTINCT rollback_peak) AS rollbacks FROM stream_events`;
    assert.equal(Number(counts?.rollbacks), 2, "two rollbacks took rows back");
    assert.ok(Number(counts?.retractions) > 0);

    const truth = await storeTruth(db.sql, CHAIN_ID);
    assert.deepEqual(live.consumer.units, truth.holdings, "0 lost, 0 counted twice");
    assert.deepEqual(live.consumer.tradeSummary(), truth.trades);

    // The confirmed consumer saw no retraction and nothing later taken back: exactly the live
    // consumer's standing events of blocks at least the confirmed depth below the head.
    assert.deepEqual(
      confirmed.consumer.seen.filter((e) => e.kind === "retraction"),
      [],
    );
    const head = (await nextIndexedBlock(db.sql, CHAIN_ID)) - 1;
    const standing = [...live.consumer.applied.values()].filter((e) => e.blockNumber <= head - CONFIRMATIONS);
    assert.ok(standing.length > 0);
    assert.deepEqual(
      confirmed.consumer.seen.map((e) => e.cursor),
      standing.map((e) => e.cursor),
    );

    // The shallow confirmed consumer was told of the reorganisations, of exactly the events it had
    // been sent, and ends with the standing events at its depth.
    assert.ok(
      shallow.consumer.seen.some((e) => e.kind === "retraction"),
      "a reorganisation deeper than its depth reached it",
    );
    assert.equal(shallow.consumer.ignored, 0, "it is sent a retraction only of what it was sent");
    assert.equal(live.consumer.ignored, 0);
    assert.deepEqual(
      [...shallow.consumer.applied.keys()],
      [...live.consumer.applied.values()].filter((e) => e.blockNumber <= head - SHALLOW).map((e) => e.cursor),
    );
  });

  test("a read with filters gives exactly the matching events of a full read, in pages", async () => {
    const all = await readWholeStream(db.sql, CHAIN_ID);
    const sale = all.find((e) => e.kind === "sale");
    assert.ok(sale?.kind === "sale");
    const filter = { kinds: ["sale", "ownership"] as const, addresses: [sale.buyer] };
    // Pages of 3: the filters are checked across many page boundaries.
    const filtered = await readWholeStream(db.sql, CHAIN_ID, {
      limit: 3,
      kinds: [...filter.kinds],
      addresses: filter.addresses,
    });
    const expected = all.filter((e) => {
      const o = e.kind === "retraction" ? e.retracted : e;
      if (o.kind === "sale") return o.buyer === sale.buyer || o.seller === sale.buyer;
      if (o.kind === "ownership") return o.holder === sale.buyer;
      return false;
    });
    assert.ok(expected.length > 3);
    assert.deepEqual(filtered, expected);
  });

  test("a trade of a collection judged spam carries LABEL_SPAM when read, as the transfers list's row does; a read may leave the collection out", async () => {
    const readAll = () => readWholeStream(db.sql, CHAIN_ID);
    const saleOf = (e: StreamEvent): SaleContent | undefined =>
      e.kind === "sale"
        ? e
        : e.kind === "verdict"
          ? e.sale
          : e.kind === "retraction"
            ? saleOf(e.retracted)
            : undefined;
    const before = await readAll();
    const sale = before.find((e) => e.kind === "sale");
    assert.ok(sale?.kind === "sale");
    assert.ok(
      before.every((e) => !saleOf(e)?.labels.includes("LABEL_SPAM")),
      "no collection is judged spam yet",
    );
    await setSpamOverride(db.sql, CHAIN_ID, sale.contract, true, "test");
    try {
      const after = await readAll();
      assert.equal(after.length, before.length);
      for (const [i, event] of after.entries()) {
        const was = saleOf(before[i] as StreamEvent);
        const now = saleOf(event);
        if (was === undefined || now === undefined) {
          assert.deepEqual(event, before[i], "an event without a trade is as it was");
          continue;
        }
        const spam: boolean = now.contract === sale.contract;
        assert.equal(now.labels.includes("LABEL_SPAM"), spam, `${now.contract}: ${now.labels}`);
        assert.deepEqual(
          now.labels.filter((l) => l !== "LABEL_SPAM"),
          was.labels,
          "the other labels are the trade's own",
        );
      }
      // Asked to leave spam out, a read leaves out every event of the collection, and only those.
      const kept = await readWholeStream(db.sql, CHAIN_ID, { limit: 500, excludeSpam: true });
      assert.deepEqual(
        kept,
        after.filter((e) => contractOf(e) !== sale.contract),
      );
      // The transfers list's rows of the same collection say the same.
      const listed = await listNftTransfers(db.sql, CHAIN_ID, {
        contract: sale.contract,
        limit: 5,
        offset: 0,
        direction: "desc",
        labels: [],
      });
      assert.ok(listed.length > 0 && listed.every((r) => r.spam));
    } finally {
      await clearSpamOverride(db.sql, CHAIN_ID, sale.contract);
    }
    assert.deepEqual(await readAll(), before, "the override gone, the label goes with it");
  });

  test("retention prunes the oldest rows in bounded batches; a pruned cursor is refused with the cursor to resume from", async () => {
    const [span] = await db.sql<{ min: string; max: string; newest: Date }[]>`
      SELECT min(id) AS min, max(id) AS max, max(block_time) AS newest FROM stream_events WHERE chain_id = ${CHAIN_ID}`;
    const total = Number(span?.max) - Number(span?.min) + 1;
    // Everything before the newest block's time: every row but the newest block's.
    const before = span?.newest as Date;
    const [young] = await db.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM stream_events WHERE chain_id = ${CHAIN_ID} AND block_time >= ${before}`;
    let pruned = 0;
    let passes = 0;
    for (let more = true; more && passes < 1000; passes++) {
      const pass = await pruneStream(db.sql, CHAIN_ID, before, 100);
      assert.ok(pass.pruned <= 100, "a pass prunes at most its batch");
      pruned += pass.pruned;
      more = pass.more;
    }
    assert.ok(passes >= Math.floor((total - Number(young?.n)) / 100), `pruned in passes of 100 (${passes})`);
    const [left] = await db.sql<{ n: string; min: string }[]>`
      SELECT count(*) AS n, min(id) AS min FROM stream_events WHERE chain_id = ${CHAIN_ID}`;
    assert.ok(pruned > 0 && Number(left?.n) > 0, `pruned ${pruned}, kept ${left?.n}`);
    assert.equal(pruned + Number(left?.n), total);

    // The job's pass: with the retention longer than the chain's age nothing goes.
    const newest = before.getTime();
    assert.equal(await pruneStreamPass(db.sql, CHAIN_ID, 1, { now: new Date(newest + 3_600_000) }), 0);

    const oldest = (BigInt(left?.min ?? 0) - 1n) * 4n + 3n;
    await assert.rejects(
      readStreamEvents(db.sql, CHAIN_ID, { after: 0n, limit: 10 }),
      (error: unknown) =>
        error instanceof StreamCursorError &&
        error.reason === "pruned" &&
        error.oldestCursor === oldest &&
        error.prunedBefore?.getTime() === before.getTime() &&
        error.message.includes(String(oldest)),
    );
    const resumed = await readStreamEvents(db.sql, CHAIN_ID, { after: oldest, limit: 10 });
    assert.equal(resumed.events[0]?.cursor, oldest + 1n, "reading resumes at the first event kept");
    const latest = (await readStreamEvents(db.sql, CHAIN_ID, { after: "now", limit: 1 })).next;
    await assert.rejects(
      readStreamEvents(db.sql, CHAIN_ID, { after: latest + 1n, limit: 10 }),
      (error: unknown) => error instanceof StreamCursorError && error.reason === "ahead",
    );
  });

  test("the retention job beside the indexer prunes everything old; the next rows are numbered on from where it pruned", async () => {
    const [before] = await db.sql<{ max: string }[]>`
      SELECT max(id) AS max FROM stream_events WHERE chain_id = ${CHAIN_ID}`;
    const latest = (await readStreamEvents(db.sql, CHAIN_ID, { after: "now", limit: 1 })).next;
    const stop = new AbortController();
    // A retention of a minute: every event of the chain, weeks old, is past it.
    const job = runStreamRetention(
      { sql: db.sql, chainId: CHAIN_ID, retentionDays: 1 / 1440, logger: silentLogger(), intervalMs: 20 },
      stop.signal,
    );
    try {
      await until("the job prunes every row", async () => {
        const [row] = await db.sql<{ n: string }[]>`
          SELECT count(*) AS n FROM stream_events WHERE chain_id = ${CHAIN_ID}`;
        return Number(row?.n) === 0;
      });
    } finally {
      stop.abort();
      await job;
    }
    const empty = await readStreamEvents(db.sql, CHAIN_ID, { after: latest, limit: 10 });
    assert.deepEqual([empty.events, empty.next], [[], latest], "the newest cursor stays where it was");

    const time = Math.floor(Date.now() / 1000);
    const trade: SaleRow = {
      contract: `0x${"0c".repeat(20)}`,
      tokenId: 1n,
      blockNumber: 10_000_000,
      logIndex: 0,
      seq: 0,
      seller: `0x${"a1".repeat(20)}`,
      buyer: `0x${"b2".repeat(20)}`,
      txHash: `0x${"11".repeat(32)}`,
      txIndex: 0,
      time,
      kind: "sale",
      quantity: 1n,
      nativePaid: 5n,
      fungiblePaid: 0n,
      totalNative: 5n,
      totalUsd: undefined,
      attributedBy: "market_event",
      market: "blur",
      flags: [],
      payments: [],
    };
    const encoded = encodeStreamTrades([trade]);
    for (const statement of streamStatements(
      db.sql,
      CHAIN_ID,
      { from: 10_000_000, to: 10_000_000 },
      0,
      encoded,
    )) {
      await statement;
    }
    const page = await readStreamEvents(db.sql, CHAIN_ID, { after: latest, limit: 10 });
    assert.equal(page.events.length, 1);
    assert.equal(
      page.events[0]?.cursor,
      (BigInt(before?.max ?? 0) + 1n) * 4n,
      "numbered on from the last row pruned",
    );
    assert.ok(page.events[0]?.kind === "sale" && page.events[0].labels.includes("LABEL_MARKETPLACE_BLUR"));
    await db.sql`DELETE FROM stream_events WHERE chain_id = ${CHAIN_ID} AND block_number = 10000000`;
  });
});
