/**
 * The REST side of the `.proto` source: each method's route from its `google.api.http` rule,
 * how a request's path and query values become its fields, and how a response message becomes
 * the JSON the API promises. Nothing here is written per operation.
 */
import { type DescField, getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "../gen/google/api/annotations_pb.ts";
import type { RawScalar } from "./params.ts";
import type { Operation, RequestFields } from "./service.ts";

export interface RestRoute {
  operation: Operation;
  /** The rule's path template, `/collections/v1beta2/{contract_address}/owners_list`. */
  template: string;
  /** The same path in the router's syntax, `/collections/v1beta2/:contract_address/owners_list`. */
  routerPath: string;
  /** Request fields bound to path segments, by `.proto` name. */
  pathFields: readonly string[];
  /** The other request fields, by every name a query may use: JSON name and `.proto` name. */
  queryFields: ReadonlyMap<string, DescField>;
}

const TEMPLATE_VARIABLE = /\{([a-z_][a-z0-9_]*)\}/g;

/**
 * The routes of each operation, from its method's `get` rule and the rule's additional bindings (an
 * operation the original service also served at another path answers at both).
 */
export function restRoutes(operations: Iterable<Operation>): RestRoute[] {
  const routes: RestRoute[] = [];
  for (const operation of operations) {
    const { method } = operation;
    if (!hasOption(method, http)) throw new Error(`${method.name} has no google.api.http rule`);
    const rule = getOption(method, http);
    for (const binding of [rule, ...rule.additionalBindings]) {
      if (binding.pattern.case !== "get") throw new Error(`${method.name}: only GET rules are served`);
      const template = binding.pattern.value;
      const pathFields = [...template.matchAll(TEMPLATE_VARIABLE)].map((m) => m[1] as string);
      for (const name of pathFields) {
        if (!method.input.fields.some((f) => f.name === name)) {
          throw new Error(`${method.name}: the path names ${name}, which ${method.input.name} lacks`);
        }
      }
      const queryFields = new Map<string, DescField>();
      for (const field of method.input.fields) {
        if (pathFields.includes(field.name)) continue;
        queryFields.set(field.jsonName, field);
        queryFields.set(field.name, field);
      }
      routes.push({
        operation,
        template,
        routerPath: template.replace(TEMPLATE_VARIABLE, ":$1"),
        pathFields,
        queryFields,
      });
    }
  }
  return routes;
}

type QueryValue = string | string[] | undefined;

/**
 * A request's fields from its path parameters and query string. Unknown query parameters are
 * ignored; a field given under both its names counts every value given.
 */
export function restRequestFields(
  route: RestRoute,
  params: Readonly<Record<string, string | undefined>>,
  query: Readonly<Record<string, QueryValue>>,
): RequestFields {
  const fields: Record<string, RawScalar | RawScalar[]> = {};
  for (const name of route.pathFields) fields[name] = params[name];
  for (const [key, value] of Object.entries(query)) {
    const field = route.queryFields.get(key);
    if (field === undefined || value === undefined) continue;
    const before = fields[field.name];
    const values = typeof value === "string" ? [value] : value;
    if (before === undefined) {
      fields[field.name] = values.length === 1 ? values[0] : values;
    } else {
      fields[field.name] = [...(typeof before === "object" ? before : [before]), ...values];
    }
  }
  return fields;
}
