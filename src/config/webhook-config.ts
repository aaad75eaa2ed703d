/**
 * The webhook deliverers' configuration (`mintlens index` and `mintlens start`): whether they run,
 * the private addresses targets may have, and the limits of deliveries and of failing targets.
 */
import { ConfigError } from "./config.ts";
import type { Variables } from "./environment.ts";
import { listOption, wholeNumber } from "./option-values.ts";

export interface WebhookConfig {
  /** Whether a deliverer runs beside each indexer. */
  enabled: boolean;
  /** Addresses or ranges (optionally with a port) targets may have although private: a local bot. */
  allow: string[];
  timeoutMs: number;
  concurrency: number;
  /** Wait after a first failure, doubling after each further one up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** A subscription is paused after at least this many failures in a row ... */
  pauseFailures: number;
  /** ... over at least this long. */
  pauseAfterMs: number;
}

export interface WebhookConfigInput {
  webhooks?: string;
  webhookAllow?: string[];
  webhookTimeout?: string;
  webhookConcurrency?: string;
  webhookRetryBase?: string;
  webhookRetryMax?: string;
  webhookPauseFailures?: string;
  webhookPauseAfter?: string;
}

export const WEBHOOK_DEFAULTS = {
  timeoutMs: 10_000,
  concurrency: 32,
  retryBaseMs: 1000,
  retryMaxMs: 600_000,
  pauseFailures: 20,
  pauseAfterMs: 3_600_000,
};

/** Addresses of `--webhook-allow` (repeatable, or comma-separated) or MINTLENS_WEBHOOK_ALLOW. */
export function webhookAllow(input: Pick<WebhookConfigInput, "webhookAllow">, env: Variables): string[] {
  return listOption(input.webhookAllow, env.MINTLENS_WEBHOOK_ALLOW);
}

export function parseWebhookConfig(input: WebhookConfigInput, env: Variables): WebhookConfig {
  const problems: string[] = [];
  const whole = (label: string, value: string | undefined, fallback: number, min: number) =>
    wholeNumber(problems, label, value, fallback, { min });
  const switched = (input.webhooks ?? env.MINTLENS_WEBHOOKS ?? "on").trim().toLowerCase();
  if (switched !== "on" && switched !== "off") problems.push(`webhooks: ${switched} is not on or off`);
  const pauseAfter = input.webhookPauseAfter ?? env.MINTLENS_WEBHOOK_PAUSE_AFTER;
  const config: WebhookConfig = {
    enabled: switched !== "off",
    allow: webhookAllow(input, env),
    timeoutMs: whole(
      "webhook timeout",
      input.webhookTimeout ?? env.MINTLENS_WEBHOOK_TIMEOUT_MS,
      WEBHOOK_DEFAULTS.timeoutMs,
      100,
    ),
    concurrency: whole(
      "webhook concurrency",
      input.webhookConcurrency ?? env.MINTLENS_WEBHOOK_CONCURRENCY,
      WEBHOOK_DEFAULTS.concurrency,
      1,
    ),
    retryBaseMs: whole(
      "webhook retry base",
      input.webhookRetryBase ?? env.MINTLENS_WEBHOOK_RETRY_BASE_MS,
      WEBHOOK_DEFAULTS.retryBaseMs,
      1,
    ),
    retryMaxMs: whole(
      "webhook retry max",
      input.webhookRetryMax ?? env.MINTLENS_WEBHOOK_RETRY_MAX_MS,
      WEBHOOK_DEFAULTS.retryMaxMs,
      1,
    ),
    pauseFailures: whole(
      "webhook pause failures",
      input.webhookPauseFailures ?? env.MINTLENS_WEBHOOK_PAUSE_FAILURES,
      WEBHOOK_DEFAULTS.pauseFailures,
      1,
    ),
    pauseAfterMs: pauseAfter === undefined ? WEBHOOK_DEFAULTS.pauseAfterMs : durationMs(pauseAfter, problems),
  };
  if (config.retryMaxMs < config.retryBaseMs)
    problems.push("webhook retry max: must be at least the webhook retry base");
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** A duration of seconds, or a number with s, m or h, in milliseconds. */
function durationMs(value: string, problems: string[]): number {
  const m = /^(\d{1,9})([smh]?)$/.exec(value.trim());
  if (!m) {
    problems.push(`webhook pause after: ${value} is not a duration such as 3600, 90s, 30m or 1h`);
    return WEBHOOK_DEFAULTS.pauseAfterMs;
  }
  const scale = m[2] === "h" ? 3_600_000 : m[2] === "m" ? 60_000 : 1000;
  return Number(m[1]) * scale;
}
