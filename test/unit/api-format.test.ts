/**
 * Wire values: exact decimals from base units, averages rounded down to the wei, the store's
 * numeric text, and timestamps in exactly the forms strict clients parse.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { formatUnits as viemFormatUnits } from "viem";
import {
  averageUnitPrice,
  formatDecimalText,
  formatIndexedAt,
  formatNative,
  formatTimestamp,
  formatUnits,
  formatUsd,
  toHex,
  uint64,
} from "../../src/api/format.ts";
import { OwnerSchema } from "../../src/gen/mintlens/v1beta2/collections_pb.ts";

/** Reads a decimal string back into base units, by string surgery only. */
function parseUnitsReference(text: string, decimals: number): bigint {
  const negative = text.startsWith("-");
  const [whole = "", fraction = ""] = (negative ? text.slice(1) : text).split(".");
  assert.ok(fraction.length <= decimals, text);
  const units = BigInt(whole + fraction.padEnd(decimals, "0"));
  return negative ? -units : units;
}

/** The canonical form: no exponent, no leading or trailing zeros, no "-0", no bare point. */
const CANONICAL = /^(0|-?[1-9][0-9]*|-?(0|[1-9][0-9]*)\.[0-9]*[1-9])$/;

const anyAmount = fc.oneof(
  fc.bigInt({ min: -(1n << 300n), max: 1n << 300n }),
  fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
  fc.constantFrom(0n, 1n, -1n, 10n ** 18n, 10n ** 18n - 1n, (1n << 256n) - 1n),
);

describe("exact decimals from base units", () => {
  test("examples", () => {
    assert.equal(formatUnits(0n, 18), "0");
    assert.equal(formatUnits(1n, 18), "0.000000000000000001");
    assert.equal(formatUnits(10n ** 18n, 18), "1");
    assert.equal(formatUnits(1_500_000_000_000_000_000n, 18), "1.5");
    assert.equal(formatUnits(-1_500_000_000_000_000_000n, 18), "-1.5");
    assert.equal(formatUnits(-1n, 18), "-0.000000000000000001");
    assert.equal(formatUnits(120n, 0), "120");
    assert.equal(formatUnits(1_234_500n, 6), "1.2345");
    assert.equal(formatUnits(10n ** 40n, 18), "10000000000000000000000");
    assert.equal(formatNative(95_000_000_000_000_000n), "0.095");
    assert.equal(
      formatNative((1n << 256n) - 1n),
      "115792089237316195423570985008687907853269984665640564039457.584007913129639935",
    );
    assert.throws(() => formatUnits(1n, -1), RangeError);
    assert.throws(() => formatUnits(1n, 1.5), RangeError);
  });

  test("round-trips through a string-based reading, always in canonical form", () => {
    fc.assert(
      fc.property(anyAmount, fc.nat(40), (value, decimals) => {
        const text = formatUnits(value, decimals);
        assert.match(text, CANONICAL);
        assert.equal(parseUnitsReference(text, decimals), value);
      }),
      { numRuns: 5000 },
    );
  });

  test("agrees with viem's formatUnits", () => {
    fc.assert(
      fc.property(anyAmount, fc.nat(40), (value, decimals) => {
        assert.equal(formatUnits(value, decimals), viemFormatUnits(value, decimals));
      }),
      { numRuns: 5000 },
    );
  });
});

describe("the average price per unit, rounded down to the wei", () => {
  test("examples", () => {
    assert.equal(averageUnitPrice(0n, 0n), "0");
    assert.equal(averageUnitPrice(3n * 10n ** 18n, 2n), "1.5");
    // 1 ETH over 3 units: 0.333… truncated at the 18th digit, the wei.
    assert.equal(averageUnitPrice(10n ** 18n, 3n), "0.333333333333333333");
    assert.equal(averageUnitPrice(2n * 10n ** 18n, 3n), "0.666666666666666666");
    assert.equal(averageUnitPrice(1n, 2n), "0");
    assert.throws(() => averageUnitPrice(1n, -1n), RangeError);
    assert.throws(() => averageUnitPrice(-1n, 1n), RangeError);
  });

  test("within one wei below the exact average", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 1n << 200n }),
        fc.bigInt({ min: 1n, max: 1n << 80n }),
        (volume, units) => {
          const avg = parseUnitsReference(averageUnitPrice(volume, units), 18);
          assert.ok(avg * units <= volume && volume < (avg + 1n) * units);
        },
      ),
    );
  });

  test("between the store's minimum and maximum unit prices (each rounded down) of any set of sales", () => {
    const sale = fc.record({
      total: fc.bigInt({ min: 0n, max: 10n ** 24n }),
      units: fc.bigInt({ min: 1n, max: 50n }),
    });
    fc.assert(
      fc.property(fc.array(sale, { minLength: 1, maxLength: 20 }), (sales) => {
        const unitPrices = sales.map((s) => s.total / s.units);
        const min = unitPrices.reduce((a, b) => (a < b ? a : b));
        const max = unitPrices.reduce((a, b) => (a > b ? a : b));
        const volume = sales.reduce((a, s) => a + s.total, 0n);
        const units = sales.reduce((a, s) => a + s.units, 0n);
        const avg = parseUnitsReference(averageUnitPrice(volume, units), 18);
        assert.ok(min <= avg && avg <= max, `${min} <= ${avg} <= ${max}`);
      }),
    );
  });
});

describe("numeric text from the store", () => {
  test("examples", () => {
    assert.equal(formatDecimalText("12.500000000000000000"), "12.5");
    assert.equal(formatDecimalText("0.000000000000000000"), "0");
    assert.equal(formatDecimalText("-0.000"), "0");
    assert.equal(formatDecimalText("-0.010"), "-0.01");
    assert.equal(formatDecimalText("007"), "7");
    assert.equal(formatDecimalText("1000"), "1000");
    assert.equal(formatDecimalText("3057.123456789012345678"), "3057.123456789012345678");
    assert.equal(formatUsd("1843.270000000000000000"), "1843.27");
    assert.equal(formatUsd(null), "");
    for (const bad of ["", "NaN", "Infinity", "-Infinity", "1e5", "1.", ".5", "+1", " 1", "1,5", "0x10"]) {
      assert.throws(() => formatDecimalText(bad), TypeError, bad);
    }
  });

  test("any value at any scale, padded with zeros, comes out as formatUnits gives it", () => {
    fc.assert(
      fc.property(anyAmount, fc.nat(30), fc.nat(10), fc.nat(3), (value, scale, extraZeros, leading) => {
        const digits = formatUnits(value < 0n ? -value : value, 0).padStart(scale + 1, "0");
        const whole = "0".repeat(leading) + digits.slice(0, digits.length - scale);
        const fraction = digits.slice(digits.length - scale) + "0".repeat(scale > 0 ? extraZeros : 0);
        const text = `${value < 0n ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`;
        assert.equal(formatDecimalText(text), formatUnits(value, scale), text);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("timestamps", () => {
  test("YYYY-MM-DDTHH:MM:SSZ, exactly, from a Date or seconds", () => {
    assert.equal(formatTimestamp(new Date("2024-01-31T00:00:00.999Z")), "2024-01-31T00:00:00Z");
    assert.equal(formatTimestamp(1_706_659_200), "2024-01-31T00:00:00Z");
    assert.equal(formatTimestamp(1_706_659_200.9), "2024-01-31T00:00:00Z");
    assert.equal(formatTimestamp(0), "1970-01-01T00:00:00Z");
    assert.equal(formatTimestamp(-1), "1969-12-31T23:59:59Z");
    assert.equal(formatTimestamp(-62_135_596_800), "0001-01-01T00:00:00Z");
    assert.equal(formatTimestamp(253_402_300_799), "9999-12-31T23:59:59Z");
    assert.throws(() => formatTimestamp(-62_135_596_801), RangeError);
    assert.throws(() => formatTimestamp(253_402_300_800), RangeError);
    assert.throws(() => formatTimestamp(new Date(Number.NaN)), RangeError);
    assert.throws(() => formatTimestamp(Number.POSITIVE_INFINITY), RangeError);
  });

  test("the shape holds, and matches Date's reading, for every second of years 0001-9999", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800, max: 253_402_300_799 }), (seconds) => {
        const text = formatTimestamp(seconds);
        assert.match(text, /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/);
        assert.equal(text, new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z"));
      }),
      { numRuns: 3000 },
    );
  });

  test("indexedAt: exactly six fractional digits", () => {
    assert.equal(formatIndexedAt(1_706_659_200_123_456n), "2024-01-31T00:00:00.123456Z");
    assert.equal(formatIndexedAt(1_706_659_200_000_000n), "2024-01-31T00:00:00.000000Z");
    assert.equal(formatIndexedAt(1_706_659_200_000_001n), "2024-01-31T00:00:00.000001Z");
    assert.equal(formatIndexedAt(-1n), "1969-12-31T23:59:59.999999Z");
    assert.equal(formatIndexedAt(new Date("2024-01-31T00:00:00.5Z")), "2024-01-31T00:00:00.500000Z");
    assert.throws(() => formatIndexedAt(new Date(Number.NaN)), RangeError);
    fc.assert(
      fc.property(fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n }), (micros) => {
        const text = formatIndexedAt(micros);
        assert.match(text, /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$/);
        const ms = Date.parse(text);
        assert.equal(BigInt(ms) * 1000n + BigInt(text.slice(23, 26)), micros);
      }),
    );
  });
});

describe("bytes as hex", () => {
  test("lowercase, 0x, every byte two digits, from a view into a larger buffer too", () => {
    assert.equal(toHex(new Uint8Array([])), "0x");
    assert.equal(toHex(new Uint8Array([0, 1, 0xab, 0xff])), "0x0001abff");
    const whole = Buffer.from("00112233445566778899AABBCCDDEEFF", "hex");
    assert.equal(toHex(whole.subarray(2, 5)), "0x223344");
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const hex = toHex(bytes);
        assert.match(hex, /^0x([0-9a-f]{2})*$/);
        assert.deepEqual(Uint8Array.from(Buffer.from(hex.slice(2), "hex")), bytes);
      }),
    );
  });
});

describe("uint64", () => {
  test("any count, negative or past 2^64, becomes a value protobuf-es encodes as uint64", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 260n), max: 2n ** 260n }), (value) => {
        const held = uint64(value);
        assert.doesNotThrow(() => toBinary(OwnerSchema, create(OwnerSchema, { ownedCount: held })));
        if (value >= 0n && value < 2n ** 64n) assert.equal(held, value);
        else assert.equal(held, value < 0n ? 0n : 2n ** 64n - 1n);
      }),
    );
  });

  test("unguarded, the negative count of a partial history is refused by the encoder", () => {
    assert.throws(() => toBinary(OwnerSchema, create(OwnerSchema, { ownedCount: -3n })), /uint64/);
  });
});
