import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  BEHIND_RETRY_AFTER_SECONDS,
  behindError,
  blockTags,
  MIN_BLOCK_FIELD,
  parseMinBlock,
} from "../../src/api/block-tags.ts";
import {
  BehindError,
  httpErrorResponse,
  InvalidArgumentError,
  UnavailableError,
} from "../../src/api/errors.ts";
import { parseApiConfig } from "../../src/config/api-config.ts";
import { ConfigError } from "../../src/config/config.ts";

const INT64_MAX = 2n ** 63n - 1n;

const refusesNamingField = (raw: string | string[]) => {
  assert.throws(
    () => parseMinBlock(raw),
    (error: unknown) =>
      error instanceof InvalidArgumentError &&
      error.field === MIN_BLOCK_FIELD &&
      error.message.startsWith("min_block: "),
    JSON.stringify(raw),
  );
};

describe("minBlock", () => {
  test("every block number from 0 to 2^63-1, in decimal, with or without leading zeros, is itself", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: INT64_MAX }), fc.nat({ max: 3 }), (n, zeros) => {
        const text = n.toString();
        // A number of 19 digits takes no leading zero: the longest the value may be.
        const padded = text.length + zeros > 19 ? text : `${"0".repeat(zeros)}${text}`;
        assert.equal(parseMinBlock(padded), n);
        assert.equal(parseMinBlock([text, text]), n, "repeated with the same value");
      }),
    );
  });

  test("absent or empty is none", () => {
    assert.equal(parseMinBlock(undefined), undefined);
    assert.equal(parseMinBlock(""), undefined);
  });

  test("anything but a decimal block number is refused naming min_block", () => {
    for (const bad of [
      "-1",
      "+1",
      " 1",
      "1 ",
      "1e3",
      "0x10",
      "1.0",
      "١٢",
      "9223372036854775808",
      "9".repeat(20),
    ]) {
      refusesNamingField(bad);
    }
    refusesNamingField(["1", "2"]);
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: fc.constantFrom(..."0123456789 -+.eExXabc_") }), (raw) => {
        const valid = /^[0-9]{1,19}$/.test(raw) && BigInt(raw) <= INT64_MAX;
        if (valid) assert.equal(parseMinBlock(raw), BigInt(raw));
        else refusesNamingField(raw);
      }),
    );
  });
});

describe("block tags", () => {
  test("number in decimal, hash as given, time in RFC 3339 to the second", () => {
    const hash = `0x${"ab".repeat(32)}` as const;
    assert.deepEqual(blockTags({ number: 18_000_000n, hash, time: 1_700_000_000 }), [
      ["Mintlens-Block", "18000000"],
      ["Mintlens-Block-Hash", hash],
      ["Mintlens-Block-Time", "2023-11-14T22:13:20Z"],
    ]);
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: INT64_MAX }),
        fc.integer({ min: 0, max: 4_102_444_800 }),
        (n, t) => {
          const [number, , time] = blockTags({ number: n, hash, time: t });
          assert.equal(BigInt(number?.[1] ?? ""), n);
          assert.match(time?.[1] ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
          assert.equal(Date.parse(time?.[1] ?? "") / 1000, t);
        },
      ),
    );
  });

  test("data behind minBlock: 503 with Retry-After, saying how far behind", () => {
    const head = { number: 120n, hash: `0x${"00".repeat(32)}` as const, time: 0 };
    const error = behindError(123n, head, 2000);
    assert.ok(error instanceof BehindError && error instanceof UnavailableError);
    const response = httpErrorResponse(error);
    assert.equal(response.status, 503);
    assert.deepEqual(response.headers, { "Retry-After": String(BEHIND_RETRY_AFTER_SECONDS) });
    assert.equal(response.body.code, 14);
    assert.match(response.body.message, /reaches block 120, 3 short of min_block 123 after waiting 2000 ms/);
    assert.match(behindError(5n, undefined, 10).message, /no block of the chain indexed yet/);
  });

  test("an UNAVAILABLE without a retry hint has no Retry-After; a hint is whole seconds, at least 1", () => {
    assert.deepEqual(httpErrorResponse(new UnavailableError()).headers, {});
    assert.deepEqual(httpErrorResponse(new UnavailableError({ retryAfterSeconds: 0.2 })).headers, {
      "Retry-After": "1",
    });
    assert.deepEqual(httpErrorResponse(new UnavailableError({ retryAfterSeconds: 2.5 })).headers, {
      "Retry-After": "3",
    });
  });
});

describe("--min-block-wait", () => {
  test("default 2000 ms; the flag wins over MINTLENS_MIN_BLOCK_WAIT; 0 to 60000", () => {
    assert.equal(parseApiConfig({}, {}, ["ethereum"]).minBlockWaitMs, 2000);
    assert.equal(parseApiConfig({}, { MINTLENS_MIN_BLOCK_WAIT: "500" }, ["ethereum"]).minBlockWaitMs, 500);
    assert.equal(
      parseApiConfig({ minBlockWait: "0" }, { MINTLENS_MIN_BLOCK_WAIT: "500" }, ["ethereum"]).minBlockWaitMs,
      0,
    );
    assert.equal(parseApiConfig({ minBlockWait: "60000" }, {}, ["ethereum"]).minBlockWaitMs, 60_000);
    for (const bad of ["-1", "1.5", "2s", "", "60001", "999999"]) {
      assert.throws(
        () => parseApiConfig({ minBlockWait: bad }, {}, ["ethereum"]),
        (error: unknown) =>
          error instanceof ConfigError && error.problems.some((p) => p.startsWith("min block wait: ")),
        bad,
      );
    }
  });
});
