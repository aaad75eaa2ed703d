/**
 * What the soak benchmark reads from a scrape, and how a period's scrapes make its sample (read
 * from the exposition of the process's own metrics registry, not from a hand-written text); and
 * when its window does not show the work it is meant to run.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { workloadProblems } from "../../scripts/bench-soak/report.ts";
import {
  JUDGED,
  parseMetrics,
  readScrape,
  reduce,
  type Sample,
  sampleOf,
} from "../../scripts/bench-soak/series.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";

describe("soak series", () => {
  test("a scrape of the process's registry holds every judged series, summed over its labels", async () => {
    const metrics = createProcessMetrics();
    const shutdown = new AbortController();
    const worker = new AbortController();
    metrics.watchAbortListeners("shutdown", shutdown.signal);
    metrics.watchAbortListeners("metadata:anvil", worker.signal);
    for (let i = 0; i < 3; i++) shutdown.signal.addEventListener("abort", () => {});
    for (let i = 0; i < 4; i++) worker.signal.addEventListener("abort", () => {});
    metrics.countMetadata("anvil", "ok");
    metrics.countMetadata("anvil", "ok");
    metrics.countMetadata("anvil", "failed");
    metrics.setIndexed("anvil", 120, 125);

    const values = readScrape(await metrics.registry.metrics());
    for (const spec of JUDGED) assert.ok(values.has(spec.metric), spec.metric);
    assert.equal(values.get("mintlens_abort_listeners"), 7);
    assert.equal(values.get("mintlens_metadata_tokens_total"), 3);
    assert.equal(values.get("mintlens_indexer_height"), 120);
    const rss = values.get("mintlens_process_resident_memory_bytes") ?? 0;
    assert.ok(rss > 1024 * 1024, `RSS ${rss}`);
  });

  test("a scrape without a judged series is refused", () => {
    assert.throws(
      () => readScrape("mintlens_process_resident_memory_bytes 1\n"),
      /lack mintlens_nodejs_heap_size_used_bytes/,
    );
  });

  test("label values may hold spaces and braces; comments and blank lines are skipped", () => {
    const text = [
      "# HELP x a metric",
      "# TYPE x gauge",
      'x{a="one two",b="}"} 2',
      "x 3 1700000000000",
      "",
      "y_total 1e3",
    ].join("\n");
    assert.deepEqual(
      [...parseMetrics(text)],
      [
        ["x", 5],
        ["y_total", 1000],
      ],
    );
  });

  test("each reduction picks what it names", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e9, max: 1e9, noNaN: true }), { minLength: 1, maxLength: 30 }),
        (xs) => {
          const sorted = [...xs].sort((a, b) => a - b);
          const median = reduce(xs, "median");
          const below = sorted.filter((x) => x < median).length;
          const above = sorted.filter((x) => x > median).length;
          return (
            reduce(xs, "min") === sorted[0] &&
            reduce(xs, "max") === sorted.at(-1) &&
            reduce(xs, "last") === xs.at(-1) &&
            below <= xs.length / 2 &&
            above <= xs.length / 2
          );
        },
      ),
    );
  });

  test("a period's sample: memory at its lowest, the delay's median p99, counts at the end", () => {
    const scrape = (rss: number, p99: number, max: number, listeners: number, requests: number) => {
      const values = new Map<string, number>();
      for (const spec of JUDGED) values.set(spec.metric, 1);
      values.set("mintlens_process_resident_memory_bytes", rss);
      values.set("mintlens_nodejs_eventloop_lag_p99_seconds", p99);
      values.set("mintlens_nodejs_eventloop_lag_max_seconds", max);
      values.set("mintlens_abort_listeners", listeners);
      values.set("mintlens_api_requests_total", requests);
      return values;
    };
    const sample = sampleOf(
      [scrape(300, 0.02, 0.05, 10, 100), scrape(280, 0.09, 0.4, 15, 350), scrape(310, 0.03, 0.06, 20, 600)],
      1,
      new Date(0),
    );
    assert.equal(sample.scrapes, 3);
    assert.equal(sample.judged.rss, 280);
    assert.equal(sample.judged.eventLoopP99, 0.03);
    assert.equal(sample.judged.abortListeners, 20);
    assert.equal(sample.recorded.eventLoopMax, 0.4);
    assert.equal(sample.recorded.requests, 600);
  });
});

describe("soak workload", () => {
  const sample = (t: number, block: number, requests: number, tokens: number): Sample => ({
    t,
    at: new Date(0).toISOString(),
    scrapes: 12,
    judged: {},
    recorded: { eventLoopMax: 0, requests, metadataTokens: tokens, indexedBlock: block },
  });
  const run = (stalledAt?: number) =>
    Array.from({ length: 20 }, (_, i) => {
      const t = i + 1;
      const block = 100 + 20 * t - (stalledAt !== undefined && t >= stalledAt ? 20 : 0);
      return sample(t, block, 2400 * t, 50 * t);
    });
  const window = { minutes: 15, intervalMinutes: 1, rate: 50 };

  test("a window with blocks, answers and metadata in every minute has no problem", () => {
    assert.deepEqual(workloadProblems(sample(0, 100, 0, 0), run(), window), []);
  });

  test("a minute without a new block in the window is a problem; one before it is not", () => {
    assert.deepEqual(workloadProblems(sample(0, 100, 0, 0), run(12), window), [
      "no new block was indexed in 1 of 16 periods",
    ]);
    assert.deepEqual(workloadProblems(sample(0, 100, 0, 0), run(3), window), []);
  });

  test("an API answering under half the rate, or an idle metadata worker, is a problem", () => {
    const slow = run().map((s) => ({ ...s, recorded: { ...s.recorded, requests: 1000 * s.t } }));
    assert.deepEqual(workloadProblems(sample(0, 100, 0, 0), slow, window), [
      "the API answered under half the load's 50 requests/s in 16 of 16 periods",
    ]);
    const idle = run().map((s) => ({ ...s, recorded: { ...s.recorded, metadataTokens: 7 } }));
    assert.deepEqual(workloadProblems(sample(0, 100, 0, 0), idle, window), [
      "the metadata worker looked for tokens in only 0 of 16 periods",
    ]);
  });
});
