/**
 * What the soak benchmark reads from the process's `/metrics`: the series it judges, and the
 * counters that show the work went on meanwhile. It scrapes every few seconds and makes one
 * sample of each period's scrapes: memory at its lowest (what is left after the collector has
 * run, rather than wherever the sawtooth of allocation happens to be), the event-loop delay's
 * p99 as the median of the scrapes' (each covers the time since the one before, as the delay
 * histogram is reset at each scrape), and counts as they stand at the period's end. Pure: texts
 * in, numbers out.
 */

/** How a period's scrapes make its one value. */
export type Reduce = "min" | "median" | "max" | "last";

export interface SeriesSpec {
  key: string;
  label: string;
  reduce: Reduce;
  /** The Prometheus metric; its values under every label set are added up. */
  metric: string;
  /** The smallest rise that counts (see trend.ts), in the metric's unit. */
  unit: number;
  format(value: number): string;
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
const ms = (seconds: number) => `${(seconds * 1000).toFixed(2)} ms`;
const count = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** The series judged for growth. */
export const JUDGED: readonly SeriesSpec[] = [
  {
    key: "rss",
    label: "RSS (lowest)",
    reduce: "min",
    metric: "mintlens_process_resident_memory_bytes",
    unit: MIB,
    format: mib,
  },
  {
    key: "heapUsed",
    label: "heap used (lowest)",
    reduce: "min",
    metric: "mintlens_nodejs_heap_size_used_bytes",
    unit: MIB,
    format: mib,
  },
  {
    key: "eventLoopP99",
    label: "event-loop delay p99 (median)",
    reduce: "median",
    metric: "mintlens_nodejs_eventloop_lag_p99_seconds",
    unit: 0.001,
    format: ms,
  },
  {
    key: "activeHandles",
    label: "active handles",
    reduce: "last",
    metric: "mintlens_nodejs_active_handles_total",
    unit: 2,
    format: count,
  },
  {
    key: "activeResources",
    label: "active resources",
    reduce: "last",
    metric: "mintlens_nodejs_active_resources_total",
    unit: 2,
    format: count,
  },
  {
    key: "openFds",
    label: "open file descriptors",
    reduce: "last",
    metric: "mintlens_process_open_fds",
    unit: 2,
    format: count,
  },
  {
    key: "abortListeners",
    label: "abort listeners",
    reduce: "last",
    metric: "mintlens_abort_listeners",
    unit: 2,
    format: count,
  },
];

/** Read at each sample and kept, not judged: the work done, and the delay's worst moment. */
export const RECORDED: Record<
  "eventLoopMax" | "requests" | "metadataTokens" | "indexedBlock",
  { metric: string; reduce: Reduce }
> = {
  eventLoopMax: { metric: "mintlens_nodejs_eventloop_lag_max_seconds", reduce: "max" },
  requests: { metric: "mintlens_api_requests_total", reduce: "last" },
  metadataTokens: { metric: "mintlens_metadata_tokens_total", reduce: "last" },
  indexedBlock: { metric: "mintlens_indexer_height", reduce: "last" },
};

/**
 * The sum of each metric's values over its label sets, by name, from Prometheus's text format.
 * Histogram and summary parts keep their suffixed names (`_bucket`, `_sum`, `_count`).
 */
export function parseMetrics(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    // name, optional {labels} (whose values may hold spaces), value, optional timestamp.
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})?\s+(\S+)/.exec(line);
    if (match === null) continue;
    const [, name, raw] = match;
    const value = Number(raw);
    if (name === undefined || Number.isNaN(value)) continue;
    sums.set(name, (sums.get(name) ?? 0) + value);
  }
  return sums;
}

export interface Sample {
  /** Minutes since the load began, at the period's last scrape. */
  t: number;
  at: string;
  /** Scrapes the period's values were made of. */
  scrapes: number;
  judged: Record<string, number>;
  recorded: Record<keyof typeof RECORDED, number>;
}

/** One scrape's values of the judged and recorded metrics; a judged metric it lacks is an error. */
export function readScrape(text: string): Map<string, number> {
  const sums = parseMetrics(text);
  const missing = JUDGED.filter((spec) => !sums.has(spec.metric)).map((spec) => spec.metric);
  if (missing.length > 0) throw new Error(`the process's metrics lack ${missing.join(", ")}`);
  return sums;
}

export function reduce(values: readonly number[], how: Reduce): number {
  if (values.length === 0) return Number.NaN;
  if (how === "min") return Math.min(...values);
  if (how === "max") return Math.max(...values);
  if (how === "last") return values.at(-1) as number;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle)
    ? ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
    : (sorted[Math.floor(middle)] as number);
}

/** One period's sample from its scrapes, oldest first. */
export function sampleOf(scrapes: readonly Map<string, number>[], t: number, at: Date): Sample {
  const of = (metric: string, how: Reduce) =>
    reduce(
      scrapes.map((s) => s.get(metric) ?? 0),
      how,
    );
  const judged = Object.fromEntries(JUDGED.map((spec) => [spec.key, of(spec.metric, spec.reduce)]));
  const recorded = Object.fromEntries(
    Object.entries(RECORDED).map(([key, { metric, reduce: how }]) => [key, of(metric, how)]),
  ) as Sample["recorded"];
  return { t, at: at.toISOString(), scrapes: scrapes.length, judged, recorded };
}
