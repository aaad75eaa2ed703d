/**
 * A protoc plugin that writes the OpenAPI 3.1 document of the REST API from the protobuf source:
 * `buf generate` runs it (buf.gen.yaml) beside protoc-gen-es, so the document and src/gen/ come
 * from the same descriptors. Never edit openapi/ by hand: change proto/ and run `npm run gen:proto`.
 *
 * It reads the services of the files to generate, their `google.api.http` rules, and the comments
 * of every service, method, message, field, enum and enum value (they become the summaries and
 * descriptions), through protobuf-es reflection. Schemas describe the canonical proto3 JSON form
 * that is the REST wire format: lowerCamelCase names, 64-bit integers as decimal strings, enums by
 * name, every field present (zero values emitted), a missing sub-object as null.
 */
import {
  create,
  createFileRegistry,
  type DescEnum,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
  fromBinary,
  getOption,
  hasOption,
  type JsonObject,
  type JsonValue,
  ScalarType,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import {
  CodeGeneratorRequestSchema,
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
  isWrapperDesc,
} from "@bufbuild/protobuf/wkt";
import { getComments } from "@bufbuild/protoplugin";

/**
 * Operations that answer 404 (an NFT that was never minted, a contract the indexer never saw);
 * every other one answers 200 for any valid input.
 */
const NOT_FOUND_OPERATIONS = [
  "mintlens.v1beta2.FoundationalService.GetNftDetails",
  "mintlens.v1beta2.FoundationalService.GetNftRawMetadata",
  "mintlens.v1beta2.FoundationalService.ListTokenOwners",
  "mintlens.v1beta2.CollectionsService.GetCollectionMetadata",
  "mintlens.v1beta2.CollectionsService.GetCollectionTotals",
  "mintlens.v1beta2.CollectionsService.ListStringTraits",
  "mintlens.v1beta2.CollectionsService.ListNumericTraits",
  "mintlens.v1beta2.MarketplacesService.GetFloorPrice",
];

/** The error answers: the JSON form of google.rpc.Status, the gRPC code mapped to an HTTP status. */
const ERRORS: { status: string; name: string; code: number; description: string }[] = [
  {
    status: "400",
    name: "InvalidArgument",
    code: 3,
    description:
      "INVALID_ARGUMENT: a malformed address, token id, enum value (an `*_UNSPECIFIED` value included), timestamp, limit or offset, or a limit above its maximum.",
  },
  {
    status: "401",
    name: "Unauthenticated",
    code: 16,
    description: "UNAUTHENTICATED: no `X-API-Key` header, or an unknown key.",
  },
  {
    status: "404",
    name: "NotFound",
    code: 5,
    description: "NOT_FOUND: the NFT was never minted, or the indexer never saw the collection's contract.",
  },
  {
    status: "429",
    name: "ResourceExhausted",
    code: 8,
    description: "RESOURCE_EXHAUSTED: the key's rate limit is reached; retry after `Retry-After` seconds.",
  },
  {
    status: "500",
    name: "Internal",
    code: 13,
    description: "INTERNAL: the service failed; no internal detail is given.",
  },
  {
    status: "503",
    name: "Unavailable",
    code: 14,
    description:
      "UNAVAILABLE: the service cannot answer now (its database is unreachable, a statement ran out of time, or its data is still behind the request's `minBlock`); retry after `Retry-After` seconds when given.",
  },
];

type Schema = Record<string, JsonValue>;

/** The headers naming the block an answer's data reflects (src/api/block-tags.ts). */
const BLOCK_HEADERS: Record<string, Schema> = {
  "Mintlens-Block": {
    description:
      "The number of the newest indexed block of the data this answer was computed from: the answer reflects at least this block.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  "Mintlens-Block-Hash": {
    description: "That block's hash.",
    schema: { type: "string", pattern: "^0x[0-9a-f]{64}$" },
  },
  "Mintlens-Block-Time": {
    description: "That block's time, RFC 3339 in UTC, to the second.",
    schema: { type: "string", format: "date-time" },
  },
};
const BLOCK_HEADER_REFS: Schema = Object.fromEntries(
  Object.keys(BLOCK_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);

/** A comment as text: the leading comment, each line without the one space that follows `//`. */
function describe(desc: Parameters<typeof getComments>[0]): string {
  const text = getComments(desc).leading ?? "";
  return text
    .split("\n")
    .map((line) => line.replace(/^ /, "").trimEnd())
    .join("\n")
    .trim();
}

/** A method's full name, `package.Service.Method`. */
function fullName(method: DescMethod): string {
  return `${method.parent.typeName}.${method.name}`;
}

/** The first sentence of a description, as an operation's summary. */
function summaryOf(description: string): string {
  const flat = description.replace(/\s+/g, " ");
  const end = flat.search(/\.(\s|$)/);
  return end === -1 ? flat : flat.slice(0, end);
}

class DocumentBuilder {
  readonly schemas = new Map<string, Schema>();
  private readonly names = new Map<string, string>();

  /** The component name of a message or enum: its name within the package, unique across the document. */
  private nameOf(desc: DescMessage | DescEnum): string {
    const name = desc.typeName.slice(desc.file.proto.package.length + 1);
    const other = this.names.get(name);
    if (other !== undefined && other !== desc.typeName) {
      throw new Error(`${desc.typeName} and ${other} would share the schema name ${name}`);
    }
    this.names.set(name, desc.typeName);
    return name;
  }

  enumRef(desc: DescEnum): Schema {
    const name = this.nameOf(desc);
    if (!this.schemas.has(name)) {
      const values = desc.values.map((v) => `- \`${v.name}\`: ${describe(v).replace(/\s+/g, " ")}`);
      this.schemas.set(name, {
        type: "string",
        description: `${describe(desc)}\n\n${values.join("\n")}`,
        enum: desc.values.map((v) => v.name),
      });
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  messageRef(desc: DescMessage): Schema {
    const name = this.nameOf(desc);
    if (!this.schemas.has(name)) {
      // Reserved before the fields are walked, so that a recursive message ends.
      this.schemas.set(name, {});
      const properties: Record<string, Schema> = {};
      const required: string[] = [];
      for (const field of desc.fields) {
        properties[field.jsonName] = { ...this.fieldSchema(field), description: describe(field) };
        // Fields with implicit presence are always emitted; a proto3 `optional` field only when set.
        if (!(field.fieldKind === "scalar" && field.proto.proto3Optional)) required.push(field.jsonName);
      }
      this.schemas.set(name, {
        type: "object",
        description: describe(desc),
        properties,
        required,
        additionalProperties: false,
      });
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  fieldSchema(field: DescField): Schema {
    switch (field.fieldKind) {
      case "scalar":
        return scalarSchema(field.scalar);
      case "enum":
        return this.enumRef(field.enum);
      case "message":
        // A wrapper is its value (proto3 JSON), and null when not set, like a sub-object.
        if (isWrapperDesc(field.message)) {
          const value = field.message.fields[0];
          if (value?.fieldKind !== "scalar") throw new Error(`${field.message.typeName} wraps no scalar`);
          return { oneOf: [scalarSchema(value.scalar), { type: "null" }] };
        }
        return { oneOf: [this.messageRef(field.message), { type: "null" }] };
      case "list":
        return {
          type: "array",
          items:
            field.listKind === "scalar"
              ? scalarSchema(field.scalar)
              : field.listKind === "enum"
                ? this.enumRef(field.enum)
                : this.messageRef(field.message),
        };
      case "map":
        return {
          type: "object",
          additionalProperties:
            field.mapKind === "scalar"
              ? scalarSchema(field.scalar)
              : field.mapKind === "enum"
                ? this.enumRef(field.enum)
                : this.messageRef(field.message),
        };
    }
  }
}

/** The proto3 JSON form of a scalar: 64-bit integers are decimal strings. */
function scalarSchema(scalar: ScalarType): Schema {
  switch (scalar) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", minimum: 0, maximum: 4294967295 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "string", format: "int64", pattern: "^-?[0-9]+$" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", format: "uint64", pattern: "^[0-9]+$" };
  }
}

/**
 * The `google.api.http` GET rule of a method and its additional bindings: their path templates,
 * the rule's own first.
 */
function getRules(method: DescMethod, registry: ReturnType<typeof createFileRegistry>): string[] {
  const http = registry.getExtension("google.api.http");
  if (http === undefined || http.fieldKind !== "message")
    throw new Error("google.api.http is not in the request");
  if (!hasOption(method, http)) throw new Error(`${method.toString()} has no google.api.http rule`);
  const rule = toJson(http.message, getOption(method, http) as never) as JsonObject;
  const bindings = [rule, ...((rule.additionalBindings as JsonObject[] | undefined) ?? [])];
  return bindings.map((binding) => {
    const keys = Object.keys(binding).filter((k) => k !== "additionalBindings");
    if (keys.length !== 1 || typeof binding.get !== "string") {
      throw new Error(`${method.toString()}: only GET rules are supported, got ${JSON.stringify(rule)}`);
    }
    return binding.get;
  });
}

function operation(
  builder: DocumentBuilder,
  service: DescService,
  method: DescMethod,
  template: string,
): Schema {
  const pathFields = [...template.matchAll(/\{([a-z0-9_]+)\}/g)].map((m) => m[1] as string);
  const parameters: Schema[] = [];
  for (const name of pathFields) {
    const field = method.input.fields.find((f) => f.name === name);
    if (field === undefined)
      throw new Error(`${method.toString()}: path parameter ${name} is no field of ${method.input.typeName}`);
    parameters.push({
      name,
      in: "path",
      required: true,
      description: describe(field),
      schema: parameterSchema(field),
    });
  }
  for (const field of method.input.fields) {
    if (pathFields.includes(field.name)) continue;
    const parameter: Schema = {
      name: field.jsonName,
      in: "query",
      required: false,
      description: describe(field),
      schema: parameterSchema(field),
    };
    // A repeated parameter is sent as repeated keys: `contractTypes=TYPE_ERC721&contractTypes=TYPE_ERC1155`.
    if (field.fieldKind === "list") Object.assign(parameter, { style: "form", explode: true });
    parameters.push(parameter);
  }
  const description = describe(method);
  if (method.methodKind === "server_streaming") return streamOperation(builder, service, method, parameters);
  // Not a field of any request: every operation takes it, and none sees it.
  parameters.push({ $ref: "#/components/parameters/MinBlock" });
  const responses: Record<string, Schema> = {
    "200": {
      description: describe(method.output),
      headers: BLOCK_HEADER_REFS,
      content: { "application/json": { schema: builder.messageRef(method.output) } },
    },
  };
  for (const error of ERRORS) {
    if (error.status === "404" && !NOT_FOUND_OPERATIONS.includes(fullName(method))) continue;
    responses[error.status] = { $ref: `#/components/responses/${error.name}` };
  }
  return {
    operationId: method.name,
    tags: [service.name],
    summary: summaryOf(description),
    description,
    parameters,
    responses,
  };
}

/** How a server stream is framed over REST: Server-Sent Events (src/api/sse.ts). */
const SSE_FRAMING = [
  "Server-Sent Events (`text/event-stream`), one message per event, each field on its own line and a blank line after:",
  "",
  "- `id: <cursor>`, `event: transfer | sale | ownership | retraction`, `data: <the StreamEvent's proto3 JSON, on one line>`;",
  '- `event: heartbeat` when nothing was sent for 15 s (and as the first message of a stream with nothing to send): `id: <nextCursor>`, `data: {"nextCursor":"…","headBlock":"…"}`, so that `Last-Event-ID` moves past what the filters left out;',
  '- `event: end` before the server ends the stream: `id: <resumeCursor>`, `data: {"reason":"stalled | shutdown | error","resumeCursor":"…","message":"…"}` (`code`, the gRPC code, too for `error`).',
  "",
  "Resume with the `Last-Event-ID` header (it wins over the `after` parameter) or `after`. The response is not compressed nor buffered (`Cache-Control: no-store`, `X-Accel-Buffering: no`). Errors before the stream starts are ordinary JSON errors: 400 for a malformed value, and for a cursor that cannot be read after (FAILED_PRECONDITION, code 9: pruned by retention, its message and the `Mintlens-Oldest-Cursor` header naming the oldest cursor to resume from; or past the newest event); 429 over the key's or the server's open streams.",
].join("\n");

/** A server-streaming method over REST: a GET answering Server-Sent Events. */
function streamOperation(
  builder: DocumentBuilder,
  service: DescService,
  method: DescMethod,
  parameters: Schema[],
): Schema {
  const description = describe(method);
  const events = method.output.fields.find((f) => f.fieldKind === "list" && f.listKind === "message");
  if (events?.fieldKind !== "list" || events.listKind !== "message") {
    throw new Error(`${method.toString()}: a stream's message has no list of events`);
  }
  parameters.push({
    name: "Last-Event-ID",
    in: "header",
    required: false,
    description: "The `id` of the last message received: the stream resumes after it (instead of `after`).",
    schema: { type: "string", pattern: "^[0-9]+$" },
  });
  const responses: Record<string, Schema> = {
    "200": {
      description: SSE_FRAMING,
      content: {
        "text/event-stream": {
          schema: { type: "string" },
          "x-event-data": builder.messageRef(events.message),
        },
      },
    },
  };
  for (const error of ERRORS) {
    if (error.status === "404") continue;
    responses[error.status] = { $ref: `#/components/responses/${error.name}` };
  }
  return {
    operationId: method.name,
    tags: [service.name],
    summary: summaryOf(description),
    description,
    parameters,
    responses,
  };
}

/** A parameter's schema, inline: enum parameters list the values accepted (never `*_UNSPECIFIED`). */
function parameterSchema(field: DescField): Schema {
  const enumSchema = (desc: DescEnum): Schema => ({
    type: "string",
    enum: desc.values.filter((v) => v.number !== 0).map((v) => v.name),
  });
  switch (field.fieldKind) {
    case "scalar":
      return scalarSchema(field.scalar);
    case "enum":
      return enumSchema(field.enum);
    case "list":
      if (field.listKind === "enum") return { type: "array", items: enumSchema(field.enum) };
      if (field.listKind === "scalar") return { type: "array", items: scalarSchema(field.scalar) };
      break;
    default:
      break;
  }
  throw new Error(`${field.toString()}: a ${field.fieldKind} cannot be a request parameter`);
}

function buildDocument(registry: ReturnType<typeof createFileRegistry>, services: DescService[]): JsonObject {
  const builder = new DocumentBuilder();
  const paths: Record<string, Schema> = {};
  for (const service of services) {
    for (const method of service.methods) {
      getRules(method, registry).forEach((template, i) => {
        if (paths[template] !== undefined) throw new Error(`${template} is bound to two methods`);
        const described = operation(builder, service, method, template);
        // Operation ids are unique in a document: another path of the same method is named by its place.
        if (i > 0) described.operationId = `${method.name}${i + 1}`;
        paths[template] = { get: described };
      });
    }
  }
  for (const name of NOT_FOUND_OPERATIONS) {
    if (!services.some((s) => s.methods.some((m) => fullName(m) === name)))
      throw new Error(`${name} is no method`);
  }
  const schemas: Record<string, Schema> = Object.fromEntries(
    [...builder.schemas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  schemas.Status = {
    type: "object",
    description: "An error: the JSON form of google.rpc.Status. gRPC answers the same code and message.",
    properties: {
      code: { type: "integer", format: "int32", description: "The gRPC status code." },
      message: {
        type: "string",
        description: "`<field>: <what is wrong>`, the field named in snake_case, or what failed.",
      },
      details: { type: "array", items: { type: "object" }, description: "Always empty." },
    },
    required: ["code", "message", "details"],
    additionalProperties: false,
  };
  const responses: Record<string, Schema> = {};
  for (const error of ERRORS) {
    const response: Schema = {
      description: error.description,
      content: {
        "application/json": {
          schema: { $ref: "#/components/schemas/Status" },
          example: { code: error.code, message: exampleMessage(error.code), details: [] },
        },
      },
    };
    if (error.status === "404" || error.status === "503") response.headers = { ...BLOCK_HEADER_REFS };
    if (error.status === "429" || error.status === "503") {
      response.headers = {
        ...(response.headers as Schema | undefined),
        "Retry-After": {
          description: "Seconds to wait before the next request.",
          schema: { type: "integer" },
        },
      };
    }
    responses[error.name] = response;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Mintlens API",
      version: "v1beta2",
      description:
        "NFT analytics of one chain: contracts, NFTs, collection rankings, metadata and totals, holders, and time series of supply, holders, prices and sales. One REST host per chain. Responses are canonical proto3 JSON of the messages of `proto/mintlens/v1beta2`: lowerCamelCase names, 64-bit integers and amounts as decimal strings, enums by name, every field present. Generated from the protobuf source; do not edit.",
      license: { name: "MIT", identifier: "MIT" },
    },
    tags: services.map((s) => ({ name: s.name, description: describe(s) })),
    security: [{ ApiKey: [] }],
    paths,
    components: {
      schemas,
      responses,
      parameters: {
        MinBlock: {
          name: "minBlock",
          in: "query",
          required: false,
          description:
            "Answer only from data that reaches this block: a server behind it waits up to its `--min-block-wait` (2 s by default), then answers 503 with `Retry-After`. Send the highest `Mintlens-Block` seen, and answers never go back in time across servers. gRPC takes it as the metadata `mintlens-min-block`.",
          schema: { type: "string", pattern: "^[0-9]+$" },
        },
      },
      headers: BLOCK_HEADERS,
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "The user's API key." },
      },
    },
  };
}

function exampleMessage(code: number): string {
  switch (code) {
    case 3:
      return "contract_address: not a 0x-prefixed 20-byte hex address";
    case 5:
      return "token_id: no such NFT";
    case 8:
      return "rate limit exceeded";
    case 16:
      return "missing or unknown API key";
    case 14:
      return "service unavailable";
    default:
      return "internal error";
  }
}

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const request = fromBinary(CodeGeneratorRequestSchema, await readStdin());
const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
const services = request.fileToGenerate.flatMap((name) => registry.getFile(name)?.services ?? []);
const packages = [...new Set(services.map((s) => s.file.proto.package))];
if (packages.length !== 1)
  throw new Error(`expected the services of one package, got ${packages.join(", ")}`);
const document = buildDocument(registry, services);
const response = create(CodeGeneratorResponseSchema, {
  supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
  file: [{ name: `${packages[0]}.json`, content: `${JSON.stringify(document, null, 2)}\n` }],
});
process.stdout.write(toBinary(CodeGeneratorResponseSchema, response));
