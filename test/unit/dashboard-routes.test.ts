/**
 * The dashboard's pure parts: its page links and the router read each other back, the search box
 * tells an address from a token, the period pickers offer exactly the windows the API accepts,
 * and a 429's wait is read from its `Retry-After`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { retryAfterSeconds } from "../../dashboard/src/api.ts";
import {
  DURATIONS,
  defaultPeriod,
  METRICS,
  PERIODS,
  parseRoute,
  parseSearch,
  periodsFor,
  type Route,
  routeHash,
} from "../../dashboard/src/route.ts";
import { checkSeriesShape, DURATION, GROUP_BY_PERIOD, METRIC } from "../../src/api/params.ts";

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString("hex")}`);
const tokenId = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }).map(String);

const route: fc.Arbitrary<Route> = fc.oneof(
  fc.record({
    page: fc.constant("top" as const),
    metric: fc.constantFrom(...METRICS),
    duration: fc.constantFrom(...DURATIONS),
  }),
  fc
    .record({ address, duration: fc.constantFrom(...DURATIONS), pick: fc.nat() })
    .map(({ address, duration, pick }) => {
      const periods = periodsFor(duration);
      return {
        page: "collection" as const,
        address,
        duration,
        period: periods[pick % periods.length] ?? defaultPeriod(duration),
      };
    }),
  fc.record({ page: fc.constant("nft" as const), address, tokenId }),
  fc.record({ page: fc.constant("wallet" as const), address, includeSpam: fc.boolean() }),
);

describe("the dashboard's routes", () => {
  test("every page's link reads back as that page", () => {
    fc.assert(fc.property(route, (r) => assert.deepEqual(parseRoute(routeHash(r)), { ...r })));
  });

  test("an address is read in any case, a token id without leading zeros", () => {
    const upper = "0xE7F1725E7734CE288F8367E1BB143E90BB3F0512";
    assert.deepEqual(parseRoute(`#/nft/${upper}/007`), {
      page: "nft",
      address: upper.toLowerCase(),
      tokenId: "7",
    });
    assert.equal(parseRoute("#/collection/0x1234").page, "unknown");
    assert.equal(parseRoute("#/nft/0xe7f1725e7734ce288f8367e1bb143e90bb3f0512/-1").page, "unknown");
  });

  test("a window the API refuses is replaced by one it accepts", () => {
    const r = parseRoute(
      "#/collection/0xe7f1725e7734ce288f8367e1bb143e90bb3f0512?duration=DURATION_1_HOUR&period=GROUP_BY_PERIOD_1_DAY",
    );
    assert.deepEqual(r, {
      page: "collection",
      address: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
      duration: "DURATION_1_HOUR",
      period: "GROUP_BY_PERIOD_15_MINUTES",
    });
  });

  test("the pickers offer the API's own names, and exactly the windows it accepts", () => {
    assert.deepEqual([...METRICS], [...METRIC.names]);
    assert.deepEqual([...DURATIONS], [...DURATION.names]);
    assert.deepEqual([...PERIODS], [...GROUP_BY_PERIOD.names]);
    for (const duration of DURATIONS) {
      const accepted = PERIODS.filter((period) => {
        try {
          checkSeriesShape(duration, period);
          return true;
        } catch {
          return false;
        }
      });
      assert.deepEqual(periodsFor(duration), accepted, duration);
      assert.ok(accepted.includes(defaultPeriod(duration)), duration);
    }
  });
});

describe("the dashboard's search box", () => {
  test("an address, or an address and a token id however separated", () => {
    fc.assert(
      fc.property(address, tokenId, fc.constantFrom(" ", "/", "#", " / ", ":"), (a, id, separator) => {
        assert.deepEqual(parseSearch(`  ${a.toUpperCase().replace("0X", "0x")} `), {
          kind: "address",
          address: a,
        });
        assert.deepEqual(parseSearch(`${a}${separator}${id}`), { kind: "nft", address: a, tokenId: id });
      }),
    );
  });

  test("anything else is refused", () => {
    for (const text of ["", "0x12", "hello", "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512 abc", "123"]) {
      assert.deepEqual(parseSearch(text), { kind: "invalid" }, text);
    }
  });
});

describe("the dashboard's wait after a 429", () => {
  test("seconds or an HTTP date, at most a minute; one second when absent or unreadable", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(retryAfterSeconds("3", now), 3);
    assert.equal(retryAfterSeconds("0", now), 0);
    assert.equal(retryAfterSeconds("3600", now), 60);
    assert.equal(retryAfterSeconds("Thu, 01 Jan 2026 00:00:05 GMT", now), 5);
    assert.equal(retryAfterSeconds(null, now), 1);
    assert.equal(retryAfterSeconds("soon", now), 1);
    assert.equal(retryAfterSeconds("-4", now), 1);
  });
});
