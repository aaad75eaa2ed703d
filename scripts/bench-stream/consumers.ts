/**
 * The two consumers of the live event stream the benchmark times, each as a client program would
 * be written: a gRPC client of `StreamService.StreamEvents` decoding its binary messages, and a
 * Server-Sent Events reader over fetch. Both hand each event to `onEvent` with the time it arrived.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type StreamEvent,
  type StreamEventsRequest,
  StreamEventsRequestSchema,
  type StreamEventsResponse,
  StreamEventsResponseSchema,
} from "../../src/gen/mintlens/v1beta2/stream_pb.ts";

/** What a consumer says of each event: its cursor, its block, and when it arrived (ms, `performance.now()`). */
export type OnEvent = (cursor: bigint, blockNumber: number, at: number) => void;

export interface Consumer {
  /** Resolves when the server ends the stream, or after `cancel`. */
  done: Promise<void>;
  cancel(): void;
}

const METHOD = "/mintlens.v1beta2.StreamService/StreamEvents";

/** The block of an event, or of the event a retraction takes back. */
function blockOf(event: StreamEvent): number {
  const e = event.event;
  if (e.case === "retraction") return e.value.retracted ? blockOf(e.value.retracted) : 0;
  if (e.case === "verdict") return Number(e.value.verdictBlockNumber);
  return Number(e.value?.place?.blockNumber ?? 0n);
}

/** `address` is the server's `host:port`; `cert` the PEM certificate its TLS presents (self-signed). */
export function grpcConsumer(
  address: string,
  cert: Buffer,
  key: string,
  request: Partial<Pick<StreamEventsRequest, "after" | "kinds">>,
  onEvent: OnEvent,
): Consumer {
  // By name: the generated certificate is for localhost, not an IP address.
  const target = address.replace(/^127\.0\.0\.1:/, "localhost:");
  const client = new grpc.Client(target, grpc.credentials.createSsl(cert), {
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
  });
  const metadata = new grpc.Metadata();
  metadata.set("x-api-key", key);
  const call = client.makeServerStreamRequest<StreamEventsRequest, StreamEventsResponse>(
    METHOD,
    (r) => Buffer.from(toBinary(StreamEventsRequestSchema, r)),
    (b) => fromBinary(StreamEventsResponseSchema, b),
    create(StreamEventsRequestSchema, request),
    metadata,
  );
  const done = new Promise<void>((resolve, reject) => {
    call.on("data", (message: StreamEventsResponse) => {
      const at = performance.now();
      for (const event of message.events) onEvent(event.cursor, blockOf(event), at);
    });
    call.on("error", (error: grpc.ServiceError) => {
      client.close();
      if (error.code === grpc.status.CANCELLED) resolve();
      else reject(error);
    });
    call.on("end", () => {
      client.close();
      resolve();
    });
  });
  return { done, cancel: () => call.cancel() };
}

/** Reads `text/event-stream` from `url`, parsing its messages as they arrive. */
export function sseConsumer(url: string, key: string, onEvent: OnEvent): Consumer {
  const abort = new AbortController();
  const done = (async () => {
    const response = await fetch(url, {
      headers: { "x-api-key": key, accept: "text/event-stream" },
      signal: abort.signal,
    });
    if (response.status !== 200 || !response.body) {
      throw new Error(`the event stream answered ${response.status}: ${await response.text()}`);
    }
    const decoder = new TextDecoder();
    let buffered = "";
    let id: string | undefined;
    let kind = "message";
    let data = "";
    try {
      for await (const chunk of response.body) {
        const at = performance.now();
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          const line = buffered.slice(0, newline).replace(/\r$/, "");
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf("\n");
          if (line === "") {
            if (id !== undefined && kind !== "heartbeat" && kind !== "end" && data !== "") {
              onEvent(BigInt(id), blockOfJson(JSON.parse(data)), at);
            }
            kind = "message";
            data = "";
            continue;
          }
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") id = value;
          else if (field === "event") kind = value;
          else if (field === "data") data = data === "" ? value : `${data}\n${value}`;
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return { done, cancel: () => abort.abort() };
}

interface JsonEvent {
  transfer?: { place?: { blockNumber?: string } };
  ownership?: { place?: { blockNumber?: string } };
  sale?: { place?: { blockNumber?: string } };
  retraction?: { retracted?: JsonEvent };
}

function blockOfJson(event: JsonEvent): number {
  if (event.retraction?.retracted) return blockOfJson(event.retraction.retracted);
  const place = (event.transfer ?? event.ownership ?? event.sale)?.place;
  return Number(place?.blockNumber ?? 0);
}
