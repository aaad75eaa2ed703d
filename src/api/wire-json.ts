/**
 * A response message as the API's JSON: canonical proto3 JSON with every field emitted, and
 * `null` for a sub-message that is not set (protobuf's JSON leaves those out; clients of the API
 * expect the key). A wrapper (`google.protobuf.StringValue`) is its value, or `null`: how a nullable
 * scalar is written. An optional (explicit-presence) scalar that is not set is left out.
 *
 * `toWireJson` is the definition, on protobuf-es's reflective `toJson`. `wireJsonWriter` writes
 * the same text from a writer compiled once per message type, without reflection: what REST
 * answers use (a test checks the two agree on random messages of every response type).
 */
import {
  type DescField,
  type DescMessage,
  type JsonValue,
  type MessageShape,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, isWrapperDesc } from "@bufbuild/protobuf/wkt";

export function toWireJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue {
  const json = toJson(schema, message, { alwaysEmitImplicit: true });
  return withNulls(schema, json);
}

function withNulls(schema: DescMessage, json: JsonValue): JsonValue {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const out: Record<string, JsonValue> = {};
  for (const field of schema.fields) {
    const value = json[field.jsonName];
    if (field.fieldKind === "message") {
      out[field.jsonName] = value === undefined ? null : withNulls(field.message, value);
    } else if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      out[field.jsonName] = value.map((item) => withNulls(field.message, item));
    } else if (value !== undefined) {
      out[field.jsonName] = value;
    }
  }
  return out;
}

type Write = (value: unknown) => string;
type MessageWriter = (message: Record<string, unknown>) => string;

const writers = new WeakMap<DescMessage, MessageWriter>();

const SIXTY_FOUR_BIT = new Set<ScalarType>([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);

function scalarWriter(type: ScalarType): Write {
  if (SIXTY_FOUR_BIT.has(type)) return (v) => `"${String(v)}"`;
  switch (type) {
    case ScalarType.STRING:
      return (v) => JSON.stringify(v);
    case ScalarType.BOOL:
      return (v) => (v ? "true" : "false");
    case ScalarType.BYTES:
      return (v) => `"${Buffer.from(v as Uint8Array).toString("base64")}"`;
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      // JSON has no NaN or infinities: proto3 JSON writes them as strings.
      return (v) => (Number.isFinite(v) ? JSON.stringify(v) : `"${String(v)}"`);
    default:
      return (v) => String(v);
  }
}

function enumWriter(values: readonly { number: number; name: string }[]): Write {
  const names = new Map(values.map((v) => [v.number, `"${v.name}"`]));
  return (v) => names.get(v as number) ?? String(v);
}

function fieldWriter(field: DescField): Write {
  switch (field.fieldKind) {
    case "scalar":
      return scalarWriter(field.scalar);
    case "enum":
      return enumWriter(field.enum.values);
    case "message": {
      const nested = field.message;
      const wrapped = isWrapperDesc(nested) ? nested.fields[0] : undefined;
      if (wrapped?.fieldKind === "scalar") {
        // protobuf-es holds a wrapper field as its bare value.
        const write = scalarWriter(wrapped.scalar);
        return (v) => (v === undefined ? "null" : write(v));
      }
      return (v) => (v === undefined ? "null" : writerOf(nested)(v as Record<string, unknown>));
    }
    case "list": {
      const item =
        field.listKind === "scalar"
          ? scalarWriter(field.scalar)
          : field.listKind === "enum"
            ? enumWriter(field.enum.values)
            : (v: unknown) => writerOf(field.message)(v as Record<string, unknown>);
      return (v) => `[${(v as unknown[]).map(item).join(",")}]`;
    }
    case "map":
      throw new Error(`maps are not written by the wire writer (${field.parent.typeName}.${field.name})`);
  }
}

function writerOf(schema: DescMessage): MessageWriter {
  let writer = writers.get(schema);
  if (writer !== undefined) return writer;
  if (schema.oneofs.some((o) => o.kind === "oneof")) {
    throw new Error(`oneofs are not written by the wire writer (${schema.typeName})`);
  }
  const parts = schema.fields.map((field) => ({
    name: field.localName,
    prefix: `${JSON.stringify(field.jsonName)}:`,
    write: fieldWriter(field),
    // Only an explicit-presence scalar or enum can be absent from the JSON.
    optional:
      field.fieldKind !== "message" &&
      field.fieldKind !== "list" &&
      field.presence === FeatureSet_FieldPresence.EXPLICIT,
  }));
  writer = (message) => {
    let out = "";
    for (const part of parts) {
      const value = message[part.name];
      if (part.optional && value === undefined) continue;
      out += `${out === "" ? "" : ","}${part.prefix}${part.write(value)}`;
    }
    return `{${out}}`;
  };
  writers.set(schema, writer);
  return writer;
}

/** The API's JSON text of messages of `schema`, from a writer compiled on first use. */
export function wireJsonWriter<Desc extends DescMessage>(
  schema: Desc,
): (message: MessageShape<Desc>) => string {
  const writer = writerOf(schema);
  return (message) => writer(message as unknown as Record<string, unknown>);
}
