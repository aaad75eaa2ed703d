import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { Address, Hex } from "../../src/core/hex.ts";
import { ZERO_ADDRESS } from "../../src/core/hex.ts";
import {
  confirmedFate,
  cursorOf,
  endOfRow,
  matches,
  originalEvents,
  rowEvents,
  rowOfCursor,
  type StreamEvent,
  type StreamFilter,
  type StreamRow,
  selectEvents,
} from "../../src/core/stream-events.ts";
import type { NftTransfer } from "../../src/core/types.ts";
import { computeEffects } from "../../src/indexer/effects.ts";
import { StreamConsumer } from "../support/stream-consumer.ts";

const DEAD = "0x000000000000000000000000000000000000dead" as Address;
const PEOPLE = [`0x${"a1".repeat(20)}`, `0x${"b2".repeat(20)}`, `0x${"c3".repeat(20)}`] as Address[];
const PARTIES = [ZERO_ADDRESS, DEAD, ...PEOPLE];
const CONTRACTS = [`0x${"0c".repeat(20)}`, `0x${"0d".repeat(20)}`] as Address[];
const TX = `0x${"11".repeat(32)}` as Hex;

function transferRow(
  id: bigint,
  block: number,
  t: { from: Address; to: Address; contract: Address; tokenId: bigint; amount: bigint },
): StreamRow {
  return {
    id,
    blockNumber: block,
    logIndex: Number(id % 1000n),
    seq: 0,
    contract: t.contract,
    tokenId: t.tokenId,
    from: t.from,
    to: t.to,
    amount: t.amount,
    txHash: TX,
    blockTime: new Date(block * 1000),
    standard: "erc1155",
    trade: undefined,
    retracts: undefined,
    rollbackPeak: undefined,
  };
}

function saleRow(id: bigint, block: number, seller: Address, buyer: Address): StreamRow {
  return {
    ...transferRow(id, block, {
      from: seller,
      to: buyer,
      contract: CONTRACTS[0] as Address,
      tokenId: 1n,
      amount: 1n,
    }),
    standard: undefined,
    trade: {
      kind: "sale",
      market: "seaport",
      flags: [],
      bundled: false,
      attributedBy: "market_event",
      nativePaid: "1000",
      fungiblePaid: "0",
      totalNative: "1000",
      totalUsd: null,
      payments: [],
    },
  };
}

const arbTransfer = fc.record({
  from: fc.constantFrom(...PARTIES),
  to: fc.constantFrom(...PARTIES),
  contract: fc.constantFrom(...CONTRACTS),
  tokenId: fc.bigInt({ min: 1n, max: 3n }),
  amount: fc.bigInt({ min: 1n, max: 5n }),
});

test("cursors: a row's events fall between the rows around it, and each names its row", () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 1n, max: 2n ** 60n }), fc.integer({ min: 0, max: 3 }), (id, position) => {
      const cursor = cursorOf(id, position);
      assert.equal(rowOfCursor(cursor), id);
      assert.ok(cursor > endOfRow(id - 1n) && cursor <= endOfRow(id));
    }),
  );
});

test("a transfer's ownership events change units exactly as the ownership projection's replay does", () => {
  fc.assert(
    fc.property(fc.array(arbTransfer, { maxLength: 40 }), (transfers) => {
      const consumer = new StreamConsumer();
      transfers.forEach((t, i) => {
        consumer.apply(originalEvents(transferRow(BigInt(i + 1), 10 + i, t)));
      });
      const nft: NftTransfer[] = transfers.map((t, i) => ({
        ...t,
        blockNumber: 10 + i,
        logIndex: i,
        seq: 0,
        txHash: TX,
        txIndex: 0,
        standard: "erc1155",
      }));
      const effects = computeEffects(
        nft,
        () => 0,
        () => 0n,
      );
      const expected = new Map<string, bigint>();
      for (const b of effects.balances) {
        const key = `${b.contract}:${b.tokenId}:${b.holder}`;
        const units = (expected.get(key) ?? 0n) + b.delta;
        if (units === 0n) expected.delete(key);
        else expected.set(key, units);
      }
      assert.deepEqual(consumer.units, expected);
    }),
  );
});

test("a transfer gives its event, then the sender's side and the recipient's; a mint, a burn and a move to oneself fewer", () => {
  const row = (from: Address, to: Address) =>
    originalEvents(
      transferRow(7n, 1, { from, to, contract: CONTRACTS[0] as Address, tokenId: 1n, amount: 2n }),
    );
  const [a, b] = PEOPLE as [Address, Address];
  assert.deepEqual(
    row(a, b).map((e) => [e.kind, e.cursor, e.kind === "ownership" ? e.delta : undefined]),
    [
      ["transfer", 28n, undefined],
      ["ownership", 29n, -2n],
      ["ownership", 30n, 2n],
    ],
  );
  assert.deepEqual(
    row(ZERO_ADDRESS, a).map((e) => e.cursor),
    [28n, 30n],
  );
  assert.deepEqual(
    row(a, DEAD).map((e) => e.cursor),
    [28n, 29n],
  );
  assert.deepEqual(
    row(a, a).map((e) => e.kind),
    ["transfer"],
  );
  const [sale] = originalEvents(saleRow(9n, 1, a, b));
  assert.equal(sale?.kind, "sale");
  assert.ok(
    sale?.kind === "sale" &&
      sale.labels.includes("LABEL_SALE") &&
      sale.labels.includes("LABEL_MARKETPLACE_OPENSEA"),
  );
});

test("a retraction row takes back each event of the row it copies, by its cursor, with its content", () => {
  fc.assert(
    fc.property(
      arbTransfer,
      fc.bigInt({ min: 1n, max: 1000n }),
      fc.bigInt({ min: 1n, max: 1000n }),
      (t, id, later) => {
        const original = { ...transferRow(id, 5, t), rollbackPeak: 9 };
        const retraction = { ...original, id: id + later, retracts: id };
        const events = rowEvents(retraction);
        const originals = originalEvents(original);
        assert.deepEqual(
          events.map((e) => (e.kind === "retraction" ? e.retracted : undefined)),
          originals,
        );
        for (const e of events) assert.ok(e.cursor > endOfRow(id) && rowOfCursor(e.cursor) === id + later);
      },
    ),
  );
});

/**
 * A pure model of the outbox as the store keeps it (src/store/tables/stream-events.ts): batches
 * append rows in block order, a rollback marks the standing rows above the ancestor and appends a
 * copy of each, newest first.
 */
class ModelOutbox {
  rows: StreamRow[] = [];
  head = 0;
  peak = 0;
  write(
    transfers: readonly (typeof arbTransfer extends fc.Arbitrary<infer T> ? T : never)[],
    sale: boolean,
    verdict = false,
  ) {
    const block = ++this.head;
    for (const t of transfers) this.rows.push(transferRow(BigInt(this.rows.length + 1), block, t));
    if (sale)
      this.rows.push(
        saleRow(BigInt(this.rows.length + 1), block, PEOPLE[0] as Address, PEOPLE[1] as Address),
      );
    // A later rule firing on the newest standing trade without one, after the block's other rows.
    const standing = (r: StreamRow) => r.retracts === undefined && r.rollbackPeak === undefined;
    const judged = new Set(
      this.rows
        .filter((r) => standing(r) && r.trade?.verdict)
        .map((r) => `${r.trade?.verdict?.saleBlock}:${r.logIndex}`),
    );
    const target = this.rows.findLast(
      (r) => standing(r) && r.trade && !r.trade.verdict && !judged.has(`${r.blockNumber}:${r.logIndex}`),
    );
    if (verdict && target?.trade) {
      this.rows.push({
        ...target,
        id: BigInt(this.rows.length + 1),
        blockNumber: block,
        blockTime: new Date(block * 1000),
        trade: {
          ...target.trade,
          flags: [...target.trade.flags, "wash_cycle"],
          verdict: {
            rule: "wash_cycle",
            saleBlock: target.blockNumber,
            saleTime: target.blockTime.getTime() / 1000,
          },
        },
      });
    }
  }
  rollback(depth: number) {
    const ancestor = Math.max(0, this.head - depth);
    this.peak = Math.max(this.peak, this.head);
    const orphaned = this.rows.filter(
      (r) => r.blockNumber > ancestor && r.retracts === undefined && r.rollbackPeak === undefined,
    );
    for (const r of orphaned) r.rollbackPeak = this.peak;
    for (const r of orphaned.reverse()) {
      this.rows.push({ ...r, id: BigInt(this.rows.length + 1), retracts: r.id });
    }
    this.head = ancestor;
    return this.peak - ancestor;
  }
  read(after: bigint, limit: number, filter: StreamFilter, confirmations?: number) {
    const from = rowOfCursor(after);
    const scan = 7n;
    const inRange = this.rows.filter((r) => r.id >= from && r.id <= from + scan);
    const asked = inRange.filter(
      (r) =>
        rowEvents(r).some((e) => matches(e, filter)) ||
        (confirmations !== undefined && confirmedFate(r, this.head, confirmations) === "wait"),
    );
    const page = asked.slice(0, limit);
    const maxId = BigInt(this.rows.length);
    const coveredThrough =
      page.length === limit ? (page.at(-1)?.id ?? from) : maxId < from + scan ? maxId : from + scan;
    return selectEvents(page, {
      after,
      filter,
      ...(confirmations === undefined ? {} : { confirmed: { head: this.head, confirmations } }),
      limit,
      coveredThrough,
    });
  }
  /** A consumer that applied exactly the rows standing, of blocks up to `maxBlock`. */
  standing(maxBlock = Number.POSITIVE_INFINITY): StreamConsumer {
    const consumer = new StreamConsumer();
    for (const r of this.rows) {
      if (r.retracts === undefined && r.rollbackPeak === undefined && r.blockNumber <= maxBlock) {
        consumer.apply(originalEvents(r));
      }
    }
    return consumer;
  }
}

const arbOp = fc.oneof(
  fc.record({
    op: fc.constant("write" as const),
    transfers: fc.array(arbTransfer, { maxLength: 4 }),
    sale: fc.boolean(),
    verdict: fc.boolean(),
  }),
  fc.record({ op: fc.constant("rollback" as const), depth: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ op: fc.constant("read" as const), limit: fc.integer({ min: 1, max: 5 }) }),
);

test("consumers reading in pages between writes and rollbacks end with the store's truth; confirmed ones never see a shallow reorganisation", () => {
  const CONFIRMATIONS = 4;
  fc.assert(
    fc.property(fc.array(arbOp, { maxLength: 60 }), fc.boolean(), (ops, filtered) => {
      const outbox = new ModelOutbox();
      const live = { consumer: new StreamConsumer(), next: 0n };
      const confirmed = { consumer: new StreamConsumer(), next: 0n };
      const filter: StreamFilter = filtered ? { kinds: ["ownership", "sale"] } : {};
      let deepest = 0;
      const readAll = (limit: number, bound: number) => {
        for (let i = 0; i < bound; i++) {
          const a = outbox.read(live.next, limit, filter);
          live.consumer.apply(a.events);
          const b = outbox.read(confirmed.next, limit, filter, CONFIRMATIONS);
          confirmed.consumer.apply(b.events);
          if (a.next === live.next && b.next === confirmed.next) return;
          assert.ok(a.next >= live.next && b.next >= confirmed.next, "a next cursor never goes back");
          live.next = a.next;
          confirmed.next = b.next;
        }
      };
      for (const op of ops) {
        if (op.op === "write") outbox.write(op.transfers, op.sale, op.verdict);
        else if (op.op === "rollback") {
          // How deep it reached below the highest block indexed: what a confirmed consumer saw.
          deepest = Math.max(deepest, outbox.rollback(op.depth));
        } else readAll(op.limit, 1);
      }
      // A shallow rollback lowers the head for a moment, below blocks a confirmed consumer was
      // already given (they are still standing); the truth to compare with is the chain back at
      // its height.
      while (outbox.head < outbox.peak) outbox.write([], false);
      readAll(3, 10_000);
      const truth = outbox.standing();
      assert.deepEqual(live.consumer.units, truth.units);
      const confirmedTruth = outbox.standing(outbox.head - CONFIRMATIONS);
      assert.deepEqual(confirmed.consumer.units, confirmedTruth.units);
      // Trades with the verdicts standing on them (a filtered consumer is sent them too).
      assert.deepEqual(live.consumer.tradeSummary(), truth.tradeSummary());
      assert.deepEqual(confirmed.consumer.tradeSummary(), confirmedTruth.tradeSummary());
      const retractions = (c: StreamConsumer) => c.seen.filter((e: StreamEvent) => e.kind === "retraction");
      if (deepest <= CONFIRMATIONS) {
        assert.deepEqual(
          retractions(confirmed.consumer),
          [],
          "a confirmed consumer is not told of shallow reorganisations",
        );
      }
      for (const r of retractions(confirmed.consumer)) {
        assert.ok(r.kind === "retraction" && !confirmed.consumer.applied.has(r.retracted.cursor));
      }
      if (filtered)
        assert.ok(
          live.consumer.seen.every((e) => (e.kind === "retraction" ? e.retracted : e).kind !== "transfer"),
        );
    }),
    {
      numRuns: 300,
      examples: [
        [
          [
            {
              op: "write",
              transfers: [
                {
                  from: ZERO_ADDRESS,
                  to: PEOPLE[1] as Address,
                  contract: CONTRACTS[0] as Address,
                  tokenId: 1n,
                  amount: 1n,
                },
              ],
              sale: false,
              verdict: false,
            },
            ...Array.from({ length: 4 }, () => ({
              op: "write" as const,
              transfers: [],
              sale: false,
              verdict: false,
            })),
            { op: "read", limit: 1 },
            { op: "read", limit: 1 },
            { op: "rollback", depth: 1 },
          ],
          false,
        ],
      ],
    },
  );
});
