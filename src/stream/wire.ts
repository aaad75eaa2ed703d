/**
 * The live event stream's events as the API's messages: the one wire form of the gRPC stream, of
 * Server-Sent Events and of webhook bodies (the message's proto3 JSON). Pure.
 */
import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { EventPlace, SaleContent, StreamEvent, StreamEventKind } from "../core/stream-events.ts";
import { AttributedBySchema, LabelSchema } from "../gen/mintlens/v1beta2/enums_pb.ts";
import {
  StreamEventKind as StreamEventKindNumber,
  type StreamEvent as StreamEventMessage,
  StreamEventSchema,
  type StreamEventsResponse,
  StreamEventsResponseSchema,
  type StreamPlace,
  type StreamSale,
  StreamSaleSchema,
} from "../gen/mintlens/v1beta2/stream_pb.ts";

/** The message kinds of a filter and the store's names of them. */
export const STREAM_KIND_NAMES: Readonly<Record<StreamEventKindNumber, StreamEventKind | undefined>> = {
  [StreamEventKindNumber.UNSPECIFIED]: undefined,
  [StreamEventKindNumber.TRANSFER]: "transfer",
  [StreamEventKindNumber.SALE]: "sale",
  [StreamEventKindNumber.OWNERSHIP]: "ownership",
};

const enumNumber = (values: readonly { name: string; number: number }[], name: string) =>
  values.find((v) => v.name === name)?.number ?? 0;

/** `YYYY-MM-DDTHH:MM:SSZ`, as every block time of the API. */
const blockTimestamp = (time: Date) => time.toISOString().replace(/\.\d{3}Z$/, "Z");

function place(event: Omit<EventPlace, "cursor">): StreamPlace {
  return {
    $typeName: "mintlens.v1beta2.StreamPlace",
    blockNumber: BigInt(event.blockNumber),
    blockTimestamp: blockTimestamp(event.blockTime),
    txHash: event.txHash,
    logIndex: BigInt(event.logIndex),
    seqIndex: BigInt(event.seq),
    contractAddress: event.contract,
    tokenId: event.tokenId.toString(),
  };
}

/** An event as its message. */
export function streamEventMessage(event: StreamEvent): StreamEventMessage {
  if (event.kind === "retraction") {
    return create(StreamEventSchema, {
      cursor: event.cursor,
      event: { case: "retraction", value: { retracted: streamEventMessage(event.retracted) } },
    });
  }
  switch (event.kind) {
    case "transfer":
      return create(StreamEventSchema, {
        cursor: event.cursor,
        event: {
          case: "transfer",
          value: {
            place: place(event),
            fromAddress: event.from,
            toAddress: event.to,
            quantity: event.amount.toString(),
            standard: event.standard,
          },
        },
      });
    case "ownership":
      return create(StreamEventSchema, {
        cursor: event.cursor,
        event: {
          case: "ownership",
          value: { place: place(event), holderAddress: event.holder, delta: event.delta.toString() },
        },
      });
    case "sale":
      return create(StreamEventSchema, {
        cursor: event.cursor,
        event: { case: "sale", value: saleMessage(event) },
      });
    case "verdict":
      return create(StreamEventSchema, {
        cursor: event.cursor,
        event: {
          case: "verdict",
          value: {
            sale: saleMessage(event.sale),
            rule: event.rule,
            verdictBlockNumber: BigInt(event.blockNumber),
            verdictBlockTimestamp: blockTimestamp(event.blockTime),
          },
        },
      });
  }
}

function saleMessage(sale: SaleContent): StreamSale {
  return create(StreamSaleSchema, {
    place: place(sale),
    trade: sale.trade,
    sellerAddress: sale.seller,
    buyerAddress: sale.buyer,
    quantity: sale.quantity.toString(),
    totalNativeWei: sale.totalNative.toString(),
    nativePaidWei: sale.nativePaid.toString(),
    fungiblePaidWei: sale.fungiblePaid.toString(),
    totalUsd: sale.totalUsd ?? "",
    attributedBy: enumNumber(AttributedBySchema.values, sale.attributedBy),
    market: sale.market,
    flags: [...sale.flags],
    bundled: sale.bundled,
    payments: sale.payments.map((p) => ({
      tokenAddress: p.token,
      amount: p.amount.toString(),
      nativeValueWei: p.nativeValue?.toString() ?? "",
    })),
    labels: sale.labels.map((l) => enumNumber(LabelSchema.values, l)),
  });
}

/** A batch of events as the stream's message. */
export function streamBatchMessage(
  events: readonly StreamEvent[],
  next: bigint,
  head: number,
): StreamEventsResponse {
  return create(StreamEventsResponseSchema, {
    events: events.map(streamEventMessage),
    nextCursor: next,
    headBlock: BigInt(Math.max(head, 0)),
  });
}

/**
 * An event's proto3 JSON, as Server-Sent Events and webhooks send it: 64-bit integers as decimal
 * strings, enums by name, fields in lowerCamelCase, every field of the event's kind written.
 */
export function streamEventJson(event: StreamEvent): JsonValue {
  return toJson(StreamEventSchema, streamEventMessage(event), { alwaysEmitImplicit: true });
}
