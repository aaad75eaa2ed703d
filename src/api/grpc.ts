/**
 * The gRPC adapter: a grpc-js server over TLS whose services are the `.proto` services, each
 * method calling its operation through the guard, plus server reflection and the standard health
 * service. Messages are encoded and decoded by the generated protobuf-es types.
 */
import { join } from "node:path";
import { type DescField, type DescMessage, fromBinary, isFieldSet, toBinary } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import type { Logger } from "../core/logger.ts";
import { StreamEventsResponseSchema, StreamService } from "../gen/mintlens/v1beta2/stream_pb.ts";
import type { ProcessMetrics } from "../metrics/process-metrics.ts";
import { streamBatchMessage } from "../stream/wire.ts";
import { blockTags, MIN_BLOCK_METADATA, parseMinBlock } from "./block-tags.ts";
import {
  type ApiError,
  BehindError,
  GRPC_CODE_NAME,
  GrpcCode,
  InternalError,
  InvalidArgumentError,
  toApiError,
} from "./errors.ts";
import { createFlowGate } from "./flow-gate.ts";
import type { Guard } from "./guard.ts";
import type { RawScalar } from "./params.ts";
import { peerHost } from "./remote-address.ts";
import { PROTO_ROOT } from "./rest.ts";
import { API_SERVICES, type CallContext, type Operation, type RequestFields } from "./service.ts";
import { type StreamEndpoint, streamEndError } from "./stream-endpoint.ts";

export interface GrpcServerOptions {
  chain: string;
  operations: ReadonlyMap<string, Operation>;
  guard: Guard;
  metrics: ProcessMetrics;
  logger: Logger;
  /** Where the one line per request goes. */
  accessLog: Logger;
  /** The live event stream (`StreamService`); not served when absent. */
  stream?: StreamEndpoint | undefined;
}

export interface GrpcServer {
  server: grpc.Server;
  /** Marks every service serving or not in the health service. */
  setServing(serving: boolean): void;
}

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;

/** A request that could not be decoded: answered as an invalid argument, not as a server fault. */
const UNDECODABLE = Symbol("undecodable");

function enumValue(field: DescField & { fieldKind: "enum" | "list" }, value: number): RawScalar {
  const desc = field.fieldKind === "enum" ? field.enum : field.listKind === "enum" ? field.enum : undefined;
  // By name, as REST sends it, so both protocols are checked alike; an unknown number stays a number.
  return desc?.values.find((v) => v.number === value)?.name ?? value;
}

/**
 * A decoded request's fields by `.proto` name: an optional field not set is absent; enums by
 * their value names.
 */
export function grpcRequestFields(schema: DescMessage, message: Record<string, unknown>): RequestFields {
  const fields: Record<string, RawScalar | RawScalar[]> = {};
  for (const field of schema.fields) {
    const value = message[field.localName];
    if (field.fieldKind === "list") {
      const list = value as (string | number)[];
      fields[field.name] = list.map((v) => (typeof v === "number" ? enumValue(field, v) : v));
    } else if (field.fieldKind === "enum") {
      if (field.presence !== IMPLICIT && !isFieldSet(message as never, field)) continue;
      // An implicit enum at 0 was not sent or sent as *_UNSPECIFIED: 0 either way.
      fields[field.name] = value === 0 && field.presence === IMPLICIT ? 0 : enumValue(field, value as number);
    } else if (field.fieldKind === "scalar") {
      if (field.presence !== IMPLICIT && !isFieldSet(message as never, field)) continue;
      fields[field.name] =
        typeof value === "bigint" || typeof value === "boolean"
          ? value.toString()
          : (value as string | number);
    }
  }
  return fields;
}

function serviceDefinition(
  service: (typeof API_SERVICES)[number],
  handler: (operation: Operation) => grpc.handleUnaryCall<unknown, unknown>,
  operations: ReadonlyMap<string, Operation>,
): [grpc.ServiceDefinition, grpc.UntypedServiceImplementation] {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const operation = operations.get(method.name);
    if (operation === undefined) throw new Error(`no operation for ${method.name}`);
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: false,
      responseStream: false,
      originalName: method.localName,
      requestSerialize: (message) => Buffer.from(toBinary(method.input, message as never)),
      requestDeserialize: (bytes: Buffer) => {
        try {
          return fromBinary(method.input, bytes);
        } catch {
          return UNDECODABLE;
        }
      },
      // The handler encodes the answer itself (see `encodeAnswer`): what reaches grpc-js is bytes.
      responseSerialize: (bytes) => bytes as Buffer,
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
    };
    implementation[method.localName] = handler(operation);
  }
  return [definition, implementation];
}

/**
 * The answer's bytes, encoded before the call is answered: an encoding that fails (a value outside
 * its field's range) is then the call's failure, answered and recorded with its real status,
 * rather than a failure inside grpc-js after the call was recorded as answered.
 */
function encodeAnswer(operation: Operation, message: unknown): Buffer {
  try {
    return Buffer.from(toBinary(operation.method.output, message as never));
  } catch (error) {
    // Logged with its cause (the field and value protobuf-es refused); the client sees INTERNAL.
    throw new InternalError({ cause: error });
  }
}

export function createGrpcServer(options: GrpcServerOptions): GrpcServer {
  const { chain, guard, metrics, logger, accessLog } = options;
  const server = new grpc.Server();

  const handler =
    (operation: Operation): grpc.handleUnaryCall<unknown, unknown> =>
    (call, callback) => {
      const started = process.hrtime.bigint();
      const name = operation.method.name;
      let user: string | undefined;
      const finish = (status: string) => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        metrics.observeRequest({ chain, protocol: "grpc", operation: name, status }, seconds);
        accessLog.info(
          {
            chain,
            protocol: "grpc",
            method: `${operation.method.parent.typeName}/${name}`,
            status,
            ms: Math.round(seconds * 100_000) / 100,
            ...(user ? { user } : {}),
            remote: call.getPeer(),
          },
          "request",
        );
      };
      const key = call.metadata.get("x-api-key")[0];
      const context: CallContext = {};
      // The block the answer reflects goes in the response's initial metadata, answer or error.
      const tagBlock = () => {
        if (context.block === undefined) return;
        const tags = new grpc.Metadata();
        for (const [tag, value] of blockTags(context.block)) tags.set(tag.toLowerCase(), value);
        call.sendMetadata(tags);
      };
      guard
        .admit(key === undefined ? undefined : key.toString(), peerHost(call.getPeer()))
        .then(async (caller) => {
          user = caller.userName;
          if (call.request === UNDECODABLE) {
            throw new InvalidArgumentError("request", "not a valid encoding of the request message");
          }
          const fields = grpcRequestFields(operation.method.input, call.request as Record<string, unknown>);
          const minBlock = call.metadata.get(MIN_BLOCK_METADATA).map((value) => value.toString());
          context.minBlock = parseMinBlock(minBlock.length === 0 ? undefined : minBlock);
          const answer = await operation.run(fields, context);
          const bytes = encodeAnswer(operation, answer.message);
          // Charged by the answer's JSON, as over REST, so a key pays the same for the same
          // question over either protocol; the response cache has written it already.
          caller.charge(answer.json().length);
          return bytes;
        })
        .then(
          (bytes) => {
            tagBlock();
            callback(null, bytes);
            finish("OK");
          },
          (error: unknown) => {
            const apiError = toApiError(error);
            if (
              apiError.code === GrpcCode.INTERNAL ||
              (apiError.code === GrpcCode.UNAVAILABLE && !(apiError instanceof BehindError))
            ) {
              logger.error({ err: apiError.cause ?? error, operation: name }, "request failed");
            }
            const trailers = new grpc.Metadata();
            // The wait a 429 or 503 tells a REST client, in seconds, as a trailer.
            const retryAfter = apiError.httpHeaders()["Retry-After"];
            if (retryAfter !== undefined) trailers.set("retry-after", retryAfter);
            tagBlock();
            callback({ code: apiError.code, details: apiError.message, metadata: trailers });
            finish(GRPC_CODE_NAME[apiError.code] ?? "UNKNOWN");
          },
        );
    };

  for (const service of API_SERVICES) {
    const [definition, implementation] = serviceDefinition(service, handler, options.operations);
    server.addService(definition, implementation);
  }
  const served: { typeName: string; file: { name: string } }[] = [...API_SERVICES];
  if (options.stream !== undefined) {
    addStreamService(server, options.stream, options);
    served.push(StreamService);
  }

  // Reflection describes the published `.proto` files themselves.
  const files = served.map((s) => join(PROTO_ROOT, `${s.file.name}.proto`));
  new ReflectionService(loadSync(files, { includeDirs: [PROTO_ROOT] })).addToServer(server);

  const names = ["", ...served.map((s) => s.typeName)];
  const health = new HealthImplementation(
    Object.fromEntries(names.map((n) => [n, "SERVING" as ServingStatus])),
  );
  health.addToServer(server);

  return {
    server,
    setServing(serving) {
      for (const name of names) health.setStatus(name, serving ? "SERVING" : "NOT_SERVING");
    },
  };
}

/** The trailing metadata of a stream's end: what the error carries, and where to resume. */
function endTrailers(error: ApiError, resumeCursor: bigint | undefined): grpc.Metadata {
  const trailers = new grpc.Metadata();
  for (const [name, value] of Object.entries(error.grpcTrailers())) trailers.set(name, value);
  const retryAfter = error.httpHeaders()["Retry-After"];
  if (retryAfter !== undefined) trailers.set("retry-after", retryAfter);
  if (resumeCursor !== undefined) trailers.set("mintlens-resume-cursor", resumeCursor.toString());
  return trailers;
}

/** `StreamService.StreamEvents`: a server stream of batches, through the guard and the stream's slots. */
function addStreamService(server: grpc.Server, endpoint: StreamEndpoint, options: GrpcServerOptions): void {
  const { chain, guard, metrics, logger, accessLog } = options;
  const method = endpoint.method;
  const name = method.name;
  const handler: grpc.handleServerStreamingCall<unknown, Buffer> = (call) => {
    const started = process.hrtime.bigint();
    let user: string | undefined;
    const cancelled = new AbortController();
    call.on("cancelled", () => cancelled.abort());
    const log = (status: string, extra: Record<string, unknown> = {}) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      accessLog.info(
        {
          chain,
          protocol: "grpc",
          method: `${method.parent.typeName}/${name}`,
          status,
          ms: Math.round(seconds * 100_000) / 100,
          ...(user ? { user } : {}),
          remote: call.getPeer(),
          ...extra,
        },
        "request",
      );
    };
    const fail = (error: ApiError, resumeCursor?: bigint) => {
      call.emit("error", {
        code: error.code,
        details: error.message,
        metadata: endTrailers(error, resumeCursor),
      });
    };
    const key = call.metadata.get("x-api-key")[0];
    guard
      .admit(key === undefined ? undefined : key.toString(), peerHost(call.getPeer()))
      .then(async (caller) => {
        user = caller.userName;
        if (call.request === UNDECODABLE) {
          throw new InvalidArgumentError("request", "not a valid encoding of the request message");
        }
        const fields = grpcRequestFields(method.input, call.request as Record<string, unknown>);
        return { caller, opened: await endpoint.open(fields, caller.keyId) };
      })
      .then(
        async ({ caller, opened }) => {
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          metrics.observeRequest({ chain, protocol: "grpc", operation: name, status: "OK" }, seconds);
          const gate = createFlowGate();
          const end = await opened.run(
            {
              send(page) {
                const bytes = Buffer.from(
                  toBinary(StreamEventsResponseSchema, streamBatchMessage(page.events, page.next, page.head)),
                );
                return { bytes: bytes.length, room: gate.pass((done) => call.write(bytes, done)) };
              },
              drained: () => gate.drained(),
            },
            caller,
            cancelled.signal,
          );
          const ending = streamEndError(end);
          if (ending === undefined) return log("CANCELLED", { end: end.reason });
          if (end.reason === "failed" && ending.error.code === GrpcCode.INTERNAL) {
            logger.error({ err: end.error, operation: name }, "stream failed");
          }
          fail(ending.error, ending.resumeCursor);
          log(GRPC_CODE_NAME[ending.error.code] ?? "UNKNOWN", { end: end.reason });
        },
        (error: unknown) => {
          const apiError = toApiError(error);
          if (
            apiError.code === GrpcCode.INTERNAL ||
            (apiError.code === GrpcCode.UNAVAILABLE && !(apiError instanceof BehindError))
          ) {
            logger.error({ err: apiError.cause ?? error, operation: name }, "request failed");
          }
          const status = GRPC_CODE_NAME[apiError.code] ?? "UNKNOWN";
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          metrics.observeRequest({ chain, protocol: "grpc", operation: name, status }, seconds);
          fail(apiError);
          log(status);
        },
      );
  };
  server.addService(
    {
      [method.localName]: {
        path: `/${StreamService.typeName}/${method.name}`,
        requestStream: false,
        responseStream: true,
        originalName: method.localName,
        requestSerialize: (message: unknown) => Buffer.from(toBinary(method.input, message as never)),
        requestDeserialize: (bytes: Buffer) => {
          try {
            return fromBinary(method.input, bytes);
          } catch {
            return UNDECODABLE;
          }
        },
        // The handler encodes each batch itself: what reaches grpc-js is bytes.
        responseSerialize: (bytes: Buffer) => bytes,
        responseDeserialize: (bytes: Buffer) => bytes,
      },
    },
    { [method.localName]: handler },
  );
}

/** Binds a server to `host:port` over TLS and returns the port bound (for port 0, the one chosen). */
export function bindGrpc(
  server: grpc.Server,
  host: string,
  port: number,
  tls: { cert: Buffer; key: Buffer },
): Promise<number> {
  const credentials = grpc.ServerCredentials.createSsl(
    null,
    [{ cert_chain: tls.cert, private_key: tls.key }],
    false,
  );
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, credentials, (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
}
