/**
 * The live event stream's one wire form against the events it carries: any event, sent as proto3
 * JSON (SSE data, webhook bodies) or as the gRPC message's bytes, reads back as itself; the SSE
 * framing puts each event on its own message, on one line; a stream request's fields are checked as
 * every operation's are.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import fc from "fast-check";
import { InvalidArgumentError } from "../../src/api/errors.ts";
import { sseEnd, sseMessages } from "../../src/api/sse.ts";
import { parseStreamRequest } from "../../src/api/stream-params.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { OriginalEvent, SaleEvent, StreamEvent } from "../../src/core/stream-events.ts";
import { TRANSFER_LABELS } from "../../src/core/transfer-labels.ts";
import { AttributedBySchema } from "../../src/gen/mintlens/v1beta2/enums_pb.ts";
import { StreamEventsResponseSchema } from "../../src/gen/mintlens/v1beta2/stream_pb.ts";
import { streamBatchMessage, streamEventJson } from "../../src/stream/wire.ts";
import { batchFromWire, eventFromWire } from "../support/stream-wire.ts";

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex")}`);
const address = hex(20).map((a) => a as Address);
const u256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
const place = fc.record({
  cursor: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  blockNumber: fc.integer({ min: 0, max: 2 ** 40 }),
  logIndex: fc.integer({ min: 0, max: 100_000 }),
  seq: fc.integer({ min: 0, max: 10_000 }),
  txHash: hex(32).map((h) => h as Hex),
  // Block times are whole seconds.
  blockTime: fc.integer({ min: 0, max: 4_000_000_000 }).map((s) => new Date(s * 1000)),
  contract: address,
  tokenId: u256,
});
const attributedBy = AttributedBySchema.values.filter((v) => v.number !== 0).map((v) => v.name);

const sale: fc.Arbitrary<SaleEvent> = fc
  .record({
    place,
    trade: fc.constantFrom("sale" as const, "mint" as const, "return" as const),
    seller: address,
    buyer: address,
    quantity: u256,
    nativePaid: u256,
    fungiblePaid: u256,
    totalNative: u256,
    totalUsd: fc.option(
      fc
        .tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 999_999 }))
        .map(([a, b]) => `${a}.${b}`),
      { nil: undefined },
    ),
    attributedBy: fc.constantFrom(...attributedBy),
    market: fc.constantFrom("", "opensea", "blur"),
    flags: fc.array(fc.constantFrom("wash_cycle", "rate_outlier", "unpriced", "tx_value"), {
      maxLength: 3,
    }),
    bundled: fc.boolean(),
    payments: fc.array(
      fc
        .record({ token: address, amount: u256, nativeValue: fc.option(u256, { nil: undefined }) })
        .map((p) => ({ ...p })),
      { maxLength: 3 },
    ),
    labels: fc.uniqueArray(fc.constantFrom(...TRANSFER_LABELS), { maxLength: 4 }),
  })
  .map(({ place: p, ...s }) => ({ ...p, kind: "sale" as const, ...s }));

const original: fc.Arbitrary<OriginalEvent> = fc.oneof(
  fc
    .record({
      place,
      from: address,
      to: address,
      amount: u256,
      standard: fc.constantFrom("erc721", "erc1155", "legacy", "punks", "erc2309"),
    })
    .map(({ place: p, ...t }) => ({ ...p, kind: "transfer" as const, ...t })),
  fc
    .record({ place, holder: address, delta: fc.bigInt({ min: -(2n ** 255n), max: 2n ** 255n }) })
    .map(({ place: p, ...o }) => ({ ...p, kind: "ownership" as const, ...o })),
  sale,
  fc
    .record({
      sale,
      rule: fc.constantFrom("wash_cycle", "wash_returned"),
      blockNumber: fc.integer({ min: 0, max: 2 ** 40 }),
      blockTime: fc.integer({ min: 0, max: 4_000_000_000 }).map((t) => new Date(t * 1000)),
    })
    .map(({ sale: { cursor, ...content }, ...v }) => ({
      kind: "verdict" as const,
      cursor,
      ...v,
      sale: content,
    })),
);
const event: fc.Arbitrary<StreamEvent> = fc.oneof(
  original,
  fc
    .tuple(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), original)
    .map(([cursor, retracted]) => ({ kind: "retraction" as const, cursor, retracted })),
);

test("any event sent as JSON reads back as itself", () => {
  fc.assert(
    fc.property(event, (e) => {
      const wire = JSON.parse(JSON.stringify(streamEventJson(e)));
      assert.deepEqual(eventFromWire(wire), e);
    }),
    { numRuns: 500 },
  );
});

test("a batch sent as the gRPC message's bytes reads back as itself", () => {
  fc.assert(
    fc.property(
      fc.array(event, { maxLength: 5 }),
      fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      fc.integer({ min: -1, max: 2 ** 40 }),
      (events, next, head) => {
        const bytes = toBinary(StreamEventsResponseSchema, streamBatchMessage(events, next, head));
        const json = toJson(StreamEventsResponseSchema, fromBinary(StreamEventsResponseSchema, bytes), {
          alwaysEmitImplicit: true,
        });
        assert.deepEqual(batchFromWire(json), { events, next, head: Math.max(head, 0) });
      },
    ),
    { numRuns: 200 },
  );
});

/** SSE messages as a client parses them (the WHATWG rules, for the fields used). */
function parseSse(text: string): { id?: string; event?: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((block) => block !== "")
    .map((block) => {
      const message: { id?: string; event?: string; data: string } = { data: "" };
      for (const line of block.split("\n")) {
        const colon = line.indexOf(":");
        const [field, value] = [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, "")];
        if (field === "id") message.id = value;
        else if (field === "event") message.event = value;
        else if (field === "data") message.data += value;
        else throw new Error(`an unexpected line: ${line}`);
      }
      return message;
    });
}

test("Server-Sent Events: one message per event, its cursor the id and its kind the event; a heartbeat when none", () => {
  fc.assert(
    fc.property(
      fc.array(event, { maxLength: 6 }),
      fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
      (events, next) => {
        const messages = parseSse(sseMessages({ events, next, head: 7 }));
        if (events.length === 0) {
          assert.deepEqual(messages, [
            {
              id: next.toString(),
              event: "heartbeat",
              data: JSON.stringify({ nextCursor: next.toString(), headBlock: "7" }),
            },
          ]);
          return;
        }
        assert.equal(messages.length, events.length);
        messages.forEach((m, i) => {
          const e = events[i] as StreamEvent;
          assert.equal(m.id, e.cursor.toString());
          assert.equal(m.event, e.kind);
          assert.deepEqual(eventFromWire(JSON.parse(m.data)), e);
        });
      },
    ),
    { numRuns: 200 },
  );
  const [end] = parseSse(sseEnd({ reason: "stalled", resumeCursor: 42n, message: "slow\nreader" }));
  assert.deepEqual(end, {
    id: "42",
    event: "end",
    data: JSON.stringify({ reason: "stalled", resumeCursor: "42", message: "slow\nreader" }),
  });
});

test("a stream request's fields: defaults, lists in either form, and each problem naming its field", () => {
  const a = `0x${"Ab".repeat(20)}`;
  assert.deepEqual(parseStreamRequest({}), {
    filter: { kinds: [], contracts: [], addresses: [] },
    after: "now",
    confirmations: undefined,
  });
  assert.deepEqual(
    parseStreamRequest({
      kinds: ["STREAM_EVENT_KIND_SALE,STREAM_EVENT_KIND_TRANSFER", "STREAM_EVENT_KIND_SALE"],
      contract_addresses: a,
      after: "17",
      mode: "STREAM_MODE_CONFIRMED",
    }),
    {
      filter: { kinds: ["sale", "transfer"], contracts: [a.toLowerCase()], addresses: [] },
      after: 17n,
      confirmations: 12,
    },
  );
  // gRPC's values: enum numbers, a number of confirmations.
  assert.deepEqual(parseStreamRequest({ kinds: [3], mode: 2, confirmations: 0 }).confirmations, 0);
  const refused: [Record<string, string | number | string[]>, string][] = [
    [{ kinds: "STREAM_EVENT_KIND_UNSPECIFIED" }, "kinds"],
    [{ kinds: "sale" }, "kinds"],
    [{ contract_addresses: "0x12" }, "contract_addresses"],
    [{ addresses: [a, "nope"] }, "addresses"],
    [
      { addresses: Array.from({ length: 101 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`) },
      "addresses",
    ],
    [{ after: "-1" }, "after"],
    [{ after: "1e3" }, "after"],
    [{ after: (2n ** 64n).toString() }, "after"],
    [{ mode: "STREAM_MODE_UNSPECIFIED" }, "mode"],
    [{ confirmations: "5" }, "confirmations"],
    [{ mode: "STREAM_MODE_CONFIRMED", confirmations: "10001" }, "confirmations"],
    [{ after: ["1", "2"] }, "after"],
  ];
  for (const [fields, field] of refused) {
    assert.throws(
      () => parseStreamRequest(fields),
      (e: unknown) => e instanceof InvalidArgumentError && e.field === field,
      JSON.stringify(fields),
    );
  }
});
