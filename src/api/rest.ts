/**
 * The REST adapter: a fastify server whose API routes are built from the `.proto` http rules,
 * each calling its operation through the guard. Besides them, without a key: the dashboard at `/`,
 * `/healthz`, `/readyz`, the OpenAPI document and the `.proto` files it was generated from.
 */
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import type { Logger } from "../core/logger.ts";
import type { ProcessMetrics } from "../metrics/process-metrics.ts";
import type { IndexedBlock } from "../store/read/version.ts";
import { blockTags, MIN_BLOCK_QUERY, parseMinBlock } from "./block-tags.ts";
import { addDashboardRoutes } from "./dashboard.ts";
import {
  type ApiError,
  BehindError,
  GRPC_CODE_NAME,
  GrpcCode,
  httpErrorResponse,
  InvalidArgumentError,
  NotFoundError,
  toApiError,
  UnavailableError,
} from "./errors.ts";
import { createFlowGate } from "./flow-gate.ts";
import type { Guard } from "./guard.ts";
import { DamagedImageError, type ImageServer, ImagesBusyError } from "./images.ts";
import { fillJsonLinks, LINK_VARY, LINKED_OPERATIONS, requestLinkBase } from "./links.ts";
import type { ChainReadiness } from "./readiness.ts";
import { type RestRoute, restRequestFields, restRoutes } from "./routes.ts";
import type { CallContext, Operation } from "./service.ts";
import { sseEnd, sseMessages } from "./sse.ts";
import { type StreamEndpoint, streamEndError } from "./stream-endpoint.ts";

/** The `.proto` source and the OpenAPI document, as published with the project. */
export const PROTO_ROOT = fileURLToPath(new URL("../../proto", import.meta.url));
export const OPENAPI_PATH = fileURLToPath(new URL("../../openapi/mintlens.v1beta2.json", import.meta.url));

export interface RestServerOptions {
  chain: string;
  operations: ReadonlyMap<string, Operation>;
  guard: Guard;
  metrics: ProcessMetrics;
  logger: Logger;
  /** Where the one line per request goes. */
  accessLog: Logger;
  /** The chain's readiness, read at most once a second: `/readyz` is 200 only when it is ready. */
  readiness: () => Promise<ChainReadiness>;
  /** The chain's readiness as last read, without waiting: the height and lag headers of the API's answers. */
  freshness: () => ChainReadiness | undefined;
  /** The cached images, served at `/images/<sha256>`; none when absent. */
  images?: ImageServer | undefined;
  /** The configured base of every link handed out; unset: the request's own host. */
  publicUrl?: string | undefined;
  /** The live event stream, as Server-Sent Events; not served when absent. */
  stream?: StreamEndpoint | undefined;
  /** How long a stream's last message may take to reach a consumer that stopped reading, in ms, before its connection is closed (default 5000). */
  streamCloseGraceMs?: number;
}

/** How long a stream's last message may wait for a consumer that reads nothing, by default, in ms. */
const STREAM_CLOSE_GRACE_MS = 5_000;

const JSON_TYPE = "application/json; charset=utf-8";
const SHA256 = /^[0-9a-f]{64}$/;
/** Seconds a client refused for a busy image store is told to wait. */
const IMAGES_RETRY_AFTER_SECONDS = 1;

/** Whether an `If-None-Match` header names the image's entity tag (weak or strong, alone or in a list). */
function matchesTag(header: string | undefined, sha256: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === `"${sha256}"`);
}

/** Tags an answer with the block its data holds, when one is known. */
function tagBlock(reply: FastifyReply, block: IndexedBlock | undefined): void {
  if (block === undefined) return;
  for (const [name, value] of blockTags(block)) reply.header(name, value);
}

/** The `minBlock` values of a query, under either of its names. */
function minBlockValues(
  query: Readonly<Record<string, string | string[] | undefined>>,
): string[] | undefined {
  const values = MIN_BLOCK_QUERY.flatMap((name) => query[name] ?? []);
  return values.length === 0 ? undefined : values;
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const response = httpErrorResponse(error);
  return reply
    .code(response.status)
    .headers(response.headers)
    .type(JSON_TYPE)
    .send(JSON.stringify(response.body));
}

/** The path field whose segment of `url` cannot be percent-decoded, found by the route templates; else `request`. */
function undecodableField(url: string, routes: readonly RestRoute[]): string {
  const segments = (url.split("?")[0] ?? "").split("/");
  const bad = segments.findIndex((segment) => {
    try {
      decodeURIComponent(segment);
      return false;
    } catch {
      return true;
    }
  });
  for (const route of routes) {
    const template = route.template.split("/");
    if (template.length !== segments.length) continue;
    const fits = template.every((part, i) => part.startsWith("{") || part === segments[i]);
    const variable = /^\{([a-z_0-9]+)\}$/.exec(template[bad] ?? "");
    if (fits && variable?.[1]) return variable[1];
  }
  return "request";
}

async function protoFiles(): Promise<string[]> {
  const entries = await readdir(PROTO_ROOT, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".proto"))
    .map((e) => relative(PROTO_ROOT, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

export async function createRestServer(options: RestServerOptions): Promise<FastifyInstance> {
  const { chain, guard, metrics, logger, accessLog } = options;
  const routes = restRoutes(options.operations.values());
  const app = Fastify({
    // One access line per request is written below, without headers (keys never reach the logs).
    logger: false,
    // Long enough for a token id with its leading zeros; a longer value is answered as malformed.
    routerOptions: { maxParamLength: 1_000, ignoreTrailingSlash: true },
    return503OnClosing: true,
    // A path the router cannot decode (`%zz`) is answered like any malformed value, naming the field.
    frameworkErrors: (error, request, reply) => {
      if (error.code === "FST_ERR_BAD_URL") {
        return sendError(
          reply,
          new InvalidArgumentError(undecodableField(request.url, routes), "not valid percent-encoding"),
        );
      }
      return sendError(reply, new InvalidArgumentError("request", error.message.toLowerCase()));
    },
  });

  app.decorateRequest("user", undefined);
  const openapi = readFileSync(OPENAPI_PATH, "utf8");
  const published = await protoFiles();

  app.addHook("onResponse", async (request, reply) => {
    const operation = (request.routeOptions.config as { operation?: string } | undefined)?.operation;
    accessLog.info(
      {
        chain,
        protocol: "rest",
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        ...(operation ? { operation } : {}),
        ...(request.user ? { user: request.user } : {}),
        remote: request.ip,
      },
      "request",
    );
  });

  // The API's answers say how fresh their chain's data is, and get the base of their links, as
  // they are sent: the cached bytes stay the same for every client.
  app.addHook("onSend", async (request, reply, payload) => {
    const operation = (request.routeOptions.config as { operation?: string } | undefined)?.operation;
    if (operation === undefined) return payload;
    const fresh = options.freshness();
    if (fresh?.indexedBlock !== undefined)
      reply.header("x-mintlens-indexed-block", String(fresh.indexedBlock));
    if (fresh?.lagBlocks !== undefined) reply.header("x-mintlens-lag-blocks", String(fresh.lagBlocks));
    if (!LINKED_OPERATIONS.has(operation) || !Buffer.isBuffer(payload)) return payload;
    if (options.publicUrl !== undefined) return fillJsonLinks(payload, options.publicUrl);
    reply.header("vary", LINK_VARY);
    return fillJsonLinks(payload, requestLinkBase(request.headers));
  });

  app.setNotFoundHandler((_request, reply) => sendError(reply, new NotFoundError("no such path")));
  app.setErrorHandler((error, request, reply) => {
    // The HTTP layer's own refusals (a malformed URL, a bad header) are the client's mistakes.
    const { statusCode: status, message } = error as { statusCode?: number; message?: string };
    if (status !== undefined && status >= 400 && status < 500) {
      return sendError(reply, new InvalidArgumentError("request", String(message).toLowerCase()));
    }
    const apiError = toApiError(error);
    if (apiError.code === GrpcCode.INTERNAL || apiError.code === GrpcCode.UNAVAILABLE) {
      logger.error({ err: apiError.cause ?? (error as unknown), url: request.url }, "request failed");
    }
    return sendError(reply, apiError);
  });

  addDashboardRoutes(app, (reply) => sendError(reply, new NotFoundError("no such file")), {
    publicUrl: options.publicUrl,
  });
  app.get("/healthz", (_request, reply) => {
    reply.type(JSON_TYPE).send('{"status":"SERVING"}');
  });
  app.get("/readyz", async (_request, reply) => {
    const { ready, ...figures } = await options.readiness();
    reply
      .code(ready ? 200 : 503)
      .header("cache-control", "no-store")
      .type(JSON_TYPE)
      .send(JSON.stringify({ status: ready ? "SERVING" : "NOT_SERVING", ...figures }));
  });
  app.get("/openapi.json", (_request, reply) => {
    reply.type(JSON_TYPE).send(openapi);
  });
  app.get("/proto", (_request, reply) => {
    reply.type(JSON_TYPE).send(JSON.stringify({ files: published }));
  });
  app.get("/proto/*", async (request, reply) => {
    const file = (request.params as { "*": string })["*"];
    if (!published.includes(file)) return sendError(reply, new NotFoundError("no such file"));
    return reply.type("text/plain; charset=utf-8").send(await readFile(join(PROTO_ROOT, file), "utf8"));
  });

  // Images are public, like the pages that show them: an <img> cannot send a key. A cached image
  // never changes (its name is its hash): a client that has it (`If-None-Match` with its tag) is
  // answered 304 without reading the store. An SVG is served so that it cannot run script. A
  // store that fails throws, and the error handler answers 503 (unreachable) or 500 (refused):
  // a 404 would tell a client, and any cache in between, that the image is gone.
  app.get("/images/:sha256", async (request, reply) => {
    const { sha256 } = request.params as { sha256: string };
    if (!SHA256.test(sha256) || options.images === undefined) {
      return sendError(reply, new NotFoundError("no such image"));
    }
    reply.headers({
      "cache-control": "public, max-age=31536000, immutable",
      etag: `"${sha256}"`,
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
    });
    if (matchesTag(request.headers["if-none-match"], sha256)) return reply.code(304).send();
    let image: Awaited<ReturnType<ImageServer["get"]>>;
    try {
      image = await options.images.get(sha256);
    } catch (error) {
      if (error instanceof ImagesBusyError) {
        reply.header("retry-after", String(IMAGES_RETRY_AFTER_SECONDS));
        return sendError(reply, new UnavailableError({ message: error.message }));
      }
      if (error instanceof DamagedImageError) {
        logger.error({ err: error, sha256 }, "a stored image does not hash to its name: its file is damaged");
      }
      throw error;
    }
    if (image === undefined) return sendError(reply, new NotFoundError("no such image"));
    reply.header("content-type", image.mimeType);
    if (image.kind === "bytes") return reply.send(image.bytes);
    if (image.size !== undefined) reply.header("content-length", String(image.size));
    const { stream } = image;
    // A client gone mid-image frees the store's read at once.
    reply.raw.once("close", () => stream.destroy());
    return reply.send(stream);
  });

  for (const route of routes) {
    const name = route.operation.method.name;
    app.get(route.routerPath, { config: { operation: name } }, async (request, reply) => {
      const started = process.hrtime.bigint();
      let status = "OK";
      const context: CallContext = {};
      try {
        const key = request.headers["x-api-key"];
        const caller = await guard.admit(typeof key === "string" ? key : key?.[0], request.ip);
        request.user = caller.userName;
        const query = request.query as Record<string, string | string[] | undefined>;
        const fields = restRequestFields(route, request.params as Record<string, string>, query);
        context.minBlock = parseMinBlock(minBlockValues(query));
        const answer = await route.operation.run(fields, context);
        const json = answer.json();
        caller.charge(json.length);
        tagBlock(reply, context.block);
        return reply.type(JSON_TYPE).send(json);
      } catch (error) {
        const apiError = toApiError(error);
        status = GRPC_CODE_NAME[apiError.code] ?? "UNKNOWN";
        if (
          apiError.code === GrpcCode.INTERNAL ||
          (apiError.code === GrpcCode.UNAVAILABLE && !(apiError instanceof BehindError))
        ) {
          logger.error({ err: apiError.cause ?? error, operation: name }, "request failed");
        }
        tagBlock(reply, context.block);
        return sendError(reply, apiError);
      } finally {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        metrics.observeRequest({ chain, protocol: "rest", operation: name, status }, seconds);
      }
    });
  }
  if (options.stream !== undefined) addEventStream(app, options.stream, options);
  return app;
}

/**
 * `GET /v1beta2/stream/events` as Server-Sent Events. The request is checked and its first page read
 * before anything is sent, so its errors are the API's ordinary JSON errors; then the response is
 * the stream, unbuffered, until the client leaves or the stream ends with an `end` message.
 */
function addEventStream(app: FastifyInstance, endpoint: StreamEndpoint, options: RestServerOptions): void {
  const { chain, guard, metrics, logger, accessLog } = options;
  const name = endpoint.method.name;
  const [route] = restRoutes([
    {
      method: endpoint.method,
      run: () => Promise.reject(new Error(`${name} is a stream`)),
    },
  ]);
  if (route === undefined) throw new Error(`${name} has no route`);
  const grace = options.streamCloseGraceMs ?? STREAM_CLOSE_GRACE_MS;
  app.get(route.routerPath, { config: { operation: name } }, async (request, reply) => {
    const started = process.hrtime.bigint();
    let opened: Awaited<ReturnType<StreamEndpoint["open"]>>;
    let caller: Awaited<ReturnType<Guard["admit"]>>;
    try {
      const key = request.headers["x-api-key"];
      caller = await guard.admit(typeof key === "string" ? key : key?.[0], request.ip);
      request.user = caller.userName;
      const query = request.query as Record<string, string | string[] | undefined>;
      const fields = { ...restRequestFields(route, {}, query) };
      // A reconnecting EventSource sends the URL it was opened with and the last id it got: the id
      // is the newer place, and wins.
      const lastEventId = request.headers["last-event-id"];
      if (typeof lastEventId === "string" && lastEventId.trim() !== "") fields.after = lastEventId.trim();
      opened = await endpoint.open(fields, caller.keyId);
    } catch (error) {
      const apiError = toApiError(error);
      const status = GRPC_CODE_NAME[apiError.code] ?? "UNKNOWN";
      if (
        apiError.code === GrpcCode.INTERNAL ||
        (apiError.code === GrpcCode.UNAVAILABLE && !(apiError instanceof BehindError))
      ) {
        logger.error({ err: apiError.cause ?? error, operation: name }, "request failed");
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observeRequest({ chain, protocol: "rest", operation: name, status }, seconds);
      return sendError(reply, apiError);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.observeRequest({ chain, protocol: "rest", operation: name, status: "OK" }, seconds);
    reply.hijack();
    const res = reply.raw;
    const fresh = options.freshness();
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
      connection: "keep-alive",
      ...(fresh?.indexedBlock === undefined
        ? {}
        : { "x-mintlens-indexed-block": String(fresh.indexedBlock) }),
    });
    res.flushHeaders();
    const cancelled = new AbortController();
    res.once("close", () => cancelled.abort());
    const gate = createFlowGate();
    const end = await opened.run(
      {
        send(page) {
          const text = sseMessages(page);
          return { bytes: Buffer.byteLength(text), room: gate.pass((done) => res.write(text, done)) };
        },
        drained: () => gate.drained(),
      },
      caller,
      cancelled.signal,
    );
    const ending = streamEndError(end);
    let status = "CANCELLED";
    if (ending !== undefined) {
      status = GRPC_CODE_NAME[ending.error.code] ?? "UNKNOWN";
      if (end.reason === "failed" && ending.error.code === GrpcCode.INTERNAL) {
        logger.error({ err: end.error, operation: name }, "stream failed");
      }
      res.end(
        sseEnd({
          reason: end.reason === "failed" ? "error" : end.reason,
          resumeCursor: ending.resumeCursor,
          ...(end.reason === "failed" ? { code: ending.error.code } : {}),
          message: ending.error.message,
        }),
      );
      // A consumer that reads nothing would hold the connection (and the server's close) forever.
      const timer = setTimeout(() => res.destroy(), grace);
      timer.unref();
      res.once("close", () => clearTimeout(timer));
    }
    accessLog.info(
      {
        chain,
        protocol: "rest",
        method: request.method,
        url: request.url,
        status,
        end: end.reason,
        ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        operation: name,
        user: caller.userName,
        remote: request.ip,
      },
      "request",
    );
  });
}

declare module "fastify" {
  interface FastifyRequest {
    /** The user whose key the request carried, for the access log. */
    user?: string;
  }
}
