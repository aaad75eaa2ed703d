/**
 * Request values: every parser returns a typed value for what the interface allows, and for
 * anything else throws an InvalidArgumentError naming its field, never another error.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidArgumentError } from "../../src/api/errors.ts";
import {
  CONTRACT_TYPE,
  checkPaging,
  checkSeriesShape,
  checkTimestamp,
  DURATION,
  DURATION_SECONDS,
  enumNumber,
  GROUP_BY_PERIOD,
  LIMITS,
  MAX_OFFSET,
  MAX_UINT256,
  METRIC,
  PERIOD_SECONDS,
  parseAddress,
  parseBoolean,
  parseContractTypes,
  parseDuration,
  parseGroupByPeriod,
  parseLimit,
  parseMetric,
  parseOffset,
  parsePageToken,
  parseSortDirection,
  parseTimestamp,
  parseTokenId,
  type RawScalar,
  SORT_DIRECTION,
  single,
} from "../../src/api/params.ts";

/** Runs `parse` and tells what came out: the value, or the InvalidArgumentError's field and message. */
function outcome<T>(parse: () => T): { ok: T } | { field: string; message: string } {
  try {
    return { ok: parse() };
  } catch (error) {
    assert.ok(
      error instanceof InvalidArgumentError,
      `expected an InvalidArgumentError, got ${String(error)}`,
    );
    return { field: error.field, message: error.message };
  }
}

function rejects(parse: () => unknown, field: string, problem?: RegExp): void {
  const result = outcome(parse);
  assert.ok(
    "field" in result,
    `accepted: ${JSON.stringify(result, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}`,
  );
  assert.equal(result.field, field);
  assert.ok(result.message.startsWith(`${field}: `), result.message);
  if (problem) assert.match(result.message, problem);
}

/** Values of the parsers' input type, biased toward near-misses of the valid forms. */
const rawScalar: fc.Arbitrary<RawScalar> = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEFxX-+:.TZz ,_eE") }),
  fc.integer(),
  fc.double(),
  fc.constant(undefined),
  fc.constantFrom(...METRIC.names, ...DURATION.names, ...GROUP_BY_PERIOD.names, ...CONTRACT_TYPE.names),
);

describe("every parser throws only InvalidArgumentError, naming its own field", () => {
  const parsers: [string, string, (raw: RawScalar) => unknown][] = [
    ["address", "contract_address", (raw) => parseAddress(raw)],
    ["owner address", "owner_address", (raw) => parseAddress(raw, "owner_address")],
    ["token id", "token_id", (raw) => parseTokenId(raw)],
    ["metric", "metric", (raw) => parseMetric(raw)],
    ["duration", "duration", (raw) => parseDuration(raw)],
    ["period", "group_by_period", (raw) => parseGroupByPeriod(raw)],
    ["sort direction", "sort_direction", (raw) => parseSortDirection(raw, "SORT_DIRECTION_ASC")],
    ["contract types", "contract_types", (raw) => parseContractTypes(raw)],
    ["limit (contracts)", "limit", (raw) => parseLimit(raw, "contracts")],
    ["limit (owners)", "limit", (raw) => parseLimit(raw, "owners")],
    ["offset", "offset", (raw) => parseOffset(raw)],
    ["page token", "page_token", (raw) => parsePageToken(raw)],
    ["include stats", "include_stats", (raw) => parseBoolean(raw, "include_stats")],
    ["timestamp", "timestamp_lt", (raw) => parseTimestamp(raw, "timestamp_lt")],
    ["timestamp gt", "block_timestamp_gt", (raw) => parseTimestamp(raw, "block_timestamp_gt")],
  ];
  for (const [name, field, parse] of parsers) {
    test(name, () => {
      fc.assert(
        fc.property(rawScalar, (raw) => {
          const result = outcome(() => parse(raw));
          if ("field" in result) {
            assert.equal(result.field, field);
            assert.ok(result.message.startsWith(`${field}: `));
          }
        }),
        { numRuns: 2000 },
      );
    });
  }
});

describe("addresses", () => {
  test("any case in, lowercase out", () => {
    assert.equal(
      parseAddress("0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D"),
      "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
    );
    assert.equal(
      parseAddress("0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d"),
      "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
    );
  });

  test("accepted exactly when 0x and 40 hex digits (a random string, a random-case address)", () => {
    const hexAddress = fc
      .tuple(
        fc.uint8Array({ minLength: 20, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
      )
      .map(([bytes, upper]) => {
        const hex = Buffer.from(bytes).toString("hex");
        return `0x${[...hex].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("")}`;
      });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          hexAddress,
          hexAddress.map((a) => a.slice(0, -1)),
          hexAddress.map((a) => `${a}0`),
        ),
        (raw) => {
          const result = outcome(() => parseAddress(raw));
          const valid = /^0x[0-9a-f]{40}$/i.test(raw);
          if (valid) assert.deepEqual(result, { ok: raw.toLowerCase() });
          else assert.deepEqual(Object.keys(result), ["field", "message"]);
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("malformed: wrong length, no prefix, non-hex, spaces, absent", () => {
    for (const raw of [
      "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13",
      "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d0",
      "bc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
      "0Xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
      "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13g",
      " 0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
      "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d\n",
      "0x000000000000000000000000bc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
    ]) {
      rejects(() => parseAddress(raw), "contract_address", /not an address/);
    }
    rejects(() => parseAddress(undefined), "contract_address", /required/);
    rejects(() => parseAddress(""), "contract_address", /required/);
  });
});

describe("token ids", () => {
  test("every uint256 round-trips, with or without leading zeros up to 78 digits", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_UINT256 }), fc.nat(78), (id, zeros) => {
        assert.equal(parseTokenId(id.toString()), id);
        const padded = id.toString().padStart(Math.min(78, id.toString().length + zeros), "0");
        assert.equal(parseTokenId(padded), id);
      }),
    );
  });

  test("the bounds: 0 and 2^256 - 1 in, 2^256 and 79 digits out", () => {
    assert.equal(parseTokenId("0"), 0n);
    assert.equal(parseTokenId("007"), 7n);
    assert.equal(parseTokenId(MAX_UINT256.toString()), MAX_UINT256);
    assert.equal(parseTokenId("1".padStart(78, "0")), 1n);
    rejects(() => parseTokenId((MAX_UINT256 + 1n).toString()), "token_id", /out of range/);
    rejects(() => parseTokenId("1".padStart(79, "0")), "token_id", /out of range/);
  });

  test("no sign, exponent, hex, decimal point, separator, space or non-ASCII digit", () => {
    for (const raw of [
      "-1",
      "+1",
      "1e3",
      "1E3",
      "0x10",
      "1.0",
      "1_000",
      "1,000",
      " 1",
      "1 ",
      "١",
      "１",
      "Infinity",
    ]) {
      rejects(() => parseTokenId(raw), "token_id", /not a token id/);
    }
    rejects(() => parseTokenId(undefined), "token_id", /required/);
    rejects(() => parseTokenId(5), "token_id");
  });
});

describe("enumerations", () => {
  const cases = [
    { spec: METRIC, parse: parseMetric, field: "metric" },
    { spec: DURATION, parse: parseDuration, field: "duration" },
    { spec: GROUP_BY_PERIOD, parse: parseGroupByPeriod, field: "group_by_period" },
  ] as const;

  test("the value sets of the interface", () => {
    assert.deepEqual(METRIC.names, [
      "METRIC_SALES_VOLUME",
      "METRIC_SALES_QUANTITY",
      "METRIC_MAX_PRICE",
      "METRIC_AVG_PRICE",
    ]);
    assert.deepEqual(DURATION.names, [
      "DURATION_1_HOUR",
      "DURATION_1_DAY",
      "DURATION_7_DAYS",
      "DURATION_30_DAYS",
      "DURATION_365_DAYS",
    ]);
    assert.deepEqual(GROUP_BY_PERIOD.names, [
      "GROUP_BY_PERIOD_15_MINUTES",
      "GROUP_BY_PERIOD_1_HOUR",
      "GROUP_BY_PERIOD_1_DAY",
    ]);
    assert.deepEqual(SORT_DIRECTION.names, ["SORT_DIRECTION_ASC", "SORT_DIRECTION_DESC"]);
    assert.deepEqual(CONTRACT_TYPE.names, [
      "TYPE_ERC20",
      "TYPE_ERC721",
      "TYPE_ERC1155",
      "TYPE_ERC721_LEGACY",
      "TYPE_CRYPTOPUNKS",
    ]);
    assert.deepEqual(Object.values(DURATION_SECONDS), [3600, 86400, 604800, 2592000, 31536000]);
    assert.deepEqual(Object.values(PERIOD_SECONDS), [900, 3600, 86400]);
  });

  test("by name (REST) and by number (gRPC), the same value", () => {
    for (const { spec, parse } of cases) {
      for (const name of spec.names) {
        assert.equal(parse(name), name);
        assert.equal(parse(enumNumber(spec as never, name as never)), name);
      }
    }
  });

  test("required: absent, empty, *_UNSPECIFIED by name or as 0, unknown names and numbers are rejected", () => {
    for (const { spec, parse, field } of cases) {
      rejects(() => parse(undefined), field, /required/);
      rejects(() => parse(""), field, /required/);
      rejects(() => parse(spec.unspecified), field, /not a valid value/);
      rejects(() => parse(0), field, /not a valid value/);
      rejects(() => parse(spec.names.length + 1), field, /unknown value/);
      rejects(() => parse(-1), field, /unknown value/);
      rejects(() => parse(1.5), field, /unknown value/);
      rejects(() => parse("1"), field, /unknown value/);
      rejects(() => parse((spec.names[0] as string).toLowerCase()), field, /unknown value/);
      rejects(() => parse(`${spec.names[0]} `), field, /unknown value/);
    }
    rejects(() => parseMetric("METRIC_FLOOR_PRICE"), "metric", /expected one of METRIC_SALES_VOLUME/);
  });

  test("a random string is accepted exactly when it is a listed name", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom(...DURATION.names, ...METRIC.names)), (raw) => {
        for (const { spec, parse } of cases) {
          const result = outcome(() => parse(raw));
          assert.equal("ok" in result, (spec.names as readonly string[]).includes(raw), raw);
        }
      }),
    );
  });

  test("sort direction: the endpoint's default when absent or 0 (gRPC's unset), UNSPECIFIED by name rejected", () => {
    assert.equal(parseSortDirection(undefined, "SORT_DIRECTION_ASC"), "SORT_DIRECTION_ASC");
    assert.equal(parseSortDirection(undefined, "SORT_DIRECTION_DESC"), "SORT_DIRECTION_DESC");
    assert.equal(parseSortDirection("", "SORT_DIRECTION_DESC"), "SORT_DIRECTION_DESC");
    assert.equal(parseSortDirection(0, "SORT_DIRECTION_DESC"), "SORT_DIRECTION_DESC");
    assert.equal(parseSortDirection("SORT_DIRECTION_ASC", "SORT_DIRECTION_DESC"), "SORT_DIRECTION_ASC");
    assert.equal(parseSortDirection(2, "SORT_DIRECTION_ASC"), "SORT_DIRECTION_DESC");
    rejects(() => parseSortDirection("SORT_DIRECTION_UNSPECIFIED", "SORT_DIRECTION_ASC"), "sort_direction");
    rejects(() => parseSortDirection("DESC", "SORT_DIRECTION_ASC"), "sort_direction", /unknown value/);
    rejects(() => parseSortDirection(3, "SORT_DIRECTION_ASC"), "sort_direction", /unknown value/);
  });

  test("contract types: repeated keys, comma-separated, gRPC numbers; once each, in the enum's order", () => {
    assert.deepEqual(parseContractTypes(undefined), []);
    assert.deepEqual(parseContractTypes(""), []);
    assert.deepEqual(parseContractTypes([]), []);
    assert.deepEqual(parseContractTypes("TYPE_ERC721"), ["TYPE_ERC721"]);
    assert.deepEqual(parseContractTypes(["TYPE_CRYPTOPUNKS", "TYPE_ERC721"]), [
      "TYPE_ERC721",
      "TYPE_CRYPTOPUNKS",
    ]);
    assert.deepEqual(parseContractTypes("TYPE_ERC1155,TYPE_ERC20"), ["TYPE_ERC20", "TYPE_ERC1155"]);
    assert.deepEqual(parseContractTypes(["TYPE_ERC721,TYPE_ERC1155", "TYPE_ERC721"]), [
      "TYPE_ERC721",
      "TYPE_ERC1155",
    ]);
    assert.deepEqual(parseContractTypes([2, 5]), ["TYPE_ERC721", "TYPE_CRYPTOPUNKS"]);
    rejects(() => parseContractTypes("TYPE_ERC721,"), "contract_types", /empty value/);
    rejects(() => parseContractTypes(["TYPE_ERC721", ""]), "contract_types", /empty value/);
    rejects(() => parseContractTypes("TYPE_UNSPECIFIED"), "contract_types", /not a valid value/);
    rejects(() => parseContractTypes([0]), "contract_types", /not a valid value/);
    rejects(
      () => parseContractTypes(["TYPE_ERC721", "TYPE_ERC404"]),
      "contract_types",
      /unknown value "TYPE_ERC404"/,
    );
    rejects(() => parseContractTypes("ERC721"), "contract_types", /unknown value/);
  });

  test("contract types: any selection, in any order and repetition, comes back as the set", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...CONTRACT_TYPE.names)), fc.boolean(), (chosen, joined) => {
        const raw = joined ? chosen.join(",") : chosen;
        const expected = CONTRACT_TYPE.names.filter((n) => chosen.includes(n));
        assert.deepEqual(parseContractTypes(raw), expected);
      }),
    );
  });

  test("a single-valued parameter repeated: the same value is that value, different values an error", () => {
    assert.equal(single("limit", undefined), undefined);
    assert.equal(single("limit", "5"), "5");
    assert.equal(single("limit", ["5", "5"]), "5");
    rejects(() => single("limit", ["5", "6"]), "limit", /more than once/);
  });
});

describe("limit and offset", () => {
  test("per endpoint default and maximum", () => {
    assert.deepEqual(LIMITS, {
      contracts: { default: 20, max: 500 },
      top: { default: 20, max: 500 },
      owners: { default: 500, max: 500 },
      walletNfts: { default: 500, max: 500 },
      traits: { default: 500, max: 500 },
      transfers: { default: 20, max: 500 },
    });
    for (const [endpoint, { default: fallback, max }] of Object.entries(LIMITS) as [
      keyof typeof LIMITS,
      { default: number; max: number },
    ][]) {
      assert.equal(parseLimit(undefined, endpoint), fallback);
      assert.equal(parseLimit("", endpoint), fallback);
      assert.equal(parseLimit("0", endpoint), fallback, "0 is the default, as gRPC's unset 0 is");
      assert.equal(parseLimit(0, endpoint), fallback);
      assert.equal(parseLimit("1", endpoint), 1);
      assert.equal(parseLimit(String(max), endpoint), max);
      assert.equal(parseLimit(max, endpoint), max);
      rejects(() => parseLimit(String(max + 1), endpoint), "limit", /must be at most 500/);
      rejects(() => parseLimit(max + 1, endpoint), "limit", /must be at most 500/);
    }
  });

  test("a limit above the maximum is an error, never clamped; every value up to it is itself", () => {
    fc.assert(
      fc.property(fc.constantFrom("contracts", "top", "owners" as const), fc.nat(100_000), (endpoint, n) => {
        const result = outcome(() => parseLimit(String(n), endpoint));
        if (n > 500) assert.deepEqual(result, { field: "limit", message: "limit: must be at most 500" });
        else assert.deepEqual(result, { ok: n === 0 ? LIMITS[endpoint].default : n });
      }),
    );
  });

  test("malformed limits and offsets", () => {
    for (const raw of ["-1", "+1", "1.0", "1e2", "0x10", " 1", "1 ", "ten", "١"]) {
      rejects(() => parseLimit(raw, "top"), "limit", /non-negative integer/);
      rejects(() => parseOffset(raw), "offset", /non-negative integer/);
    }
    for (const raw of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      rejects(() => parseLimit(raw, "top"), "limit");
      rejects(() => parseOffset(raw), "offset");
    }
    rejects(() => parseLimit("99999999999999999999999", "top"), "limit", /at most 500/);
  });

  test("offset: absent is 0, leading zeros are the number, at most 10,000, beyond it pointing to page_token", () => {
    assert.equal(MAX_OFFSET, 10_000);
    assert.equal(parseOffset(undefined), 0);
    assert.equal(parseOffset(""), 0);
    assert.equal(parseOffset("0"), 0);
    assert.equal(parseOffset("0040"), 40);
    assert.equal(parseOffset(String(MAX_OFFSET)), MAX_OFFSET);
    assert.equal(parseOffset(MAX_OFFSET), MAX_OFFSET);
    assert.equal(parseOffset(`000${MAX_OFFSET}`), MAX_OFFSET);
    rejects(
      () => parseOffset(String(MAX_OFFSET + 1)),
      "offset",
      /at most 10000; page further with page_token/,
    );
    rejects(() => parseOffset(MAX_OFFSET + 1), "offset", /at most 10000; page further with page_token/);
    rejects(() => parseOffset("2147483647"), "offset", /at most 10000/);
    rejects(() => parseOffset("1".padEnd(40, "0")), "offset", /at most 10000/);
    fc.assert(
      fc.property(fc.nat(MAX_OFFSET), fc.nat(5), (n, zeros) => {
        assert.equal(parseOffset("0".repeat(zeros) + String(n)), n);
      }),
    );
  });

  test("page_token: absent or empty is none; an offset other than 0 beside a token is refused, naming offset", () => {
    assert.equal(parsePageToken(undefined), undefined);
    assert.equal(parsePageToken(""), undefined);
    assert.equal(parsePageToken("abc"), "abc");
    rejects(() => parsePageToken(5), "page_token", /must be a string/);
    checkPaging(0, "abc");
    checkPaging(7, undefined);
    rejects(() => checkPaging(7, "abc"), "offset", /not allowed with page_token/);
  });
});

describe("booleans", () => {
  test("the spellings the original service's gateway read, gRPC's 1 and 0; absent or empty is false", () => {
    for (const text of ["true", "True", "TRUE", "t", "T", "1"])
      assert.equal(parseBoolean(text, "include_stats"), true);
    for (const text of ["false", "False", "FALSE", "f", "F", "0"])
      assert.equal(parseBoolean(text, "include_stats"), false);
    assert.equal(parseBoolean(1, "include_stats"), true);
    assert.equal(parseBoolean(0, "include_stats"), false);
    assert.equal(parseBoolean(undefined, "include_stats"), false);
    assert.equal(parseBoolean("", "include_stats"), false);
    for (const text of ["yes", "no", "on", "2", "tRUE", " true", "true ", "01"])
      rejects(() => parseBoolean(text, "include_stats"), "include_stats", /must be true or false/);
    rejects(() => parseBoolean(2, "include_stats"), "include_stats", /must be true or false/);
  });
});

describe("timestamps", () => {
  const at = (raw: string) => parseTimestamp(raw, "timestamp_lt");

  test("Z or an offset, with or without fractional seconds", () => {
    assert.deepEqual(at("2024-01-31T00:00:00Z"), { seconds: 1_706_659_200, nanos: 0 });
    assert.deepEqual(at("2024-01-31T00:00:00.5Z"), { seconds: 1_706_659_200, nanos: 500_000_000 });
    assert.deepEqual(at("2024-01-31T00:00:00.000000001Z"), { seconds: 1_706_659_200, nanos: 1 });
    assert.deepEqual(at("2024-01-31T02:00:00+02:00"), { seconds: 1_706_659_200, nanos: 0 });
    assert.deepEqual(at("2024-01-30T19:30:00-04:30"), { seconds: 1_706_659_200, nanos: 0 });
    assert.deepEqual(at("2024-01-31T00:00:00-00:00"), { seconds: 1_706_659_200, nanos: 0 });
    assert.deepEqual(at("2024-01-31t00:00:00z"), { seconds: 1_706_659_200, nanos: 0 });
    assert.deepEqual(at("1969-12-31T23:59:59.25Z"), { seconds: -1, nanos: 250_000_000 });
    assert.deepEqual(at("2024-02-29T00:00:00Z"), { seconds: 1_709_164_800, nanos: 0 });
    assert.deepEqual(at("2000-02-29T00:00:00Z"), { seconds: 951_782_400, nanos: 0 });
    assert.equal(at(""), undefined);
    assert.equal(at(undefined as unknown as string), undefined);
  });

  test("the same instant as JavaScript's own reading, for any instant of years 0001-9999 in any offset", () => {
    const day = 86_400_000;
    fc.assert(
      fc.property(
        fc.integer({ min: -62_135_596_800_000 + day, max: 253_402_300_799_999 - day }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        fc.nat(999_999),
        fc.integer({ min: 0, max: 9 }),
        fc.boolean(),
        (ms, offsetMinutes, micros, digits, zulu) => {
          // The instant as its local time in the offset, then the offset: read back, it is the instant.
          const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
          const fraction =
            String(((ms % 1000) + 1000) % 1000).padStart(3, "0") + String(micros).padStart(6, "0");
          const shown = fraction.slice(0, digits);
          const abs = Math.abs(offsetMinutes);
          const zone =
            offsetMinutes === 0 && zulu
              ? "Z"
              : `${offsetMinutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
          const raw = `${local}${shown === "" ? "" : `.${shown}`}${zone}`;
          assert.deepEqual(
            at(raw),
            { seconds: Math.floor(ms / 1000), nanos: Number(shown.padEnd(9, "0")) },
            raw,
          );
        },
      ),
      { numRuns: 3000 },
    );
  });

  test("the range: years 0001 to 9999 in UTC", () => {
    assert.deepEqual(at("0001-01-01T00:00:00Z"), { seconds: -62_135_596_800, nanos: 0 });
    assert.deepEqual(at("9999-12-31T23:59:59.999999999Z"), { seconds: 253_402_300_799, nanos: 999_999_999 });
    rejects(() => at("0000-12-31T23:59:59Z"), "timestamp_lt", /out of range/);
    rejects(() => at("0001-01-01T00:00:00+00:01"), "timestamp_lt", /out of range/);
    rejects(() => at("9999-12-31T23:59:59-00:01"), "timestamp_lt", /out of range/);
    assert.deepEqual(at("0001-01-01T00:00:00-01:00"), { seconds: -62_135_596_800 + 3600, nanos: 0 });
  });

  test("anything else is rejected", () => {
    for (const raw of [
      "2024-01-31",
      "2024-01-31T00:00:00",
      "2024-01-31 00:00:00Z",
      "2024-01-31T00:00Z",
      "2024-01-31T00:00:00.Z",
      "2024-01-31T00:00:00.1234567890Z",
      "2024-01-31T00:00:00+0200",
      "2024-01-31T00:00:00+02",
      "2024-1-31T00:00:00Z",
      "24-01-31T00:00:00Z",
      "+002024-01-31T00:00:00Z",
      "12024-01-31T00:00:00Z",
      " 2024-01-31T00:00:00Z",
      "2024-01-31T00:00:00Z ",
      "2024-01-31T00:00:00Z\n",
      "2024-01-31T00:00:00,5Z",
      "1706659200",
      "Wed, 31 Jan 2024 00:00:00 GMT",
      "２024-01-31T00:00:00Z",
    ]) {
      rejects(() => at(raw), "timestamp_lt", /not an RFC 3339 timestamp/);
    }
    for (const raw of [
      "2024-00-31T00:00:00Z",
      "2024-13-01T00:00:00Z",
      "2024-01-00T00:00:00Z",
      "2024-01-32T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2024-04-31T00:00:00Z",
      "2024-01-31T24:00:00Z",
      "2024-01-31T00:60:00Z",
      "2016-12-31T23:59:60Z",
      "2024-01-31T00:00:00+24:00",
      "2024-01-31T00:00:00+01:60",
    ]) {
      rejects(() => at(raw), "timestamp_lt", /not a valid date and time/);
    }
    rejects(() => parseTimestamp(1_706_659_200, "block_timestamp_gt"), "block_timestamp_gt");
  });

  test("gRPC's google.protobuf.Timestamp is checked the same way", () => {
    assert.equal(checkTimestamp(undefined, "timestamp_lt"), undefined);
    assert.deepEqual(checkTimestamp({ seconds: 1_706_659_200n, nanos: 5 }, "timestamp_lt"), {
      seconds: 1_706_659_200,
      nanos: 5,
    });
    assert.deepEqual(checkTimestamp({ seconds: -62_135_596_800n, nanos: 0 }, "timestamp_lt"), {
      seconds: -62_135_596_800,
      nanos: 0,
    });
    rejects(
      () => checkTimestamp({ seconds: -62_135_596_801n, nanos: 0 }, "timestamp_lt"),
      "timestamp_lt",
      /range/,
    );
    rejects(
      () => checkTimestamp({ seconds: 253_402_300_800n, nanos: 0 }, "timestamp_lt"),
      "timestamp_lt",
      /range/,
    );
    rejects(
      () => checkTimestamp({ seconds: 2n ** 63n - 1n, nanos: 0 }, "timestamp_lt"),
      "timestamp_lt",
      /range/,
    );
    rejects(() => checkTimestamp({ seconds: 0n, nanos: -1 }, "timestamp_lt"), "timestamp_lt", /nanos/);
    rejects(
      () => checkTimestamp({ seconds: 0n, nanos: 1_000_000_000 }, "timestamp_lt"),
      "timestamp_lt",
      /nanos/,
    );
    rejects(() => checkTimestamp({ seconds: 0.5, nanos: 0 }, "timestamp_lt"), "timestamp_lt", /integer/);
  });
});

describe("the duration and period of a series", () => {
  test("every pair: the period not longer than the duration, at most 10,000 points", () => {
    const table: Record<string, number | "longer" | "too many"> = {};
    for (const duration of DURATION.names) {
      for (const period of GROUP_BY_PERIOD.names) {
        const result = outcome(() => checkSeriesShape(duration, period));
        table[`${duration}/${period}`] =
          "ok" in result ? result.ok.points : /longer/.test(result.message) ? "longer" : "too many";
        if (!("ok" in result)) assert.equal(result.field, "group_by_period");
      }
    }
    assert.deepEqual(table, {
      "DURATION_1_HOUR/GROUP_BY_PERIOD_15_MINUTES": 4,
      "DURATION_1_HOUR/GROUP_BY_PERIOD_1_HOUR": 1,
      "DURATION_1_HOUR/GROUP_BY_PERIOD_1_DAY": "longer",
      "DURATION_1_DAY/GROUP_BY_PERIOD_15_MINUTES": 96,
      "DURATION_1_DAY/GROUP_BY_PERIOD_1_HOUR": 24,
      "DURATION_1_DAY/GROUP_BY_PERIOD_1_DAY": 1,
      "DURATION_7_DAYS/GROUP_BY_PERIOD_15_MINUTES": 672,
      "DURATION_7_DAYS/GROUP_BY_PERIOD_1_HOUR": 168,
      "DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY": 7,
      "DURATION_30_DAYS/GROUP_BY_PERIOD_15_MINUTES": 2880,
      "DURATION_30_DAYS/GROUP_BY_PERIOD_1_HOUR": 720,
      "DURATION_30_DAYS/GROUP_BY_PERIOD_1_DAY": 30,
      "DURATION_365_DAYS/GROUP_BY_PERIOD_15_MINUTES": "too many",
      "DURATION_365_DAYS/GROUP_BY_PERIOD_1_HOUR": 8760,
      "DURATION_365_DAYS/GROUP_BY_PERIOD_1_DAY": 365,
    });
  });

  test("the messages name group_by_period and say what is wrong", () => {
    rejects(
      () => checkSeriesShape("DURATION_1_HOUR", "GROUP_BY_PERIOD_1_DAY"),
      "group_by_period",
      /^group_by_period: GROUP_BY_PERIOD_1_DAY is longer than DURATION_1_HOUR$/,
    );
    rejects(
      () => checkSeriesShape("DURATION_365_DAYS", "GROUP_BY_PERIOD_15_MINUTES"),
      "group_by_period",
      /35040 points; at most 10000/,
    );
  });
});
