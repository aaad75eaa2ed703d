/**
 * `StreamEvents` behind both protocols: checks a request, takes a stream slot of its key, reads its
 * first page (so a bad cursor is refused with an ordinary error before anything is sent), then runs
 * the stream into the transport's sink until it ends. The adapters (grpc.ts, rest.ts) frame it.
 */
import type { DescMethod } from "@bufbuild/protobuf";
import { StreamService } from "../gen/mintlens/v1beta2/stream_pb.ts";
import { MAX_STREAM_LIMIT, StreamCursorError, type StreamPage } from "../store/read/stream-events.ts";
import type { StreamFollower } from "../stream/follower.ts";
import {
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_STALL_MS,
  runStream,
  type StreamEnd,
  type StreamPayer,
  type StreamSink,
} from "../stream/pump.ts";
import {
  type ApiError,
  FailedPreconditionError,
  ResourceExhaustedError,
  toApiError,
  UnavailableError,
} from "./errors.ts";
import type { RequestFields } from "./service.ts";
import { parseStreamRequest } from "./stream-params.ts";
import type { StreamSlots } from "./stream-slots.ts";

/** An opened stream: its first page is read; `run` sends it and what follows. */
export interface OpenedStream {
  /** The cursor the stream starts after (`now` resolved). */
  start: bigint;
  /** Runs the stream into `sink` until it ends, then gives its slot back. Never rejects. */
  run(sink: StreamSink, payer: StreamPayer, cancelled: AbortSignal): Promise<StreamEnd>;
  /** Gives the slot back without running (the transport failed before the stream started). */
  release(): void;
}

export interface StreamEndpoint {
  method: DescMethod;
  /** Checks the request and opens the stream; throws the API's errors. */
  open(fields: RequestFields, keyId: string): Promise<OpenedStream>;
}

export interface StreamEndpointOptions {
  follower: StreamFollower;
  slots: StreamSlots;
  /** Ms without a message before an empty one (default 15,000). */
  heartbeatMs?: number;
  /** Ms a full transport may hold the stream before it is ended (default 30,000). */
  stallMs?: number;
  /** Events per message (default and most: 1,000). */
  batchLimit?: number;
}

const NOT_INDEXED = /is not indexed in this store/;

export function createStreamEndpoint(options: StreamEndpointOptions): StreamEndpoint {
  const { follower, slots } = options;
  const limit = options.batchLimit ?? MAX_STREAM_LIMIT;
  return {
    method: StreamService.method.streamEvents,
    async open(fields, keyId) {
      const request = parseStreamRequest(fields);
      const slot = slots.open(keyId);
      let first: StreamPage;
      try {
        first = await follower.read({
          ...request.filter,
          after: request.after,
          limit,
          ...(request.confirmations === undefined ? {} : { confirmations: request.confirmations }),
        });
      } catch (error) {
        slot.release();
        if (error instanceof StreamCursorError) throw cursorRefused(error);
        if (error instanceof Error && NOT_INDEXED.test(error.message)) {
          throw new UnavailableError({ message: "the chain has no indexed block yet; retry later" });
        }
        throw error;
      }
      const start = request.after === "now" ? first.next : request.after;
      return {
        start,
        release: slot.release,
        async run(sink, payer, cancelled) {
          try {
            return await runStream({
              follower,
              filter: request.filter,
              confirmations: request.confirmations,
              first,
              after: start,
              sink,
              payer,
              limit,
              heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
              stallMs: options.stallMs ?? DEFAULT_STALL_MS,
              cancelled,
              shutdown: slot.shutdown,
            });
          } finally {
            slot.release();
          }
        },
      };
    },
  };
}

/** How a stream that failed after it started is told to its consumer: the store's cursor errors as themselves. */
export function streamFailure(error: unknown): unknown {
  return error instanceof StreamCursorError ? cursorRefused(error) : error;
}

/** A cursor the store cannot read after; a pruned one names where to resume. */
function cursorRefused(error: StreamCursorError): FailedPreconditionError {
  return new FailedPreconditionError(
    `after: ${error.message}`,
    error.reason === "pruned" ? error.oldestCursor : undefined,
  );
}

/** How a stream that ran ends for its consumer; undefined when the consumer left. */
export function streamEndError(end: StreamEnd): { error: ApiError; resumeCursor: bigint } | undefined {
  switch (end.reason) {
    case "cancelled":
      return undefined;
    case "stalled":
      return {
        error: new ResourceExhaustedError(
          1,
          `the stream's consumer stopped reading: resume after cursor ${end.resumeCursor}`,
        ),
        resumeCursor: end.resumeCursor,
      };
    case "shutdown":
      return {
        error: new UnavailableError({
          message: `the server is shutting down: resume after cursor ${end.resumeCursor}`,
          retryAfterSeconds: 1,
        }),
        resumeCursor: end.resumeCursor,
      };
    case "failed":
      return { error: toApiError(streamFailure(end.error)), resumeCursor: end.resumeCursor };
  }
}
