/**
 * The soak benchmark's rule for a growing series: a least-squares rise over the window beyond
 * twice the residuals' deviation and beyond the least rise that matters.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { judge, lastMinutes, type Point } from "../../scripts/bench-soak/trend.ts";

const minutes = (values: readonly number[]): Point[] => values.map((value, t) => ({ t, value }));
const close = (a: number, b: number, scale = 1) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(scale));

describe("soak trend", () => {
  test("fits the least-squares line a hand computation gives", () => {
    // Mean time 1.5 and value 2.75; Sxx 5, Sxy 5.5: slope 1.1, fitted 1.1, 2.2, 3.3, 4.4;
    // residuals -0.1, 0.8, -1.3, 0.6, squares 2.7 over 2 degrees of freedom.
    const trend = judge(minutes([1, 3, 2, 5]), 1);
    assert.ok(close(trend.slope, 1.1));
    assert.ok(close(trend.rise, 3.3));
    assert.ok(close(trend.residualSd, Math.sqrt(1.35)));
    assert.ok(close(trend.noiseBound, 2 * Math.sqrt(1.35)));
    assert.equal(trend.grows, true);
  });

  test("a constant series is flat, whatever its level", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e12, max: 1e12, noNaN: true }),
        fc.integer({ min: 3, max: 60 }),
        (v, n) => {
          const trend = judge(minutes(Array(n).fill(v)), 1);
          return trend.rise === 0 && trend.residualSd === 0 && !trend.grows;
        },
      ),
    );
  });

  test("a straight line grows exactly when its rise is beyond the least rise that matters", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.integer({ min: 3, max: 40 }),
        fc.double({ min: 0.001, max: 1e6, noNaN: true }),
        (level, slope, n, unit) => {
          const trend = judge(minutes(Array.from({ length: n }, (_, t) => level + slope * t)), unit);
          const rise = slope * (n - 1);
          assert.ok(close(trend.rise, rise, level + Math.abs(rise)));
          // Away from the boundary, where rounding could decide either way.
          const least = Math.max(0.01 * Math.abs(trend.mean), unit);
          if (rise > least * 1.001) assert.equal(trend.grows, true);
          if (rise < least * 0.999) assert.equal(trend.grows, false);
        },
      ),
    );
  });

  test("one step up, anywhere, of under two thirds of the unit is never growth", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 60 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        (n, where, size, level) => {
          const unit = 2;
          const step = (size * 2 * unit) / 3;
          const at = Math.floor(where * n);
          const values = Array.from({ length: n }, (_, t) => level + (t >= at ? step : 0));
          return !judge(minutes(values), unit).grows;
        },
      ),
    );
  });

  test("a series that falls is flat; one that climbs by a listener a second over noise grows", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 16, maxLength: 16 }),
        (noise) => {
          const falling = judge(minutes(noise.map((e, t) => 500 - 20 * t + e)), 2);
          // 60 listeners a minute, as a wait that leaks one per second adds.
          const leaking = judge(minutes(noise.map((e, t) => 10 + 60 * t + e)), 2);
          return !falling.grows && leaking.grows;
        },
      ),
    );
  });

  test("the window is the last minutes of the run, with half an interval of slack", () => {
    const points = minutes(Array.from({ length: 21 }, (_, t) => t));
    const drifted = points.map((p) => ({ ...p, t: p.t + 0.004 }));
    assert.deepEqual(
      lastMinutes(points, 15, 1).map((p) => p.t),
      Array.from({ length: 16 }, (_, i) => i + 5),
    );
    assert.equal(lastMinutes(drifted, 15, 1).length, 16);
    assert.equal(lastMinutes(points, 100, 1).length, 21);
  });

  test("refuses a window it cannot fit", () => {
    assert.throws(() => judge(minutes([1, 2]), 1), /at least 3 samples/);
    assert.throws(
      () =>
        judge(
          [1, 2, 3].map((value) => ({ t: 4, value })),
          1,
        ),
      /different times/,
    );
  });
});
