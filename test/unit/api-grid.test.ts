/**
 * The time-series grid: exactly duration / period points aligned to UTC period boundaries, the
 * last holding the instant just before timestampLt, and every fifteen-minute store bucket of the
 * data counted in exactly one point.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidArgumentError } from "../../src/api/errors.ts";
import { formatTimestamp } from "../../src/api/format.ts";
import {
  pointOf,
  type SeriesGrid,
  seriesGrid,
  startOfUtcDay,
  storeBucketStarts,
} from "../../src/api/grid.ts";
import {
  checkSeriesShape,
  DURATION,
  type Duration,
  GROUP_BY_PERIOD,
  type GroupByPeriod,
  type Instant,
  MAX_SECONDS,
  MIN_SECONDS,
  parseTimestamp,
} from "../../src/api/params.ts";

const at = (text: string) => parseTimestamp(text, "timestamp_lt") as Instant;
const stamps = (grid: SeriesGrid) => grid.points.map((p) => formatTimestamp(p.start));
const NOW = Date.parse("2024-03-10T17:42:13.250Z");

/** Every (duration, period) pair the API accepts. */
const VALID_PAIRS: [Duration, GroupByPeriod][] = DURATION.names.flatMap((d) =>
  GROUP_BY_PERIOD.names
    .filter((p) => {
      try {
        checkSeriesShape(d, p);
        return true;
      } catch {
        return false;
      }
    })
    .map((p): [Duration, GroupByPeriod] => [d, p]),
);

describe("the grid of a series", () => {
  test("13 of the 15 pairs make a series", () => {
    assert.equal(VALID_PAIRS.length, 13);
  });

  test("by default it ends at the start of the current UTC day: yesterday, hour by hour", () => {
    const grid = seriesGrid({ duration: "DURATION_1_DAY", period: "GROUP_BY_PERIOD_1_HOUR", now: NOW });
    assert.deepEqual(grid.timestampLt, at("2024-03-10T00:00:00Z"));
    assert.equal(grid.points.length, 24);
    assert.equal(stamps(grid)[0], "2024-03-09T00:00:00Z");
    assert.equal(stamps(grid)[23], "2024-03-09T23:00:00Z");
    assert.equal(formatTimestamp(grid.start), "2024-03-09T00:00:00Z");
    assert.equal(formatTimestamp(grid.end), "2024-03-10T00:00:00Z");
    assert.deepEqual(startOfUtcDay(new Date(NOW)), at("2024-03-10T00:00:00Z"));
    assert.deepEqual(startOfUtcDay(Date.parse("1969-07-20T20:17:40Z")), at("1969-07-20T00:00:00Z"));
  });

  test("days are UTC days; seven of them end with the day before timestampLt's", () => {
    const grid = seriesGrid({
      duration: "DURATION_7_DAYS",
      period: "GROUP_BY_PERIOD_1_DAY",
      timestampLt: at("2024-03-10T02:00:00+05:00"), // 2024-03-09T21:00:00Z
      now: NOW,
    });
    assert.deepEqual(stamps(grid), [
      "2024-03-03T00:00:00Z",
      "2024-03-04T00:00:00Z",
      "2024-03-05T00:00:00Z",
      "2024-03-06T00:00:00Z",
      "2024-03-07T00:00:00Z",
      "2024-03-08T00:00:00Z",
      "2024-03-09T00:00:00Z",
    ]);
    // The last day is partial: it counts up to timestampLt.
    assert.equal(formatTimestamp(grid.end), "2024-03-09T21:00:00Z");
    assert.equal(formatTimestamp(grid.points[6]?.dataEnd as number), "2024-03-09T21:00:00Z");
    assert.equal(formatTimestamp(grid.points[5]?.dataEnd as number), "2024-03-09T00:00:00Z");
  });

  test("timestampLt on a boundary: the last point is the period before it, whole", () => {
    const grid = seriesGrid({
      duration: "DURATION_1_HOUR",
      period: "GROUP_BY_PERIOD_15_MINUTES",
      timestampLt: at("2024-03-10T12:00:00Z"),
      now: NOW,
    });
    assert.deepEqual(stamps(grid), [
      "2024-03-10T11:00:00Z",
      "2024-03-10T11:15:00Z",
      "2024-03-10T11:30:00Z",
      "2024-03-10T11:45:00Z",
    ]);
    assert.equal(formatTimestamp(grid.end), "2024-03-10T12:00:00Z");
  });

  test("one nanosecond past a boundary: the last point is the period that starts there", () => {
    const grid = seriesGrid({
      duration: "DURATION_1_HOUR",
      period: "GROUP_BY_PERIOD_15_MINUTES",
      timestampLt: at("2024-03-10T12:00:00.000000001Z"),
      now: NOW,
    });
    assert.deepEqual(stamps(grid), [
      "2024-03-10T11:15:00Z",
      "2024-03-10T11:30:00Z",
      "2024-03-10T11:45:00Z",
      "2024-03-10T12:00:00Z",
    ]);
    // Nothing of the last fifteen minutes is counted: none of its store bucket is complete.
    assert.equal(formatTimestamp(grid.end), "2024-03-10T12:00:00Z");
    assert.deepEqual(grid.points[3], { start: grid.end, dataEnd: grid.end });
  });

  test("timestampLt between fifteen-minute boundaries: counted up to the boundary before it", () => {
    const grid = seriesGrid({
      duration: "DURATION_1_DAY",
      period: "GROUP_BY_PERIOD_1_HOUR",
      timestampLt: at("2024-03-10T12:37:30Z"),
      now: NOW,
    });
    assert.equal(stamps(grid)[0], "2024-03-09T13:00:00Z");
    assert.equal(stamps(grid)[23], "2024-03-10T12:00:00Z");
    assert.equal(formatTimestamp(grid.end), "2024-03-10T12:30:00Z");
    assert.deepEqual(storeBucketStarts(grid.points[23] as never).map(formatTimestamp), [
      "2024-03-10T12:00:00Z",
      "2024-03-10T12:15:00Z",
    ]);
  });

  test("before 1970 as after: boundaries are UTC midnights and hours", () => {
    const grid = seriesGrid({
      duration: "DURATION_1_DAY",
      period: "GROUP_BY_PERIOD_1_DAY",
      timestampLt: at("1969-12-31T10:00:00Z"),
      now: NOW,
    });
    assert.deepEqual(stamps(grid), ["1969-12-31T00:00:00Z"]);
  });

  test("a series that would start before year 0001 names timestamp_lt; the end of year 9999 is fine", () => {
    assert.throws(
      () =>
        seriesGrid({
          duration: "DURATION_365_DAYS",
          period: "GROUP_BY_PERIOD_1_DAY",
          timestampLt: at("0001-06-01T00:00:00Z"),
          now: NOW,
        }),
      (e: unknown) => e instanceof InvalidArgumentError && e.field === "timestamp_lt",
    );
    const first = seriesGrid({
      duration: "DURATION_1_DAY",
      period: "GROUP_BY_PERIOD_1_DAY",
      timestampLt: at("0001-01-02T00:00:00Z"),
      now: NOW,
    });
    assert.deepEqual(stamps(first), ["0001-01-01T00:00:00Z"]);
    const last = seriesGrid({
      duration: "DURATION_1_HOUR",
      period: "GROUP_BY_PERIOD_1_HOUR",
      timestampLt: at("9999-12-31T23:59:59.999999999Z"),
      now: NOW,
    });
    assert.deepEqual(stamps(last), ["9999-12-31T23:00:00Z"]);
  });

  test("a pair that makes no series names group_by_period", () => {
    for (const [duration, period] of [
      ["DURATION_1_HOUR", "GROUP_BY_PERIOD_1_DAY"],
      ["DURATION_365_DAYS", "GROUP_BY_PERIOD_15_MINUTES"],
    ] as const) {
      assert.throws(
        () => seriesGrid({ duration, period, now: NOW }),
        (e: unknown) => e instanceof InvalidArgumentError && e.field === "group_by_period",
      );
    }
  });
});

describe("the grid's invariants, for every pair and any timestampLt", () => {
  const instant = fc
    .record({
      // Late enough that a year-long series starts after year 0001.
      seconds: fc.integer({ min: MIN_SECONDS + 366 * 86_400, max: MAX_SECONDS }),
      nanos: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 999_999_999 })),
    })
    .map(({ seconds, nanos }): Instant => ({ seconds, nanos }));
  // On a boundary of 15 minutes, an hour or a day, or a little past one.
  const aligned = fc
    .tuple(
      fc.integer({ min: -700_000, max: 1_000_000 }),
      fc.constantFrom(900, 3600, 86_400),
      fc.constantFrom(0, 0, 1, 999_999_999),
    )
    .map(([k, unit, nanos]): Instant => ({ seconds: k * unit, nanos }));

  test("count, order, alignment, the last point, the data counted, and the store buckets", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...VALID_PAIRS),
        fc.oneof(instant, aligned),
        ([duration, period], timestampLt) => {
          const grid = seriesGrid({ duration, period, timestampLt, now: NOW });
          const { points, periodSeconds } = grid.shape;
          const lt = BigInt(timestampLt.seconds) * 1_000_000_000n + BigInt(timestampLt.nanos);
          const ns = (s: number) => BigInt(s) * 1_000_000_000n;

          // Exactly duration / period points, ascending, one period apart, aligned in UTC.
          assert.equal(grid.points.length, points);
          assert.equal(points * periodSeconds, grid.shape.durationSeconds);
          grid.points.forEach((p, i) => {
            assert.equal(((p.start % periodSeconds) + periodSeconds) % periodSeconds, 0);
            assert.equal(p.start, grid.start + i * periodSeconds);
          });

          // The last point holds the instant just before timestampLt.
          const last = grid.points[points - 1] as (typeof grid.points)[number];
          assert.ok(ns(last.start) <= lt - 1n && lt - 1n < ns(last.start + periodSeconds));

          // Data counted: [start, end), end on a store boundary, at most 15 minutes before timestampLt.
          assert.equal(grid.start, (grid.points[0] as (typeof grid.points)[number]).start);
          assert.equal(((grid.end % 900) + 900) % 900, 0);
          assert.ok(ns(grid.end) <= lt && lt - ns(grid.end) < ns(900));
          if (timestampLt.nanos === 0 && timestampLt.seconds % 900 === 0) assert.equal(ns(grid.end), lt);

          // The points' data tile [start, end): each store bucket in it belongs to exactly one point.
          let cursor = grid.start;
          for (const p of grid.points) {
            assert.ok(p.dataEnd >= p.start && p.dataEnd <= p.start + periodSeconds);
            assert.equal(p.start, cursor);
            cursor = p.dataEnd;
          }
          assert.equal(cursor, grid.end);
          const buckets = grid.points.flatMap(storeBucketStarts);
          assert.equal(buckets.length, (grid.end - grid.start) / 900);
          buckets.forEach((b, i) => {
            assert.equal(b, grid.start + i * 900);
            assert.equal(
              grid.points[pointOf(grid, b) as number]?.start,
              b - ((b - grid.start) % periodSeconds),
            );
          });
          assert.equal(pointOf(grid, grid.start - 900), undefined);
          assert.equal(pointOf(grid, grid.end), undefined);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test("with timestampLt given, the current time plays no part", () => {
    fc.assert(
      fc.property(fc.constantFrom(...VALID_PAIRS), instant, ([duration, period], timestampLt) => {
        const a = seriesGrid({ duration, period, timestampLt, now: NOW });
        const b = seriesGrid({ duration, period, timestampLt: { ...timestampLt }, now: 0 });
        assert.deepEqual(a, b);
      }),
    );
  });
});
