/**
 * The abort-listener gauge: what each watched signal holds at the scrape, so that a part which
 * leaves one listener behind per wait shows as a count that climbs.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";

async function listeners(metrics: ReturnType<typeof createProcessMetrics>): Promise<Record<string, number>> {
  const metric = await metrics.registry.getSingleMetric("mintlens_abort_listeners")?.get();
  assert.ok(metric, "mintlens_abort_listeners is registered");
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.signal), v.value]));
}

describe("mintlens_abort_listeners", () => {
  test("counts each watched signal's listeners at every scrape, by name", async () => {
    const metrics = createProcessMetrics();
    const shutdown = new AbortController();
    const stop = new AbortController();
    const worker = AbortSignal.any([shutdown.signal, stop.signal]);
    metrics.watchAbortListeners("shutdown", shutdown.signal);
    metrics.watchAbortListeners("metadata:anvil", worker);
    assert.deepEqual(await listeners(metrics), { shutdown: 0, "metadata:anvil": 0 });

    const kept = () => {};
    shutdown.signal.addEventListener("abort", kept);
    for (let i = 0; i < 5; i++) worker.addEventListener("abort", () => {}, { once: true });
    assert.deepEqual(await listeners(metrics), { shutdown: 1, "metadata:anvil": 5 });

    shutdown.signal.removeEventListener("abort", kept);
    assert.deepEqual(await listeners(metrics), { shutdown: 0, "metadata:anvil": 5 });
  });

  test("a wait that forgets its listener climbs by one per wait; one that removes it stays flat", async () => {
    const metrics = createProcessMetrics();
    const leaky = new AbortController();
    const tidy = new AbortController();
    metrics.watchAbortListeners("leaky", leaky.signal);
    metrics.watchAbortListeners("tidy", tidy.signal);
    const waitLeaking = (signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1);
        signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
      });
    const waitTidy = (signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, 1);
        signal.addEventListener("abort", done, { once: true });
      });
    const seen: Record<string, number>[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 4; i++) await Promise.all([waitLeaking(leaky.signal), waitTidy(tidy.signal)]);
      seen.push(await listeners(metrics));
    }
    assert.deepEqual(seen, [
      { leaky: 4, tidy: 0 },
      { leaky: 8, tidy: 0 },
      { leaky: 12, tidy: 0 },
    ]);
  });
});
