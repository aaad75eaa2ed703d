/**
 * The fields of a `StreamEvents` request, checked as every other operation's are: each problem an
 * INVALID_ARGUMENT naming the field in snake_case. REST hands in query strings (repeated keys or
 * comma-separated lists), gRPC the decoded message's values; both read alike.
 */
import type { Address } from "../core/hex.ts";
import type { StreamEventKind, StreamFilter } from "../core/stream-events.ts";
import { InvalidArgumentError } from "./errors.ts";
import {
  type EnumSpec,
  optionalEnum,
  parseAddress,
  parseBoolean,
  type RawScalar,
  requiredEnum,
} from "./params.ts";
import type { RequestFields } from "./service.ts";

export const STREAM_EVENT_KIND: EnumSpec<
  "STREAM_EVENT_KIND_TRANSFER" | "STREAM_EVENT_KIND_SALE" | "STREAM_EVENT_KIND_OWNERSHIP"
> = {
  unspecified: "STREAM_EVENT_KIND_UNSPECIFIED",
  names: ["STREAM_EVENT_KIND_TRANSFER", "STREAM_EVENT_KIND_SALE", "STREAM_EVENT_KIND_OWNERSHIP"],
};

const STREAM_MODE: EnumSpec<"STREAM_MODE_HEAD" | "STREAM_MODE_CONFIRMED"> = {
  unspecified: "STREAM_MODE_UNSPECIFIED",
  names: ["STREAM_MODE_HEAD", "STREAM_MODE_CONFIRMED"],
};

const KIND_OF: Readonly<Record<(typeof STREAM_EVENT_KIND.names)[number], StreamEventKind>> = {
  STREAM_EVENT_KIND_TRANSFER: "transfer",
  STREAM_EVENT_KIND_SALE: "sale",
  STREAM_EVENT_KIND_OWNERSHIP: "ownership",
};

/** Addresses a filter may list, per field. */
export const MAX_STREAM_FILTER_ADDRESSES = 100;
/** Confirmed mode's depth when none is given. */
export const DEFAULT_STREAM_CONFIRMATIONS = 12;
export const MAX_STREAM_CONFIRMATIONS = 10_000;
/** The largest cursor: an unsigned 64-bit integer. */
const MAX_CURSOR = (1n << 64n) - 1n;

export interface StreamRequest {
  filter: StreamFilter;
  /** After this cursor, or only what is still to come. */
  after: bigint | "now";
  /** Confirmed mode's depth; undefined at the head. */
  confirmations: number | undefined;
}

/** A repeated field's values: repeated keys, comma-separated lists or both; gRPC's list. */
function listOf(raw: RawScalar | readonly RawScalar[]): RawScalar[] {
  if (raw === undefined) return [];
  const given: readonly RawScalar[] = typeof raw === "object" ? raw : [raw];
  const values = given.flatMap((v): RawScalar[] => (typeof v === "string" ? v.split(",") : [v]));
  return values.length === 1 && values[0] === "" ? [] : values;
}

function addresses(raw: RawScalar | readonly RawScalar[], field: string): Address[] {
  const values = listOf(raw);
  if (values.length > MAX_STREAM_FILTER_ADDRESSES) {
    throw new InvalidArgumentError(field, `at most ${MAX_STREAM_FILTER_ADDRESSES} addresses`);
  }
  return [...new Set(values.map((v) => parseAddress(v === "" ? undefined : v, field)))];
}

/** A cursor: a decimal unsigned 64-bit integer, or `now` (also when absent or empty). */
export function parseCursor(raw: RawScalar, field: string): bigint | "now" {
  if (raw === undefined || raw === "" || raw === "now") return "now";
  const text = String(raw);
  if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) > MAX_CURSOR) {
    throw new InvalidArgumentError(field, "not a cursor: expected a decimal integer from 0, or now");
  }
  return BigInt(text);
}

function single(fields: RequestFields, name: string): RawScalar {
  const value = fields[name];
  if (value === undefined || typeof value !== "object") return value;
  const distinct = [...new Set(value.map(String))];
  if (distinct.length > 1) throw new InvalidArgumentError(name, "given more than once with different values");
  return distinct[0];
}

/** A `StreamEvents` request's fields, checked. */
export function parseStreamRequest(fields: RequestFields): StreamRequest {
  const kinds = new Set<StreamEventKind>();
  for (const value of listOf(fields.kinds)) {
    if (value === "") throw new InvalidArgumentError("kinds", "empty value in the list");
    kinds.add(KIND_OF[requiredEnum(STREAM_EVENT_KIND, "kinds", value)]);
  }
  const contracts = addresses(fields.contract_addresses, "contract_addresses");
  const parties = addresses(fields.addresses, "addresses");
  const after = parseCursor(single(fields, "after"), "after");
  const mode = optionalEnum(STREAM_MODE, "mode", single(fields, "mode")) ?? "STREAM_MODE_HEAD";
  const rawDepth = single(fields, "confirmations");
  let confirmations: number | undefined;
  if (rawDepth !== undefined && rawDepth !== "") {
    const text = String(rawDepth);
    if (!/^[0-9]{1,9}$/.test(text) || Number(text) > MAX_STREAM_CONFIRMATIONS) {
      throw new InvalidArgumentError(
        "confirmations",
        `not a number of blocks from 0 to ${MAX_STREAM_CONFIRMATIONS}`,
      );
    }
    if (mode === "STREAM_MODE_HEAD") {
      throw new InvalidArgumentError("confirmations", "only with mode STREAM_MODE_CONFIRMED");
    }
    confirmations = Number(text);
  }
  if (mode === "STREAM_MODE_CONFIRMED") confirmations ??= DEFAULT_STREAM_CONFIRMATIONS;
  const excludeSpam = parseBoolean(single(fields, "exclude_spam"), "exclude_spam");
  return {
    filter: {
      kinds: [...kinds],
      contracts,
      addresses: parties,
      ...(excludeSpam ? { excludeSpam } : {}),
    },
    after,
    confirmations,
  };
}
