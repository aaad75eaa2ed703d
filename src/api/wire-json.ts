import { type DescMessage, type JsonValue, type MessageShape, toJson } from "@bufbuild/protobuf";

/**
 * A response message as the API's JSON: canonical proto3 JSON with every field emitted, and
 * `null` for a sub-message that is not set (protobuf's JSON leaves those out; clients of the API
 * expect the key).
 */
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
