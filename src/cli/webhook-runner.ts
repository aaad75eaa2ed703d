import type { Command } from "commander";
import { ConfigError } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { parseWebhookConfig, WEBHOOK_DEFAULTS, type WebhookConfigInput } from "../config/webhook-config.ts";
import { parseAllowList } from "../metadata/ssrf.ts";
import type { DelivererSettings } from "../webhooks/deliverer.ts";
import { collect } from "./repeatable.ts";

/** The allow-list flag, shared with `mintlens webhooks add`, which checks a target as deliveries will. */
export const WEBHOOK_ALLOW_FLAG = "--webhook-allow <address[:port]|cidr>";
export const WEBHOOK_ALLOW_HELP =
  "a private address webhooks may be delivered to (a local bot); repeatable, or comma-separated (env MINTLENS_WEBHOOK_ALLOW)";

/** The flags of the commands that run indexers, and with them the webhook deliverers. */
export function addWebhookOptions(command: Command): Command {
  return command
    .option(
      "--webhooks <on|off>",
      "deliver the webhook subscriptions beside each indexer (env MINTLENS_WEBHOOKS, default on)",
    )
    .option(WEBHOOK_ALLOW_FLAG, WEBHOOK_ALLOW_HELP, collect)
    .option("--webhook-timeout <ms>", `deadline of one delivery (default ${WEBHOOK_DEFAULTS.timeoutMs})`)
    .option(
      "--webhook-concurrency <n>",
      `deliveries in flight at once per chain (default ${WEBHOOK_DEFAULTS.concurrency})`,
    )
    .option(
      "--webhook-retry-base <ms>",
      `wait after a failed delivery, doubled after each further failure (default ${WEBHOOK_DEFAULTS.retryBaseMs})`,
    )
    .option(
      "--webhook-retry-max <ms>",
      `longest wait between attempts (default ${WEBHOOK_DEFAULTS.retryMaxMs})`,
    )
    .option(
      "--webhook-pause-failures <n>",
      `failures in a row that pause a subscription, once they span --webhook-pause-after (default ${WEBHOOK_DEFAULTS.pauseFailures})`,
    )
    .option(
      "--webhook-pause-after <duration>",
      "time failing that pauses a subscription, once it has failed --webhook-pause-failures times, such as 3600, 30m or 1h (default 1h)",
    );
}

/** The deliverers' settings from the flags, or undefined when they are turned off. */
export function webhookSettings(
  flags: WebhookConfigInput,
  environment: Environment,
): Partial<DelivererSettings> | undefined {
  const config = parseWebhookConfig(flags, environment.variables);
  if (!config.enabled) return undefined;
  let allow: ReturnType<typeof parseAllowList>;
  try {
    allow = parseAllowList(config.allow);
  } catch (error) {
    throw new ConfigError([`webhook allow: ${(error as Error).message}`]);
  }
  return {
    allow,
    timeoutMs: config.timeoutMs,
    concurrency: config.concurrency,
    policy: {
      baseDelayMs: config.retryBaseMs,
      maxDelayMs: config.retryMaxMs,
      pauseFailures: config.pauseFailures,
      pauseAfterMs: config.pauseAfterMs,
    },
  };
}
