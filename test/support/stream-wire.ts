/**
 * The live event stream's wire form read back into the store's events, as a consumer of the API
 * would: the proto3 JSON of a `StreamEvent` (Server-Sent Events' `data`, a webhook's body) or a
 * message of the gRPC stream as a client built from the published `.proto` decodes it (64-bit
 * integers as strings, enums by name, oneofs named), so `StreamConsumer` can apply them.
 */
import type { Address, Hex } from "../../src/core/hex.ts";
import type { OriginalEvent, SaleContent, StreamEvent } from "../../src/core/stream-events.ts";
import type { TransferLabel } from "../../src/core/transfer-labels.ts";

type Json = Record<string, unknown>;

const text = (value: unknown, what: string): string => {
  if (typeof value !== "string") throw new Error(`${what}: not a string: ${JSON.stringify(value)}`);
  return value;
};
const object = (value: unknown, what: string): Json => {
  if (typeof value !== "object" || value === null) throw new Error(`${what}: not an object`);
  return value as Json;
};

function placeOf(raw: unknown) {
  const p = object(raw, "place");
  return {
    blockNumber: Number(text(p.blockNumber, "blockNumber")),
    blockTime: new Date(text(p.blockTimestamp, "blockTimestamp")),
    txHash: text(p.txHash, "txHash") as Hex,
    logIndex: Number(text(p.logIndex, "logIndex")),
    seq: Number(text(p.seqIndex, "seqIndex")),
    contract: text(p.contractAddress, "contractAddress") as Address,
    tokenId: BigInt(text(p.tokenId, "tokenId")),
  };
}

function original(event: Json, cursor: bigint): OriginalEvent {
  if (event.transfer) {
    const t = object(event.transfer, "transfer");
    return {
      ...placeOf(t.place),
      cursor,
      kind: "transfer",
      from: text(t.fromAddress, "fromAddress") as Address,
      to: text(t.toAddress, "toAddress") as Address,
      amount: BigInt(text(t.quantity, "quantity")),
      standard: text(t.standard, "standard"),
    };
  }
  if (event.ownership) {
    const o = object(event.ownership, "ownership");
    return {
      ...placeOf(o.place),
      cursor,
      kind: "ownership",
      holder: text(o.holderAddress, "holderAddress") as Address,
      delta: BigInt(text(o.delta, "delta")),
    };
  }
  if (event.sale) return { ...sale(event.sale), cursor };
  if (event.verdict) {
    const v = object(event.verdict, "verdict");
    return {
      kind: "verdict",
      cursor,
      blockNumber: Number(text(v.verdictBlockNumber, "verdictBlockNumber")),
      blockTime: new Date(text(v.verdictBlockTimestamp, "verdictBlockTimestamp")),
      rule: text(v.rule, "rule"),
      sale: sale(v.sale),
    };
  }
  throw new Error(`an event of no known kind: ${JSON.stringify(event)}`);
}

function sale(raw: unknown): SaleContent {
  const s = object(raw, "sale");
  const usd = text(s.totalUsd, "totalUsd");
  return {
    ...placeOf(s.place),
    kind: "sale",
    trade: text(s.trade, "trade") as "sale" | "mint" | "return",
    seller: text(s.sellerAddress, "sellerAddress") as Address,
    buyer: text(s.buyerAddress, "buyerAddress") as Address,
    quantity: BigInt(text(s.quantity, "quantity")),
    nativePaid: BigInt(text(s.nativePaidWei, "nativePaidWei")),
    fungiblePaid: BigInt(text(s.fungiblePaidWei, "fungiblePaidWei")),
    totalNative: BigInt(text(s.totalNativeWei, "totalNativeWei")),
    totalUsd: usd === "" ? undefined : usd,
    attributedBy: text(s.attributedBy, "attributedBy"),
    market: text(s.market, "market"),
    flags: (s.flags as unknown[]).map((f) => text(f, "flag")),
    bundled: s.bundled === true,
    payments: (s.payments as unknown[]).map((raw) => {
      const p = object(raw, "payment");
      const value = text(p.nativeValueWei, "nativeValueWei");
      return {
        token: text(p.tokenAddress, "tokenAddress") as Address,
        amount: BigInt(text(p.amount, "amount")),
        nativeValue: value === "" ? undefined : BigInt(value),
      };
    }),
    labels: (s.labels as unknown[]).map((l) => text(l, "label") as TransferLabel),
  };
}

/** A `StreamEvent` in its wire form, back as the store's event. */
export function eventFromWire(raw: unknown): StreamEvent {
  const event = object(raw, "event");
  const cursor = BigInt(text(event.cursor, "cursor"));
  if (event.retraction) {
    const retracted = object(object(event.retraction, "retraction").retracted, "retracted");
    const inner = eventFromWire(retracted);
    if (inner.kind === "retraction") throw new Error("a retraction of a retraction");
    return { kind: "retraction", cursor, retracted: inner };
  }
  return original(event, cursor);
}

/** A message of the gRPC stream: its events, the cursor to resume from and the head. */
export function batchFromWire(raw: unknown): { events: StreamEvent[]; next: bigint; head: number } {
  const batch = object(raw, "batch");
  return {
    events: (batch.events as unknown[]).map(eventFromWire),
    next: BigInt(text(batch.nextCursor, "nextCursor")),
    head: Number(text(batch.headBlock, "headBlock")),
  };
}
