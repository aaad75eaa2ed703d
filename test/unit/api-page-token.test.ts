import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidArgumentError } from "../../src/api/errors.ts";
import {
  addressPart,
  microsPart,
  naturalPart,
  nullable,
  pageTokens,
  queryFingerprint,
} from "../../src/api/page-token.ts";
import type { Address } from "../../src/core/hex.ts";

const contracts = pageTokens(nullable(microsPart), addressPart);
const owners = pageTokens(naturalPart, addressPart);
const list = queryFingerprint("ListContracts", { chainId: 1, direction: "SORT_DIRECTION_ASC", types: [] });

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString("hex")}` as Address);
/** Years 0001 to 9999, to the microsecond. */
const micros = fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n });

function refused(run: () => unknown, field: string, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof InvalidArgumentError, String(error));
    assert.equal(error.field, field);
    assert.match(error.message, message);
    return true;
  });
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("page tokens", () => {
  test("a token gives back the key it was written with, for any key", () => {
    fc.assert(
      fc.property(fc.option(micros, { nil: null }), address, (time, at) => {
        const token = contracts.write(list, [time, at]);
        assert.match(token, /^[A-Za-z0-9_-]+$/, "URL-safe as it is");
        assert.deepEqual(contracts.read(token, list), [time, at]);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 100n - 1n }), address, (units, at) => {
        const holders = queryFingerprint("ListCollectionOwners", { contract: at });
        assert.deepEqual(owners.read(owners.write(holders, [units, at]), holders), [units, at]);
      }),
    );
  });

  test("the fingerprint is the operation and every parameter, in any order of naming", () => {
    const a = queryFingerprint("ListContracts", {
      chainId: 1,
      direction: "SORT_DIRECTION_ASC",
      types: ["X"],
    });
    assert.equal(
      a,
      queryFingerprint("ListContracts", { types: ["X"], direction: "SORT_DIRECTION_ASC", chainId: 1 }),
    );
    for (const other of [
      queryFingerprint("ListCollectionOwners", { chainId: 1, direction: "SORT_DIRECTION_ASC", types: ["X"] }),
      queryFingerprint("ListContracts", { chainId: 2, direction: "SORT_DIRECTION_ASC", types: ["X"] }),
      queryFingerprint("ListContracts", { chainId: 1, direction: "SORT_DIRECTION_DESC", types: ["X"] }),
      queryFingerprint("ListContracts", { chainId: 1, direction: "SORT_DIRECTION_ASC", types: ["X", "Y"] }),
      queryFingerprint("ListContracts", { chainId: 1, direction: "SORT_DIRECTION_ASC", types: [] }),
      queryFingerprint("ListContracts", {
        chainId: 1,
        direction: "SORT_DIRECTION_ASC",
        types: ["X"],
        more: 1,
      }),
    ]) {
      assert.notEqual(other, a);
    }
  });

  test("a token of another query is refused, naming page_token", () => {
    const token = contracts.write(list, [1_700_000_000_000_000n, `0x${"ab".repeat(20)}`]);
    const desc = queryFingerprint("ListContracts", {
      chainId: 1,
      direction: "SORT_DIRECTION_DESC",
      types: [],
    });
    refused(() => contracts.read(token, desc), "page_token", /^page_token: the token continues another list/);
    refused(() => owners.read(token, desc), "page_token", /another list/);
  });

  test("anything else is refused as no page token, naming page_token", () => {
    const good = [1_700_000_000_000_000n, `0x${"ab".repeat(20)}`];
    const malformed = [
      "",
      "%%%",
      "a b",
      "x".repeat(600),
      encode("text"),
      encode({ v: 1 }),
      encode([]),
      encode([2, list, ...good.map(String)]),
      encode(["1", list, "1", good[1]]),
      encode([1, list]),
      encode([1, list, "1700000000000000"]),
      encode([1, list, "1700000000000000", good[1], "extra"]),
      encode([1, list, 1700000000000000, good[1]]),
      encode([1, list, "1.5", good[1]]),
      encode([1, list, "01", good[1]]),
      encode([1, list, "253402300800000000", good[1]]),
      encode([1, list, "-62135596800000001", good[1]]),
      encode([1, list, "1", `0x${"AB".repeat(20)}`]),
      encode([1, list, "1", `0x${"ab".repeat(19)}`]),
      encode([1, list, "1", null]),
      `${encode([1, list, "1", good[1]])}!`,
      Buffer.from("[1,").toString("base64url"),
    ];
    for (const token of malformed) {
      refused(() => contracts.read(token, list), "page_token", /^page_token: not a page token/);
    }
    refused(() => owners.read(encode([1, list, "-1", good[1]]), list), "page_token", /not a page token/);
    refused(() => owners.read(encode([1, list, null, good[1]]), list), "page_token", /not a page token/);
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (token) => {
        try {
          contracts.read(token, list);
        } catch (error) {
          assert.ok(error instanceof InvalidArgumentError && error.field === "page_token", String(error));
        }
      }),
      { numRuns: 2000 },
    );
  });

  test("the field named is the caller's", () => {
    refused(() => contracts.read("%", list, "other_token"), "other_token", /^other_token: /);
  });
});
