/**
 * Every path and query value of the API, checked and typed. Each parser returns a typed value or
 * throws an InvalidArgumentError naming the field in snake_case, and nothing else.
 *
 * REST hands in strings (`undefined` for an absent parameter). gRPC hands in the values its
 * messages hold, and the same functions take them: enum numbers (0, proto3's value for "not
 * set", counts as absent for optional enums), integers for limit and offset (0 is "not set"
 * there too), an empty string for an absent optional string. An empty query value
 * (`?limit=`) is absent as well, so both protocols read alike.
 *
 * Decisions the interface leaves open are in docs/api.md, "Requests and responses".
 */
import type { Address } from "../core/hex.ts";
import { TRANSFER_LABELS, type TransferLabel } from "../core/transfer-labels.ts";
import { InvalidArgumentError } from "./errors.ts";

// ---------------------------------------------------------------------------------------------
// Field names, as the `.proto` messages spell them.

export const FIELD = {
  contractAddress: "contract_address",
  tokenId: "token_id",
  metric: "metric",
  duration: "duration",
  groupByPeriod: "group_by_period",
  sortDirection: "sort_direction",
  contractTypes: "contract_types",
  limit: "limit",
  offset: "offset",
  pageToken: "page_token",
  blockTimestampGt: "block_timestamp_gt",
  timestampLt: "timestamp_lt",
  includeFlaggedSales: "include_flagged_sales",
  includeStats: "include_stats",
} as const;

/** A raw scalar value: a query or path string (REST), or a message field's value (gRPC). */
export type RawScalar = string | number | undefined;

function isAbsent(raw: RawScalar): raw is undefined | "" {
  return raw === undefined || raw === "";
}

/**
 * A query parameter that takes one value, given as a repeated key: the same value repeated is
 * that value; different values are an error.
 */
export function single(field: string, raw: string | readonly string[] | undefined): string | undefined {
  if (raw === undefined || typeof raw === "string") return raw;
  const distinct = [...new Set(raw)];
  if (distinct.length > 1)
    throw new InvalidArgumentError(field, "given more than once with different values");
  return distinct[0];
}

// ---------------------------------------------------------------------------------------------
// Enumerations. Each value's number is its place in the list, from 1; 0 is `*_UNSPECIFIED`. The
// `.proto` enums number their values the same way.

export interface EnumSpec<T extends string> {
  readonly unspecified: string;
  readonly names: readonly T[];
}

function enumSpec<const T extends string>(unspecified: string, names: readonly T[]): EnumSpec<T> {
  return { unspecified, names };
}

export const METRIC = enumSpec("METRIC_UNSPECIFIED", [
  "METRIC_SALES_VOLUME",
  "METRIC_SALES_QUANTITY",
  "METRIC_MAX_PRICE",
  "METRIC_AVG_PRICE",
]);
export type Metric = (typeof METRIC.names)[number];

export const DURATION = enumSpec("DURATION_UNSPECIFIED", [
  "DURATION_1_HOUR",
  "DURATION_1_DAY",
  "DURATION_7_DAYS",
  "DURATION_30_DAYS",
  "DURATION_365_DAYS",
]);
export type Duration = (typeof DURATION.names)[number];

export const GROUP_BY_PERIOD = enumSpec("GROUP_BY_PERIOD_UNSPECIFIED", [
  "GROUP_BY_PERIOD_15_MINUTES",
  "GROUP_BY_PERIOD_1_HOUR",
  "GROUP_BY_PERIOD_1_DAY",
]);
export type GroupByPeriod = (typeof GROUP_BY_PERIOD.names)[number];

export const SORT_DIRECTION = enumSpec("SORT_DIRECTION_UNSPECIFIED", [
  "SORT_DIRECTION_ASC",
  "SORT_DIRECTION_DESC",
]);
export type SortDirection = (typeof SORT_DIRECTION.names)[number];

export const CONTRACT_TYPE = enumSpec("TYPE_UNSPECIFIED", [
  "TYPE_ERC20",
  "TYPE_ERC721",
  "TYPE_ERC1155",
  "TYPE_ERC721_LEGACY",
  "TYPE_CRYPTOPUNKS",
]);
export type ContractType = (typeof CONTRACT_TYPE.names)[number];

export const LABEL = enumSpec("LABEL_UNSPECIFIED", TRANSFER_LABELS);

/** The number of an enum value in the `.proto` (its place in the list, from 1). */
export function enumNumber<T extends string>(spec: EnumSpec<T>, name: T): number {
  return spec.names.indexOf(name) + 1;
}

export const DURATION_SECONDS: Readonly<Record<Duration, number>> = {
  DURATION_1_HOUR: 3_600,
  DURATION_1_DAY: 86_400,
  DURATION_7_DAYS: 7 * 86_400,
  DURATION_30_DAYS: 30 * 86_400,
  DURATION_365_DAYS: 365 * 86_400,
};

export const PERIOD_SECONDS: Readonly<Record<GroupByPeriod, number>> = {
  GROUP_BY_PERIOD_15_MINUTES: 900,
  GROUP_BY_PERIOD_1_HOUR: 3_600,
  GROUP_BY_PERIOD_1_DAY: 86_400,
};

/** One enum value by name (REST) or number (gRPC), `undefined` when absent. `*_UNSPECIFIED` by name is invalid. */
export function optionalEnum<T extends string>(
  spec: EnumSpec<T>,
  field: string,
  raw: RawScalar,
): T | undefined {
  if (isAbsent(raw) || raw === 0) return undefined;
  if (typeof raw === "number") {
    const name = Number.isInteger(raw) ? spec.names[raw - 1] : undefined;
    if (name === undefined) throw new InvalidArgumentError(field, `unknown value ${raw}`);
    return name;
  }
  if ((spec.names as readonly string[]).includes(raw)) return raw as T;
  if (raw === spec.unspecified) throw new InvalidArgumentError(field, `${raw} is not a valid value`);
  throw new InvalidArgumentError(
    field,
    `unknown value ${quote(raw)}; expected one of ${spec.names.join(", ")}`,
  );
}

export function requiredEnum<T extends string>(spec: EnumSpec<T>, field: string, raw: RawScalar): T {
  if (raw === 0) throw new InvalidArgumentError(field, `${spec.unspecified} is not a valid value`);
  const value = optionalEnum(spec, field, raw);
  if (value === undefined) throw new InvalidArgumentError(field, "required");
  return value;
}

export function parseMetric(raw: RawScalar, field: string = FIELD.metric): Metric {
  return requiredEnum(METRIC, field, raw);
}

export function parseDuration(raw: RawScalar, field: string = FIELD.duration): Duration {
  return requiredEnum(DURATION, field, raw);
}

export function parseGroupByPeriod(raw: RawScalar, field: string = FIELD.groupByPeriod): GroupByPeriod {
  return requiredEnum(GROUP_BY_PERIOD, field, raw);
}

/** The endpoint's default when absent: contracts `SORT_DIRECTION_ASC`, owners_list `SORT_DIRECTION_DESC`. */
export function parseSortDirection(
  raw: RawScalar,
  fallback: SortDirection,
  field: string = FIELD.sortDirection,
): SortDirection {
  return optionalEnum(SORT_DIRECTION, field, raw) ?? fallback;
}

/**
 * Contract types: repeated keys (`contractTypes=A&contractTypes=B`), comma-separated values
 * (`contractTypes=A,B`) or both; gRPC's repeated enum numbers. Returned once each, in the enum's
 * order; an empty list means no filter.
 */
export function parseContractTypes(
  raw: string | number | readonly (string | number)[] | undefined,
  field: string = FIELD.contractTypes,
): ContractType[] {
  if (raw === undefined) return [];
  const values = (typeof raw === "object" ? raw : [raw]).flatMap((v) =>
    typeof v === "string" && v !== "" ? v.split(",") : [v],
  );
  if (values.length === 1 && values[0] === "") return [];
  const found = new Set<ContractType>();
  for (const value of values) {
    if (value === "") throw new InvalidArgumentError(field, "empty value in the list");
    found.add(requiredEnum(CONTRACT_TYPE, field, value));
  }
  return CONTRACT_TYPE.names.filter((name) => found.has(name));
}

/**
 * Transfer labels (`labelsAny`): repeated keys, comma-separated values or both, as contract types
 * are read; each once, in the enum's order; an empty list means no filter.
 */
export function parseLabels(
  raw: string | number | readonly (string | number)[] | undefined,
  field: string,
): TransferLabel[] {
  if (raw === undefined) return [];
  const values = (typeof raw === "object" ? raw : [raw]).flatMap((v) =>
    typeof v === "string" && v !== "" ? v.split(",") : [v],
  );
  if (values.length === 1 && values[0] === "") return [];
  const found = new Set<TransferLabel>();
  for (const value of values) {
    if (value === "") throw new InvalidArgumentError(field, "empty value in the list");
    found.add(requiredEnum(LABEL, field, value));
  }
  return LABEL.names.filter((name) => found.has(name));
}

// ---------------------------------------------------------------------------------------------
// Addresses and token ids.

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** A 20-byte address in any case (the checksum of a mixed-case address is not checked), lower-cased. */
export function parseAddress(raw: RawScalar, field: string = FIELD.contractAddress): Address {
  if (isAbsent(raw)) throw new InvalidArgumentError(field, "required");
  if (typeof raw !== "string" || !ADDRESS.test(raw)) {
    throw new InvalidArgumentError(field, "not an address: expected 0x followed by 40 hex digits");
  }
  return raw.toLowerCase() as Address;
}

/** An address that may be left out (a filter): `undefined` when absent, else as `parseAddress` reads it. */
export function parseOptionalAddress(raw: RawScalar, field: string): Address | undefined {
  return isAbsent(raw) ? undefined : parseAddress(raw, field);
}

export const MAX_UINT256 = (1n << 256n) - 1n;
/** Digits of 2^256 - 1: a token id may be written with leading zeros up to this width. */
const TOKEN_ID_MAX_DIGITS = 78;

/**
 * A token id: a decimal uint256, digits only (no sign, exponent, hex, spaces or separators).
 * Leading zeros are accepted up to 78 digits in all (`007` is token 7).
 */
export function parseTokenId(raw: RawScalar, field: string = FIELD.tokenId): bigint {
  if (isAbsent(raw)) throw new InvalidArgumentError(field, "required");
  if (typeof raw !== "string" || !/^[0-9]+$/.test(raw)) {
    throw new InvalidArgumentError(field, "not a token id: expected a decimal integer");
  }
  if (raw.length > TOKEN_ID_MAX_DIGITS || BigInt(raw) > MAX_UINT256) {
    throw new InvalidArgumentError(field, "out of range: a token id is at most 2^256 - 1");
  }
  return BigInt(raw);
}

// ---------------------------------------------------------------------------------------------
// Paging.

export type PagedEndpoint = "contracts" | "top" | "owners" | "walletNfts" | "traits" | "transfers";

/** Default and maximum `limit` of each paged endpoint. */
export const LIMITS: Readonly<Record<PagedEndpoint, { default: number; max: number }>> = {
  contracts: { default: 20, max: 500 },
  top: { default: 20, max: 500 },
  owners: { default: 500, max: 500 },
  walletNfts: { default: 500, max: 500 },
  traits: { default: 500, max: 500 },
  transfers: { default: 20, max: 500 },
};

/**
 * The largest offset. An offset is rows the database reads and throws away, so deep pages go by
 * `page_token` instead, which starts each page where the previous one ended.
 */
export const MAX_OFFSET = 10_000;

/** A non-negative integer from decimal digits (leading zeros allowed) or a gRPC integer; `undefined` when absent. */
function nonNegativeInteger(field: string, raw: RawScalar, max: number): number | undefined {
  if (isAbsent(raw)) return undefined;
  let value: number;
  if (typeof raw === "number") {
    if (!Number.isInteger(raw) || raw < 0)
      throw new InvalidArgumentError(field, "must be a non-negative integer");
    value = raw;
  } else {
    if (!/^[0-9]+$/.test(raw)) throw new InvalidArgumentError(field, "must be a non-negative integer");
    const digits = raw.replace(/^0+(?=.)/, "");
    value = digits.length > 15 ? Number.POSITIVE_INFINITY : Number(digits);
  }
  if (value > max) throw new InvalidArgumentError(field, `must be at most ${max}`);
  return value;
}

/** `limit`: absent or 0 is the endpoint's default; above its maximum is an error, never clamped. */
export function parseLimit(raw: RawScalar, endpoint: PagedEndpoint, field: string = FIELD.limit): number {
  const { default: fallback, max } = LIMITS[endpoint];
  const value = nonNegativeInteger(field, raw, max);
  return value === undefined || value === 0 ? fallback : value;
}

/** `offset`: absent is 0; beyond MAX_OFFSET an error that points to page tokens. */
export function parseOffset(raw: RawScalar, field: string = FIELD.offset): number {
  const value = nonNegativeInteger(field, raw, Number.POSITIVE_INFINITY) ?? 0;
  if (value > MAX_OFFSET) {
    throw new InvalidArgumentError(
      field,
      `must be at most ${MAX_OFFSET}; page further with page_token (each answer's nextPageToken)`,
    );
  }
  return value;
}

/**
 * The spellings of a boolean the original service's REST gateway read (Go's `strconv.ParseBool`).
 * Clients rely on them: PHP's query builder, for one, writes `true` as `1`.
 */
const TRUE_TEXT: ReadonlySet<string> = new Set(["true", "True", "TRUE", "t", "T", "1"]);
const FALSE_TEXT: ReadonlySet<string> = new Set(["false", "False", "FALSE", "f", "F", "0"]);

/** A yes-or-no field: `true`, `1`, `false`, `0` and the other spellings above (a gRPC bool arrives as 1 or 0); absent is false. */
export function parseBoolean(raw: RawScalar, field: string): boolean {
  if (isAbsent(raw)) return false;
  if (raw === 1 || (typeof raw === "string" && TRUE_TEXT.has(raw))) return true;
  if (raw === 0 || (typeof raw === "string" && FALSE_TEXT.has(raw))) return false;
  throw new InvalidArgumentError(field, `must be true or false, not ${JSON.stringify(raw)}`);
}

/** `page_token`: the token as given (read by the operation that knows its list), `undefined` when absent. */
export function parsePageToken(raw: RawScalar, field: string = FIELD.pageToken): string | undefined {
  if (isAbsent(raw)) return undefined;
  if (typeof raw !== "string") throw new InvalidArgumentError(field, "must be a string");
  return raw;
}

/**
 * A page token holds the position its page ended at, so an offset beside it has no meaning: it is
 * refused rather than guessed at (0 is no offset, and allowed).
 */
export function checkPaging(
  offset: number,
  pageToken: string | undefined,
  field: string = FIELD.offset,
): void {
  if (pageToken !== undefined && offset !== 0) {
    throw new InvalidArgumentError(field, "not allowed with page_token, which holds the position already");
  }
}

// ---------------------------------------------------------------------------------------------
// Timestamps.

/** An instant: whole seconds since 1970-01-01T00:00:00Z and nanoseconds within the second. */
export interface Instant {
  seconds: number;
  nanos: number;
}

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range of google.protobuf.Timestamp and of four-digit years. */
export const MIN_SECONDS = -62_135_596_800;
export const MAX_SECONDS = 253_402_300_799;

const RFC3339 =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * An RFC 3339 timestamp: `YYYY-MM-DDTHH:MM:SS`, optional `.` and 1 to 9 fractional digits, then
 * `Z` or `±HH:MM` (`T` and `Z` in either case). Anything else is an error: a date alone, a space
 * for `T`, no zone, a leap second (`:60`), a day the month does not have, a year outside 0001 to
 * 9999 once in UTC. `undefined` when absent.
 */
export function parseTimestamp(raw: RawScalar, field: string): Instant | undefined {
  if (isAbsent(raw)) return undefined;
  const m = typeof raw === "string" ? RFC3339.exec(raw) : null;
  if (m === null) {
    throw new InvalidArgumentError(field, "not an RFC 3339 timestamp (like 2024-01-31T00:00:00Z)");
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7] ?? "";
  const sign = m[8] === "-" ? -1 : 1;
  const offsetHours = Number(m[9] ?? 0);
  const offsetMinutes = Number(m[10] ?? 0);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    throw new InvalidArgumentError(field, "not a valid date and time");
  }
  const local = daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second;
  const seconds = local - sign * (offsetHours * 3_600 + offsetMinutes * 60);
  return checkInstant({ seconds, nanos: Number(fraction.padEnd(9, "0")) }, field);
}

/**
 * A gRPC `google.protobuf.Timestamp` (seconds as a bigint or a number), checked like a parsed
 * one: nanos in [0, 10^9), the instant in years 0001 to 9999. `undefined` when absent.
 */
export function checkTimestamp(
  value: { seconds: bigint | number; nanos: number } | undefined,
  field: string,
): Instant | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value.nanos) || value.nanos < 0 || value.nanos > 999_999_999) {
    throw new InvalidArgumentError(field, "nanos must be in [0, 999999999]");
  }
  const seconds = value.seconds;
  if (typeof seconds === "number" ? !Number.isInteger(seconds) : false) {
    throw new InvalidArgumentError(field, "seconds must be an integer");
  }
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) throw outOfRange(field);
  return { seconds: Number(seconds), nanos: value.nanos };
}

function checkInstant(instant: Instant, field: string): Instant {
  if (instant.seconds < MIN_SECONDS || instant.seconds > MAX_SECONDS) throw outOfRange(field);
  return instant;
}

function outOfRange(field: string): InvalidArgumentError {
  return new InvalidArgumentError(field, "out of range: years 0001 to 9999 (UTC)");
}

// ---------------------------------------------------------------------------------------------
// Time series shape.

/** The most points a time series may have. */
export const MAX_POINTS = 10_000;

export interface SeriesShape {
  duration: Duration;
  period: GroupByPeriod;
  durationSeconds: number;
  periodSeconds: number;
  points: number;
}

/**
 * A duration and a period that make a series: the period no longer than the duration, at most
 * 10,000 points. Otherwise an error naming `group_by_period`.
 */
export function checkSeriesShape(
  duration: Duration,
  period: GroupByPeriod,
  field: string = FIELD.groupByPeriod,
): SeriesShape {
  const durationSeconds = DURATION_SECONDS[duration];
  const periodSeconds = PERIOD_SECONDS[period];
  if (periodSeconds > durationSeconds)
    throw new InvalidArgumentError(field, `${period} is longer than ${duration}`);
  if (durationSeconds % periodSeconds !== 0) {
    throw new InvalidArgumentError(field, `${duration} is not a whole number of ${period}`);
  }
  const points = durationSeconds / periodSeconds;
  if (points > MAX_POINTS) {
    throw new InvalidArgumentError(
      field,
      `${duration} grouped by ${period} is ${points} points; at most ${MAX_POINTS} are allowed`,
    );
  }
  return { duration, period, durationSeconds, periodSeconds, points };
}

function quote(raw: string): string {
  const shown = raw.length > 64 ? `${raw.slice(0, 64)}…` : raw;
  return JSON.stringify(shown);
}
