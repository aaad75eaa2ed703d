import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { listOption, wholeNumber } from "../../src/config/option-values.ts";

test("a list option takes repeated and comma-separated values alike, else its variable's list", () => {
  assert.deepEqual(listOption(["10.0.0.1, ::1", "127.0.0.1:9000"], "ignored"), [
    "10.0.0.1",
    "::1",
    "127.0.0.1:9000",
  ]);
  assert.deepEqual(listOption(undefined, " a ,,b "), ["a", "b"]);
  assert.deepEqual(listOption(undefined, undefined), []);
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[a-z0-9.:]{1,8}$/), { maxLength: 6 }), (values) => {
      assert.deepEqual(listOption(values, undefined), listOption(undefined, values.join(",")));
      assert.deepEqual(listOption(values, undefined), values);
    }),
  );
});

test("a whole number in range is read, anything else is named in the problems and gives the fallback", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 20_000 }), (n) => {
      const problems: string[] = [];
      const read = wholeNumber(problems, "pool size", String(n), 7, { min: 1, max: 9999 });
      const inRange = n >= 1 && n <= 9999;
      assert.equal(read, inRange ? n : 7);
      assert.deepEqual(problems, inRange ? [] : [`pool size: ${n} is not a whole number from 1 to 9999`]);
    }),
  );
  const problems: string[] = [];
  assert.equal(wholeNumber(problems, "timeout", undefined, 5, { min: 100 }), 5);
  assert.equal(wholeNumber(problems, "timeout", "-3", 5, { min: 100 }), 5);
  assert.equal(wholeNumber(problems, "timeout", "1e3", 5, { min: 100 }), 5);
  assert.equal(wholeNumber(problems, "timeout", " 250 ", 5, { min: 100 }), 250);
  assert.deepEqual(problems, [
    "timeout: -3 is not a whole number of at least 100",
    "timeout: 1e3 is not a whole number of at least 100",
  ]);
});
