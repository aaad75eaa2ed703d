/**
 * A process's Prometheus metrics, in one registry whichever parts it runs (API, indexers, metadata
 * workers; the webhook deliverers add theirs to it): request counts and
 * latencies per chain, protocol, operation and status; indexed height and lag per chain; preset
 * rate sources left out per chain; tokens whose metadata the worker looked for, by outcome; the
 * abort listeners on the signals the process's parts stop by; whether the shared rate limit store
 * answers.
 */
import { getEventListeners } from "node:events";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface ProcessMetrics {
  registry: Registry;
  /** Records one answered request. `status` is the gRPC code name (`OK`, `INVALID_ARGUMENT`, …). */
  observeRequest(
    labels: { chain: string; protocol: "rest" | "grpc"; operation: string; status: string },
    seconds: number,
  ): void;
  /** The indexer's position on a chain: the last indexed block and how far behind the node's head it is. */
  setIndexed(chain: string, indexedBlock: number, head: number): void;
  /** Preset exchange-rate sources the chain's node does not have, left out at start, by kind. */
  setRateSourcesLeftOut(chain: string, counts: Record<string, number>): void;
  /** One token's metadata looked for: `ok`, `none`, `failed`, `retry` (a temporary failure) or `dropped` (not stored: the token left the queue meanwhile). */
  countMetadata(chain: string, status: string): void;
  /**
   * Counts the `abort` listeners on `signal` under `name` at each scrape. A part that waits on a
   * long-lived signal and forgets its listener leaks one per wait, which only this count shows.
   */
  watchAbortListeners(name: string, signal: AbortSignal): void;
  /** Whether the shared rate limit store (`redis` or `postgres`) answers. */
  setRateLimitStoreUp(store: string, up: boolean): void;
  /** One point taken or charged by the process's own limiter because the shared store did not answer. */
  countRateLimitFallback(store: string): void;
}

export function createProcessMetrics(): ProcessMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "mintlens_" });
  const requests = new Counter({
    name: "mintlens_api_requests_total",
    help: "API requests answered, by chain, protocol, operation and status (gRPC code name)",
    labelNames: ["chain", "protocol", "operation", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "mintlens_api_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by chain, protocol, operation and status",
    labelNames: ["chain", "protocol", "operation", "status"] as const,
    buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const height = new Gauge({
    name: "mintlens_indexer_height",
    help: "Last block indexed, by chain",
    labelNames: ["chain"] as const,
    registers: [registry],
  });
  const lag = new Gauge({
    name: "mintlens_indexer_lag_blocks",
    help: "Blocks between the node's head and the last block indexed, by chain",
    labelNames: ["chain"] as const,
    registers: [registry],
  });
  const metadata = new Counter({
    name: "mintlens_metadata_tokens_total",
    help: "Tokens whose metadata the worker looked for, by chain and outcome (ok, none, failed, retry, deferred: handed back unfetched, its host busy or failing; dropped)",
    labelNames: ["chain", "status"] as const,
    registers: [registry],
  });
  const leftOut = new Gauge({
    name: "mintlens_rate_sources_left_out",
    help: "Preset exchange-rate sources (pool, usd_token, pegged_token) the chain's node does not have, left out at start",
    labelNames: ["chain", "kind"] as const,
    registers: [registry],
  });
  const storeUp = new Gauge({
    name: "mintlens_rate_limit_store_up",
    help: "1 while the shared rate limit store answers, 0 while each process limits keys on its own, by store (redis, postgres)",
    labelNames: ["store"] as const,
    registers: [registry],
  });
  const fallbacks = new Counter({
    name: "mintlens_rate_limit_fallbacks_total",
    help: "Rate limit points taken or charged by the process's own limiter because the shared store failed or was slow, by store",
    labelNames: ["store"] as const,
    registers: [registry],
  });
  const watched = new Map<string, AbortSignal>();
  new Gauge({
    name: "mintlens_abort_listeners",
    help: "Abort listeners on a signal the process's parts stop by, by signal (shutdown, metadata:<chain>): flat while the process runs",
    labelNames: ["signal"] as const,
    registers: [registry],
    collect() {
      for (const [name, signal] of watched)
        this.set({ signal: name }, getEventListeners(signal, "abort").length);
    },
  });
  return {
    registry,
    setRateLimitStoreUp(store, up) {
      storeUp.set({ store }, up ? 1 : 0);
    },
    countRateLimitFallback(store) {
      fallbacks.inc({ store });
    },
    watchAbortListeners(name, signal) {
      watched.set(name, signal);
    },
    setRateSourcesLeftOut(chain, counts) {
      for (const [kind, count] of Object.entries(counts)) leftOut.set({ chain, kind }, count);
    },
    countMetadata(chain, status) {
      metadata.inc({ chain, status });
    },
    observeRequest(labels, seconds) {
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    setIndexed(chain, indexedBlock, head) {
      height.set({ chain }, indexedBlock);
      lag.set({ chain }, Math.max(0, head - indexedBlock));
    },
  };
}
