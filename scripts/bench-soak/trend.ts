/**
 * Whether a series grows: a least-squares line through the samples of the judged window, and its
 * rise over the window against two bounds. Pure, so the rule is tested apart from any run.
 *
 * A series grows when the fitted rise exceeds both
 * - twice the standard deviation of the samples around the line: with 16 independent samples
 *   the fitted rise of pure noise has a standard deviation of about 0.8 of theirs, so noise alone
 *   passes this bound in one or two runs of a hundred; and
 * - the least rise that matters: 1% of the window's mean, and at least the series' `unit`. A
 *   single step up anywhere in the window fits a rise of less than 1.5 times the step, so a count
 *   whose unit is 2 is not called growing for one handle opened once and kept.
 * A series that falls, or rises less, is flat.
 */

export interface Point {
  /** Minutes since the load began. */
  t: number;
  value: number;
}

export interface Trend {
  samples: number;
  mean: number;
  /** Units per minute. */
  slope: number;
  /** The fitted line's rise from the window's first sample to its last. */
  rise: number;
  /** Standard deviation of the samples around the line (n − 2 degrees of freedom). */
  residualSd: number;
  /** The rise above which noise is ruled out: twice `residualSd`. */
  noiseBound: number;
  /** The least rise that matters: the larger of 1% of |mean| and the series' unit. */
  leastRise: number;
  grows: boolean;
}

export const NOISE_FACTOR = 2;
export const RELATIVE_FLOOR = 0.01;

/** Fits and judges one series; it needs at least three points at two different times. */
export function judge(points: readonly Point[], unit: number): Trend {
  const n = points.length;
  if (n < 3) throw new Error(`a trend needs at least 3 samples, not ${n}`);
  // Measured from the first value, so that large levels (bytes) keep their small changes exact.
  const base = points[0]?.value ?? 0;
  const meanT = points.reduce((s, p) => s + p.t, 0) / n;
  const meanRise = points.reduce((s, p) => s + (p.value - base), 0) / n;
  const mean = base + meanRise;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.t - meanT) ** 2;
    sxy += (p.t - meanT) * (p.value - base - meanRise);
  }
  if (sxx === 0) throw new Error("a trend needs samples at different times");
  const slope = sxy / sxx;
  let squares = 0;
  for (const p of points) squares += (p.value - base - (meanRise + slope * (p.t - meanT))) ** 2;
  const residualSd = Math.sqrt(squares / (n - 2));
  const first = points.reduce((m, p) => Math.min(m, p.t), Number.POSITIVE_INFINITY);
  const last = points.reduce((m, p) => Math.max(m, p.t), Number.NEGATIVE_INFINITY);
  const rise = slope * (last - first);
  const noiseBound = NOISE_FACTOR * residualSd;
  const leastRise = Math.max(RELATIVE_FLOOR * Math.abs(mean), unit);
  return {
    samples: n,
    mean,
    slope,
    rise,
    residualSd,
    noiseBound,
    leastRise,
    grows: rise > noiseBound && rise > leastRise,
  };
}

/**
 * The points of the last `minutes` of a run, up to the last point; `interval` (minutes) is the
 * sampling period, half of which absorbs the drift of each sample's time from its schedule.
 */
export function lastMinutes(points: readonly Point[], minutes: number, interval: number): Point[] {
  const end = points.reduce((m, p) => Math.max(m, p.t), Number.NEGATIVE_INFINITY);
  return points.filter((p) => p.t >= end - minutes - interval / 2);
}
