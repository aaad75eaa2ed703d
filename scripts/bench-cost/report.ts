/** The cost benchmark's table, in markdown: per server, what the heavy key got and what it cost. */
import { type ClientCounts, quantile, type Window } from "./clients.ts";

export interface ModeRun {
  /** How the server limited the keys, as the table names it. */
  label: string;
  window: Window;
  heavy: ClientCounts;
  light: ClientCounts;
}

const perSecond = (n: number, window: Window) => (n / window.seconds).toFixed(1);
const cores = (cpu: number | undefined, window: Window) =>
  cpu === undefined ? "-" : (cpu / window.seconds).toFixed(2);
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : 1) : "-");

/** Answers other than `ok` as `n×status`, requests without one and requests not sent; "0" for none. */
function others(counts: ClientCounts, ok: readonly string[]): string {
  const listed = Object.entries(counts.statuses)
    .filter(([status]) => !ok.includes(status))
    .map(([status, n]) => `${n}×${status}`);
  if (counts.failed > 0) listed.push(`${counts.failed} without answer`);
  if (counts.skipped > 0) listed.push(`${counts.skipped} not sent (connections busy)`);
  return listed.length === 0 ? "0" : listed.join(", ");
}

export function modeTable(runs: readonly ModeRun[]): string {
  const lines = [
    "| server | heavy key: 200/s | 429/s | other answers | MB/s sent to it | API process, cores | PostgreSQL, cores | load generator, cores | light key: p50 ms | p99 ms | other answers |",
    "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const { label, window, heavy, light } of runs) {
    const latencies = [...light.latencies].sort((a, b) => a - b);
    lines.push(
      `| ${label} | ${perSecond(heavy.statuses["200"] ?? 0, window)} | ${perSecond(heavy.statuses["429"] ?? 0, window)} | ` +
        `${others(heavy, ["200", "429"])} | ${(heavy.bytes / window.seconds / 1e6).toFixed(1)} | ` +
        `${cores(window.apiCpu, window)} | ${cores(window.postgresCpu, window)} | ${cores(window.loadCpu, window)} | ` +
        `${ms(quantile(latencies, 0.5))} | ${ms(quantile(latencies, 0.99))} | ${others(light, ["200"])} |`,
    );
  }
  return lines.join("\n");
}
