/**
 * Clients of the live event stream as a user of the project would write them: a grpc-js client of
 * `StreamService` loaded from the published `.proto`, and a Server-Sent Events reader over node's
 * fetch. Both hand over what arrives as it arrives, and can stop reading to play a slow consumer.
 */
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { PROTO_ROOT } from "../../src/api/rest.ts";
import type { StreamEvent } from "../../src/core/stream-events.ts";
import { batchFromWire, eventFromWire } from "./stream-wire.ts";

export interface GrpcBatch {
  events: StreamEvent[];
  next: bigint;
  head: number;
  /** When it arrived, in ms. */
  at: number;
}

export interface GrpcStream {
  readonly batches: GrpcBatch[];
  /** The call's end: its status, and its trailing metadata. */
  readonly ended: Promise<{ code: grpc.status; details: string; trailers: Record<string, string> }>;
  /** Resolves once `done` holds for what arrived (checked on each message), or rejects after `ms`. */
  until(what: string, done: (batches: readonly GrpcBatch[]) => boolean, ms?: number): Promise<void>;
  pause(): void;
  resume(): void;
  cancel(): void;
}

function loadStreamClient(): grpc.ServiceClientConstructor {
  const definition = loadSync("mintlens/v1beta2/stream.proto", {
    includeDirs: [PROTO_ROOT],
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    mintlens: { v1beta2: { StreamService: grpc.ServiceClientConstructor } };
  };
  return loaded.mintlens.v1beta2.StreamService;
}

/** A waiter that rejects after `ms` unless `check` held first; `poke` re-checks. */
function waiter<T>(
  state: () => T,
  listeners: Set<() => void>,
  gone: () => string | undefined = () => undefined,
) {
  return (what: string, done: (value: T) => boolean, ms = 15_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        let ok = false;
        try {
          ok = done(state());
          // A stream that ended will not get there.
          const ended = ok ? undefined : gone();
          if (ended !== undefined) throw new Error(`the stream ended before ${what}: ${ended}`);
        } catch (error) {
          listeners.delete(check);
          clearTimeout(timer);
          reject(error);
          return;
        }
        if (!ok) return;
        listeners.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out after ${ms} ms waiting until ${what}`));
      }, ms);
      listeners.add(check);
      check();
    });
}

/** Opens `StreamEvents` at `address` (TLS trusting `cert`) with `request`, presenting `key` unless null. */
export function openGrpcStream(
  address: string,
  cert: Buffer,
  key: string | null,
  request: Record<string, unknown>,
): GrpcStream & { close(): void } {
  const Client = loadStreamClient();
  const client = new Client(address, grpc.credentials.createSsl(cert));
  const metadata = new grpc.Metadata();
  if (key !== null) metadata.set("x-api-key", key);
  const call = (
    client as unknown as { streamEvents(r: unknown, m: grpc.Metadata): grpc.ClientReadableStream<unknown> }
  ).streamEvents(request, metadata);
  const batches: GrpcBatch[] = [];
  const listeners = new Set<() => void>();
  let endedWith: string | undefined;
  const poke = () => {
    for (const l of [...listeners]) l();
  };
  call.on("data", (message: unknown) => {
    batches.push({ ...batchFromWire(message), at: Date.now() });
    poke();
  });
  const ended = new Promise<{ code: grpc.status; details: string; trailers: Record<string, string> }>(
    (resolve) => {
      let trailers: Record<string, string> = {};
      call.on("status", (status: grpc.StatusObject) => {
        trailers = Object.fromEntries(
          Object.entries(status.metadata.getMap()).map(([k, v]) => [k, v.toString()]),
        );
        endedWith = `${grpc.status[status.code]}: ${status.details}`;
        resolve({ code: status.code, details: status.details, trailers });
        poke();
      });
      // The status event follows an error: the error itself needs a listener.
      call.on("error", () => {});
    },
  );
  return {
    batches,
    ended,
    until: waiter(
      () => batches as readonly GrpcBatch[],
      listeners,
      () => endedWith,
    ),
    pause: () => call.pause(),
    resume: () => call.resume(),
    cancel: () => call.cancel(),
    close() {
      call.cancel();
      client.close();
    },
  };
}

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
  /** When it arrived, in ms. */
  at: number;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The body when the answer is no stream (an error). */
  body: string | undefined;
  readonly messages: SseMessage[];
  /** The events of the messages that carry one, read back from their data. */
  events(): StreamEvent[];
  until(what: string, done: (messages: readonly SseMessage[]) => boolean, ms?: number): Promise<void>;
  /** Resolves when the server ends the response. */
  readonly finished: Promise<void>;
  close(): void;
}

/** Opens the SSE stream at `url` (a full URL with its query) with `headers`. */
export async function openSseStream(url: string, headers: Record<string, string>): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const messages: SseMessage[] = [];
  const listeners = new Set<() => void>();
  const poke = () => {
    for (const l of [...listeners]) l();
  };
  const isStream = response.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
  const body = isStream ? undefined : await response.text();
  const finished = (async () => {
    if (!isStream || response.body === null) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: SseMessage = { id: undefined, event: "message", data: "", at: Date.now() };
          for (const line of block.split("\n")) {
            const colon = line.indexOf(":");
            const field = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, "");
            if (field === "id") message.id = value;
            else if (field === "event") message.event = value;
            else if (field === "data") message.data += value;
          }
          messages.push(message);
        }
        poke();
      }
    } catch {
      // Closed by this side.
    }
    poke();
  })();
  return {
    status: response.status,
    headers: response.headers,
    body,
    messages,
    events: () =>
      messages
        .filter((m) => ["transfer", "sale", "verdict", "ownership", "retraction"].includes(m.event))
        .map((m) => eventFromWire(JSON.parse(m.data))),
    until: waiter(() => messages as readonly SseMessage[], listeners),
    finished,
    close: () => abort.abort(),
  };
}
