/**
 * The compiled JSON writer of REST answers against its definition (protobuf-es's canonical JSON
 * with every field, and null for absent sub-messages), on random messages of every response type.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, isWrapperDesc } from "@bufbuild/protobuf/wkt";
import fc from "fast-check";
import { API_SERVICES } from "../../src/api/service.ts";
import { toWireJson, wireJsonWriter } from "../../src/api/wire-json.ts";

const text = fc.string({ unit: "binary", maxLength: 12 });

function scalar(type: ScalarType): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.STRING:
      return text;
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.DOUBLE:
      // Every double, NaN, the infinities and -0 among them.
      return fc.double();
    case ScalarType.INT32:
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case ScalarType.UINT32:
      return fc.nat({ max: 2 ** 32 - 1 });
    case ScalarType.UINT64:
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
    case ScalarType.INT64:
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    default:
      throw new Error(`no generator for scalar type ${type}`);
  }
}

function field(f: DescField, depth: number): fc.Arbitrary<unknown> {
  switch (f.fieldKind) {
    case "scalar":
      return scalar(f.scalar);
    case "enum":
      return fc.constantFrom(...f.enum.values.map((v) => v.number));
    case "message": {
      // A wrapper field holds its bare value.
      const wrapped = isWrapperDesc(f.message) ? f.message.fields[0] : undefined;
      if (wrapped?.fieldKind === "scalar") return fc.option(scalar(wrapped.scalar), { nil: undefined });
      return depth > 4
        ? fc.constant(undefined)
        : fc.option(message(f.message, depth + 1), { nil: undefined });
    }
    case "list":
      return fc.array(
        f.listKind === "scalar"
          ? scalar(f.scalar)
          : f.listKind === "enum"
            ? fc.constantFrom(...f.enum.values.map((v) => v.number))
            : message(f.message, depth + 1),
        { maxLength: depth > 3 ? 0 : 3 },
      );
    default:
      throw new Error("maps are not in the API");
  }
}

function message(schema: DescMessage, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const entries = schema.fields.map((f) => {
    const value = field(f, depth);
    const explicit =
      f.fieldKind !== "message" && f.fieldKind !== "list" && f.presence === FeatureSet_FieldPresence.EXPLICIT;
    return [f.localName, explicit ? fc.option(value, { nil: undefined }) : value] as const;
  });
  return fc.record(Object.fromEntries(entries)).map((init) => {
    const defined = Object.fromEntries(Object.entries(init).filter(([, v]) => v !== undefined));
    return create(schema, defined as never) as unknown as Record<string, unknown>;
  });
}

test("the compiled writer writes exactly the canonical JSON of every response type", () => {
  for (const service of API_SERVICES) {
    for (const method of service.methods) {
      const write = wireJsonWriter(method.output);
      fc.assert(
        fc.property(message(method.output), (m) => {
          assert.equal(write(m as never), JSON.stringify(toWireJson(method.output, m as never)));
        }),
        { numRuns: 150 },
      );
    }
  }
});
