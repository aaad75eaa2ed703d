/**
 * Random and hostile values in every parameter of every operation, over real sockets: whatever a
 * client sends, the answer is a 2xx or a 4xx with a well-formed error body (over gRPC: OK or a
 * client error code), never a server fault.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import fc from "fast-check";
import { restRoutes } from "../../src/api/routes.ts";
import { API_SERVICES, createApiService } from "../../src/api/service.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({ days: 3, seed: "hostile" });
});
after(async () => f?.close());

// The routes as the server builds them, to know every path parameter and query field.
const routes = restRoutes(
  createApiService({
    sql: (() => {
      throw new Error("not used");
    }) as never,
    chainId: API_CHAIN_ID,
    version: {
      current: async () => ({ chain: "", metadata: "", spam: "", head: undefined }),
      reach: async () => ({ reached: true, version: { chain: "", metadata: "", spam: "", head: undefined } }),
      close() {},
    },
    cache: { get: (_key, read) => read() },
  }).values(),
);

const HOSTILE = [
  "",
  " ",
  "0",
  "-0",
  "00",
  "-1",
  "1e3",
  "0x",
  "0x1",
  "1.0",
  "NaN",
  "Infinity",
  "null",
  "undefined",
  "true",
  "[]",
  "{}",
  "%",
  "%00",
  "%zz",
  "\u0000",
  "\uFFFF",
  "\uD83D\uDE00",
  "../../etc/passwd",
  "' OR 1=1 --",
  "'; DROP TABLE sales; --",
  "$1",
  "$" + "{}",
  "__proto__",
  "constructor",
  "toString",
  "9".repeat(79),
  "1".repeat(400),
  "2147483648",
  "4294967296",
  "18446744073709551616",
  "-9223372036854775809",
  "METRIC_UNSPECIFIED",
  "SORT_DIRECTION_UNSPECIFIED",
  "TYPE_UNSPECIFIED",
  "2024-02-30T00:00:00Z",
  "2024-01-01T24:00:00Z",
  "9999-12-31T23:59:59.999999999-23:59",
  "0001-01-01T00:00:00+23:59",
  "2024-01-01T00:00:00.1234567890Z",
  `0x${"g".repeat(40)}`,
  `0X${"a".repeat(40)}`,
];

const VALID: Record<string, fc.Arbitrary<string>> = {
  contract_address: fc.constantFrom(`0x${"ab".repeat(20)}`, "0xE7F1725E7734CE288F8367E1BB143E90BB3F0512"),
  token_id: fc.constantFrom(
    "1",
    "0",
    "007",
    "115792089237316195423570985008687907853269984665640564039457584007913129639935",
  ),
  metric: fc.constantFrom(
    "METRIC_SALES_VOLUME",
    "METRIC_SALES_QUANTITY",
    "METRIC_MAX_PRICE",
    "METRIC_AVG_PRICE",
  ),
  duration: fc.constantFrom(
    "DURATION_1_HOUR",
    "DURATION_1_DAY",
    "DURATION_7_DAYS",
    "DURATION_30_DAYS",
    "DURATION_365_DAYS",
  ),
  group_by_period: fc.constantFrom(
    "GROUP_BY_PERIOD_15_MINUTES",
    "GROUP_BY_PERIOD_1_HOUR",
    "GROUP_BY_PERIOD_1_DAY",
  ),
  sort_direction: fc.constantFrom("SORT_DIRECTION_ASC", "SORT_DIRECTION_DESC"),
  contract_types: fc.constantFrom("TYPE_ERC721", "TYPE_ERC1155,TYPE_CRYPTOPUNKS", "TYPE_ERC20"),
  limit: fc.nat({ max: 600 }).map(String),
  offset: fc.nat({ max: 5000 }).map(String),
  timestamp_lt: fc
    .date({ min: new Date("0002-01-01"), max: new Date("9999-01-01"), noInvalidDate: true })
    .map((d) => d.toISOString()),
  block_timestamp_gt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
};

function value(field: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: VALID[field] ?? fc.string() },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE) },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  );
}

const SNAKE_FIELD = /^[a-z][a-z0-9]*(_[a-z0-9]+)*: ./;

test("REST: every operation, random and hostile values in every parameter: 2xx or 4xx with a well-formed error", async () => {
  const request = fc.constantFrom(...routes).chain((route) =>
    fc.record({
      route: fc.constant(route),
      path: fc.tuple(...route.pathFields.map((name) => value(name))),
      query: fc.array(
        route.queryFields.size === 0
          ? fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }))
          : fc.oneof(
              fc
                .constantFrom(...route.queryFields.keys())
                .chain((name) =>
                  fc.tuple(fc.constant(name), value(route.queryFields.get(name)?.name ?? name)),
                ),
              fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })),
            ),
        { maxLength: 5 },
      ),
      rawPath: fc.boolean(),
    }),
  );
  await fc.assert(
    fc.asyncProperty(request, async ({ route, path, query, rawPath }) => {
      let i = 0;
      // Values are percent-encoded as a client library would; some are sent raw, as a hand-written URL might.
      const url = route.template.replace(/\{[a-z_]+\}/g, () => {
        const v = path[i++] ?? "";
        return rawPath ? v.replace(/[/?#]/g, encodeURIComponent) : encodeURIComponent(v);
      });
      const qs = query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
      let response: Response;
      try {
        response = await fetch(`${f.restUrl}${url}${qs ? `?${qs}` : ""}`, {
          headers: { "x-api-key": f.key },
        });
      } catch (error) {
        // A URL the client itself refuses to send never reached the server.
        if (error instanceof TypeError && /URL|url/.test(String(error.message))) return;
        throw error;
      }
      const text = await response.text();
      assert.ok(
        response.status >= 200 && response.status < 500,
        `${response.status} for ${url}?${qs}: ${text}`,
      );
      if (response.status >= 400) {
        const body = JSON.parse(text) as { code: unknown; message: unknown; details: unknown };
        assert.equal(typeof body.code, "number");
        assert.equal(typeof body.message, "string");
        assert.deepEqual(body.details, []);
        if (response.status === 400) assert.match(body.message as string, SNAKE_FIELD, `${url}?${qs}`);
      } else {
        assert.equal(typeof JSON.parse(text), "object");
      }
    }),
    { numRuns: 400, interruptAfterTimeLimit: 120_000 },
  );
});

test("gRPC: random field values and undecodable bytes: OK or a client error, never a server fault", async () => {
  const methods = API_SERVICES.flatMap((s) => s.methods.map((m) => ({ service: s.typeName, method: m })));
  const client = new grpc.Client(
    `localhost:${f.grpcAddress.split(":")[1]}`,
    grpc.credentials.createSsl(f.tls.cert),
  );
  const call = (path: string, bytes: Buffer) =>
    new Promise<grpc.ServiceError | null>((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set("x-api-key", f.key);
      client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        bytes,
        metadata,
        (error) => resolve(error),
      );
    });
  const serverFaults = new Set([
    grpc.status.INTERNAL,
    grpc.status.UNKNOWN,
    grpc.status.UNAVAILABLE,
    grpc.status.DATA_LOSS,
    grpc.status.UNIMPLEMENTED,
  ]);
  const { create, toBinary } = await import("@bufbuild/protobuf");
  const fieldValue = (kind: string): fc.Arbitrary<string | number> =>
    kind === "string"
      ? value("token_id")
      : kind === "enum"
        ? fc.integer({ min: -3, max: 9 })
        : fc.nat({ max: 2 ** 32 - 1 });
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...methods).chain(({ service, method }) =>
        fc.record({
          path: fc.constant(`/${service}/${method.name}`),
          bytes: fc.oneof(
            fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
            fc
              .tuple(
                ...method.input.fields.map((field) => {
                  const kind =
                    field.fieldKind === "list"
                      ? "enum"
                      : field.fieldKind === "enum"
                        ? "enum"
                        : field.scalar === 9
                          ? "string"
                          : "int";
                  return fc.option(fieldValue(kind), { nil: undefined }).map((v) => [field, v] as const);
                }),
              )
              .map((pairs) => {
                const init: Record<string, unknown> = {};
                for (const [field, v] of pairs) {
                  if (v === undefined) continue;
                  if (field.fieldKind === "list") init[field.localName] = [v];
                  else if (field.fieldKind === "enum") init[field.localName] = v;
                  else if (field.fieldKind === "scalar" && field.scalar === 9)
                    init[field.localName] = String(v);
                  else init[field.localName] = Number(v);
                }
                try {
                  return Buffer.from(toBinary(method.input, create(method.input, init as never)));
                } catch {
                  return Buffer.alloc(0);
                }
              }),
          ),
        }),
      ),
      async ({ path, bytes }) => {
        const error = await call(path, bytes);
        if (error !== null)
          assert.ok(!serverFaults.has(error.code), `${path}: ${error.code} ${error.details}`);
      },
    ),
    { numRuns: 300, interruptAfterTimeLimit: 90_000 },
  );
  client.close();
});
