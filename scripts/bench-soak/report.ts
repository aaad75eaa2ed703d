/**
 * The soak benchmark's verdicts: each judged series' trend over the window, in a markdown table,
 * and whether the work the soak is meant to run actually went on in every period of the window.
 */
import { JUDGED, type Sample, type SeriesSpec } from "./series.ts";
import { judge, lastMinutes, NOISE_FACTOR, RELATIVE_FLOOR, type Trend } from "./trend.ts";

export interface SeriesVerdict {
  key: string;
  label: string;
  first: number;
  last: number;
  trend: Trend;
}

/** Every judged series' trend over the last `windowMinutes` of the samples. */
export function verdictsOf(
  samples: readonly Sample[],
  windowMinutes: number,
  intervalMinutes: number,
): SeriesVerdict[] {
  return JUDGED.map((spec) => {
    const points = lastMinutes(
      samples.map((s) => ({ t: s.t, value: s.judged[spec.key] ?? Number.NaN })),
      windowMinutes,
      intervalMinutes,
    );
    return {
      key: spec.key,
      label: spec.label,
      first: points[0]?.value ?? Number.NaN,
      last: points.at(-1)?.value ?? Number.NaN,
      trend: judge(points, spec.unit),
    };
  });
}

/** The rule, as printed under the table. */
export function ruleText(): string {
  return (
    `A series grows when the least-squares line through the window's samples rises over the window by more than ` +
    `${NOISE_FACTOR} × the standard deviation of the samples around the line (a rise noise alone passes in one or ` +
    `two runs of a hundred at 16 samples) and by more than ${RELATIVE_FLOOR * 100}% of its mean and its least unit ` +
    `(1 MiB, 1 ms, 2 handles or listeners). Otherwise it is flat.`
  );
}

export function verdictTable(verdicts: readonly SeriesVerdict[]): string {
  const spec = (key: string) => JUDGED.find((s) => s.key === key) as SeriesSpec;
  const signed = (format: (v: number) => string, v: number) => (v < 0 ? `-${format(-v)}` : `+${format(v)}`);
  const lines = [
    "| series | first | last | mean | slope per hour | rise over window | 2 × residual SD | least rise | verdict |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const v of verdicts) {
    const f = spec(v.key).format;
    const t = v.trend;
    lines.push(
      `| ${v.label} | ${f(v.first)} | ${f(v.last)} | ${f(t.mean)} | ${signed(f, t.slope * 60)} | ${signed(f, t.rise)} | ` +
        `${f(t.noiseBound)} | ${f(t.leastRise)} | ${t.grows ? "**grows**" : "flat"} |`,
    );
  }
  return lines.join("\n");
}

/**
 * Why the window does not show the intended work, if it does not: new blocks indexed in every
 * period, the API answering at least half the load's rate in every period, and the metadata
 * worker looking for tokens in at least half of the periods.
 */
export function workloadProblems(
  baseline: Sample,
  samples: readonly Sample[],
  window: { minutes: number; intervalMinutes: number; rate: number },
): string[] {
  const inWindow = lastMinutes(
    samples.map((s) => ({ t: s.t, value: 0 })),
    window.minutes,
    window.intervalMinutes,
  ).length;
  const from = samples.length - inWindow;
  const problems: string[] = [];
  let idleBlocks = 0;
  let slowApi = 0;
  let metadataPeriods = 0;
  for (let i = from; i < samples.length; i++) {
    const before = i === 0 ? baseline : samples[i - 1];
    const now = samples[i];
    if (before === undefined || now === undefined) continue;
    const seconds = (now.t - before.t) * 60;
    if (now.recorded.indexedBlock <= before.recorded.indexedBlock) idleBlocks++;
    if (now.recorded.requests - before.recorded.requests < 0.5 * window.rate * seconds) slowApi++;
    if (now.recorded.metadataTokens > before.recorded.metadataTokens) metadataPeriods++;
  }
  if (idleBlocks > 0) problems.push(`no new block was indexed in ${idleBlocks} of ${inWindow} periods`);
  if (slowApi > 0)
    problems.push(
      `the API answered under half the load's ${window.rate} requests/s in ${slowApi} of ${inWindow} periods`,
    );
  if (metadataPeriods < inWindow / 2)
    problems.push(`the metadata worker looked for tokens in only ${metadataPeriods} of ${inWindow} periods`);
  return problems;
}
