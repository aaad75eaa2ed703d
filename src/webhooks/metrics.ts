/**
 * The deliverers' Prometheus metrics, registered in the process's registry (the API's metrics
 * listener serves them under `mintlens start`): attempts by outcome, events delivered, how long
 * attempts take, and how many subscriptions are paused, per chain.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { PostOutcome } from "./target.ts";

export interface WebhookMetrics {
  /** One attempt to deliver a batch, by how it went, and how long it took. */
  countDelivery(chain: string, outcome: PostOutcome, seconds: number, events: number): void;
  /** The chain's paused subscriptions, counted again at each refresh. */
  setPaused(chain: string, paused: number): void;
}

export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const deliveries = new Counter({
    name: "mintlens_webhook_deliveries_total",
    help: "Attempts to deliver a batch of events to a webhook, by chain and outcome (ok, http_error, timeout, connection_error, refused)",
    labelNames: ["chain", "outcome"] as const,
    registers: [registry],
  });
  const events = new Counter({
    name: "mintlens_webhook_events_delivered_total",
    help: "Events delivered to webhooks (answered with a 2xx), by chain",
    labelNames: ["chain"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "mintlens_webhook_delivery_duration_seconds",
    help: "Time from an attempt's start to the target's status (or the failure), by chain and outcome",
    labelNames: ["chain", "outcome"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const paused = new Gauge({
    name: "mintlens_webhook_paused",
    help: "Webhook subscriptions paused (after failing too long, or their cursor pruned), by chain",
    labelNames: ["chain"] as const,
    registers: [registry],
  });
  return {
    countDelivery(chain, outcome, seconds, delivered) {
      deliveries.inc({ chain, outcome });
      duration.observe({ chain, outcome }, seconds);
      if (outcome === "ok") events.inc({ chain }, delivered);
    },
    setPaused(chain, count) {
      paused.set({ chain }, count);
    },
  };
}
