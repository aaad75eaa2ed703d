/** The benchmark's tables, in markdown, and its verdicts against the API's targets. */
import { DEEP_PAGE, type DeepPair } from "./deep-pages.ts";
import type { Measurement } from "./measure.ts";

export const TARGETS = {
  /**
   * Milliseconds, for every operation at every size: a repeated question is answered from the
   * cache, and any other one reads the store.
   */
  p99: { cached: 20, uncached: 50 },
  /** Most a 1000th page's p99 may be over its first page's. */
  deepPage: 1.5,
  /** Most the p99 of series and rankings may grow from the small dataset to the large one. */
  growth: 1.5,
  /** Least share of the bare route's requests per second every operation must keep. */
  throughput: 0.4,
};

export interface SizeRun {
  sales: number;
  /** How the server ran: with its answer cache, or with it off (every request reads the store). */
  mode: "cached" | "uncached";
  measurements: Measurement[];
  /** Deep pages measured beside their first page. */
  pairs: DeepPair[];
}

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : 1) : "-");
const int = (x: number) => Math.round(x).toLocaleString("en");
const cpu = (x: number | undefined) => (x === undefined ? "-" : x.toFixed(3));

function bareOf(run: SizeRun): Measurement | undefined {
  return run.measurements.find((m) => m.operation.kind === "bare");
}

export function sizeTable(run: SizeRun): string {
  const bare = bareOf(run);
  const lines = [
    `${int(run.sales)} sales, ${run.mode === "cached" ? "answer cache on (the default)" : "answer cache off: every request reads the store"}:`,
    "",
    "| operation | req/s | p50 ms | p99 ms | non-2xx | % of bare | API CPU s / 1k req | PostgreSQL CPU s / 1k req |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const m of run.measurements) {
    const share = bare && bare.perSecond > 0 ? `${Math.round((100 * m.perSecond) / bare.perSecond)}%` : "-";
    const bad = m.non2xx + m.failed;
    lines.push(
      `| ${m.operation.name} | ${int(m.perSecond)} | ${ms(m.p50)} | ${ms(m.p99)} | ${bad === 0 ? "0" : `**${bad}** ${describe(m)}`} | ${share} | ${cpu(m.apiCpu)} | ${cpu(m.postgresCpu)} |`,
    );
  }
  return lines.join("\n");
}

function describe(m: Measurement): string {
  const statuses = Object.entries(m.statuses)
    .filter(([status]) => !status.startsWith("2"))
    .map(([status, n]) => `${n}×${status}`);
  if (m.failed > 0) statuses.push(`${m.failed} without answer`);
  return `(${statuses.join(", ")})`;
}

export function growthTable(small: SizeRun, large: SizeRun): string {
  const lines = [
    `p99 from ${int(small.sales)} to ${int(large.sales)} sales, ${large.mode} (judged for series and rankings):`,
    "",
    `| operation | p99 ms at ${int(small.sales)} | p99 ms at ${int(large.sales)} | ratio |`,
    "|---|---:|---:|---:|",
  ];
  for (const m of large.measurements) {
    const before = small.measurements.find((s) => s.operation.name === m.operation.name);
    if (!before) continue;
    const judged = m.operation.kind === "series" || m.operation.kind === "top";
    lines.push(
      `| ${m.operation.name}${judged ? "" : " (not judged)"} | ${ms(before.p99)} | ${ms(m.p99)} | ${(m.p99 / before.p99).toFixed(2)} |`,
    );
  }
  return lines.join("\n");
}

/** Each deep page's p99 beside its first page's, and their ratio. */
export function deepTable(run: SizeRun): string {
  const lines = [
    `Page ${DEEP_PAGE} against page 1 at ${int(run.sales)} sales, ${run.mode}:`,
    "",
    "| list | page 1 p50 / p99 ms | page 1000 p50 / p99 ms | p99 ratio |",
    "|---|---:|---:|---:|",
  ];
  for (const pair of run.pairs) {
    const first = run.measurements.find((m) => m.operation.name === pair.first);
    const deep = run.measurements.find((m) => m.operation.name === pair.deep);
    if (!first || !deep) continue;
    lines.push(
      `| ${pair.deep.replace(/ page \d+ /, " ")} | ${ms(first.p50)} / ${ms(first.p99)} | ${ms(deep.p50)} / ${ms(deep.p99)} | ${(deep.p99 / first.p99).toFixed(2)} |`,
    );
  }
  return lines.join("\n");
}

/** One line per target: PASS or FAIL, and what missed it. */
export function verdicts(runs: readonly SizeRun[]): { lines: string[]; passed: boolean } {
  const lines: string[] = [];
  let passed = true;
  const verdict = (label: string, misses: string[]) => {
    if (misses.length > 0) passed = false;
    lines.push(
      `${misses.length === 0 ? "PASS" : "FAIL"}  ${label}${misses.length ? `: ${misses.join("; ")}` : ""}`,
    );
  };
  const every = (pick: (run: SizeRun, m: Measurement) => string | undefined) =>
    runs.flatMap((run) =>
      run.measurements.map((m) => pick(run, m)).filter((x): x is string => x !== undefined),
    );

  verdict(
    "every answer 2xx",
    every((run, m) =>
      m.non2xx + m.failed > 0 ? `${m.operation.name} at ${int(run.sales)} ${describe(m)}` : undefined,
    ),
  );
  const mode = runs[0]?.mode ?? "cached";
  verdict(
    `p99 under ${TARGETS.p99[mode]} ms for every operation`,
    every((run, m) =>
      m.p99 < TARGETS.p99[run.mode] ? undefined : `${m.operation.name} ${ms(m.p99)} ms at ${int(run.sales)}`,
    ),
  );
  const deepMisses = runs.flatMap((run) =>
    run.pairs.flatMap((pair) => {
      const first = run.measurements.find((m) => m.operation.name === pair.first);
      const deep = run.measurements.find((m) => m.operation.name === pair.deep);
      if (!first || !deep) return [];
      const ratio = deep.p99 / first.p99;
      return ratio <= TARGETS.deepPage ? [] : [`${pair.deep} ${ratio.toFixed(2)}x at ${int(run.sales)}`];
    }),
  );
  if (runs.some((run) => run.pairs.length > 0))
    verdict(`every 1000th page's p99 within ${TARGETS.deepPage}x its first page's`, deepMisses);
  verdict(
    `every operation at least ${TARGETS.throughput * 100}% of the bare route's requests/s`,
    every((run, m) => {
      const bare = bareOf(run);
      if (!bare || m === bare) return undefined;
      const share = m.perSecond / bare.perSecond;
      return share >= TARGETS.throughput
        ? undefined
        : `${m.operation.name} ${Math.round(share * 100)}% at ${int(run.sales)}`;
    }),
  );
  const [small, large] = [runs[0], runs.at(-1)];
  if (small && large && small !== large) {
    const misses = large.measurements.flatMap((m) => {
      if (m.operation.kind !== "series" && m.operation.kind !== "top") return [];
      const before = small.measurements.find((s) => s.operation.name === m.operation.name);
      if (!before) return [];
      const ratio = m.p99 / before.p99;
      return ratio <= TARGETS.growth ? [] : [`${m.operation.name} ${ratio.toFixed(2)}x`];
    });
    verdict(
      `series and rankings p99 within ${TARGETS.growth}x from ${int(small.sales)} to ${int(large.sales)} sales`,
      misses,
    );
  }
  return { lines, passed };
}
