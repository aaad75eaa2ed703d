/**
 * What the soak benchmark reads from a scrape, and how a period's scrapes make its sample: read
 * from the exposition of the process's own metrics registry, not from a hand-written text.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { JUDGED, parseMetrics, readScrape, reduce, sampleOf } from "../../scripts/bench-soak/series.ts";
import { createApiMetrics } from "../../src/api/metrics.ts";

describe("soak series", () => {
  test("a scrape of the process's registry holds every judged series, summed over its labels", async () => {
    const metrics = createApiMetrics();
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
