import type { Command } from "commander";
import { type Config, ConfigError, parseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { type MetricsListener, parseMetricsListener } from "../config/metrics-config.ts";
import { parseDatabasePooler, requireDirectDatabase } from "../config/pooler-config.ts";
import { DEFAULT_STREAM_RETENTION_DAYS } from "../config/stream-config.ts";
import { createLogger } from "../core/logger.ts";
import { createProcessMetrics } from "../metrics/process-metrics.ts";
import type { DelivererSettings } from "../webhooks/deliverer.ts";
import { chainPools, openChainDatabases } from "./chain-databases.ts";
import { addMetricsOptions, serveMetrics } from "./metrics-listener.ts";
import { indexerPool } from "./open-database.ts";
import { createProgressDisplay } from "./progress.ts";
import { collect } from "./repeatable.ts";
import { runIndexers } from "./run-indexers.ts";
import type { Lifecycle } from "./shutdown.ts";
import { addWebhookOptions, webhookSettings } from "./webhook-runner.ts";

/** The stream's retention, a flag of the commands that run indexers (`index` and `start`). */
export const STREAM_RETENTION_FLAG = "--stream-retention <days>";
export const STREAM_RETENTION_HELP = `days the live event stream keeps its events; fractions allowed (env MINTLENS_STREAM_RETENTION, default ${DEFAULT_STREAM_RETENTION_DAYS})`;

/** Options every command that connects to chains and the database shares. */
export function addCommonOptions(command: Command): Command {
  return command
    .option(
      "--chain <name[=rpcUrl]>",
      "a chain to index (ethereum, polygon, optimism or any name); repeatable",
      collect,
    )
    .option("--rpc-url <[chain=]url>", "JSON-RPC URL of the chain's node", collect)
    .option("--chain-id <[chain=]id>", "chain id (known for ethereum, polygon, optimism)", collect)
    .option("--native-symbol <[chain=]symbol>", "symbol of the chain's native coin", collect)
    .option("--start-block <[chain=]block>", "first block to index (default 0)", collect)
    .option("--confirmations <[chain=]n>", "blocks behind the head before a block is indexed", collect)
    .option("--contract-discovery <[chain=]mode>", "auto, traces, receipts or events", collect)
    .option(
      "--ownership-history <[chain=]mode>",
      "ownership of collections older than the start block: off, or logs (their transfer logs before it)",
      collect,
    )
    .option(
      "--native-pegged <[chain=]addresses>",
      "ERC-20 tokens worth one native coin each, comma-separated (default: the wrapped coin of known chain ids)",
      collect,
    )
    .option(
      "--rate-pools <[chain=]pools>",
      "Uniswap pools exchange rates come from, as v2:0x… or v3:0x…, comma-separated (default: the presets of known chain ids)",
      collect,
    )
    .option(
      "--usd-tokens <[chain=]addresses>",
      "ERC-20 tokens worth one US dollar each, comma-separated (default: the presets of known chain ids)",
      collect,
    )
    .option(
      "--rate-window <[chain=]duration>",
      "time each pool's price is averaged over, such as 30m, 90s or 0 for the block's last state (default 30m)",
      collect,
    )
    .option(
      "--rate-min-depth <[chain=]coins>",
      "least depth a pool must hold, in native coins, to count in a rate (default: 10 ETH, 100000 POL, else 10)",
      collect,
    )
    .option(
      "--rate-jump <[chain=]factor>",
      "a rate beyond this factor of the window before it flags its sales rate_outlier (default 2)",
      collect,
    )
    .option(
      "--database-url <[chain=]url>",
      "PostgreSQL 15+ URL: url for the default database, chain=url for a chain's own; repeatable; without it an embedded PostgreSQL is used (env DATABASE_URL)",
      collect,
    )
    .option(
      "--data-dir <dir>",
      "where the embedded PostgreSQL keeps its data (env MINTLENS_DATA_DIR, default .mintlens)",
    )
    .option("--log-level <level>", "fatal, error, warn, info, debug or trace (env MINTLENS_LOG_LEVEL)")
    .option("--poll-interval <ms>", "how often to look for new blocks at the head (default 2000)")
    .option("--batch-blocks <n>", "most blocks per batch (default 2000)")
    .option("--prefetch <n>", "batches read ahead of the one being written (default 3)")
    .option("--rpc-batch-size <n>", "requests per JSON-RPC batch (default 100)")
    .option("--rpc-timeout <ms>", "timeout of one RPC request (default 30000)")
    .option("--rpc-retries <n>", "attempts for a failing RPC request (default 8)")
    .option("--max-log-range <n>", "most blocks per eth_getLogs request (default 2000)");
}

export function registerIndexCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  addMetricsOptions(addWebhookOptions(addCommonOptions(program.command("index"))), "off")
    .description("index chains into PostgreSQL: backfill to the head, then follow it")
    .option("--stop-at <block>", "exit once this block is indexed instead of following the head")
    .option(STREAM_RETENTION_FLAG, STREAM_RETENTION_HELP)
    .action(async (flags) => {
      requireDirectDatabase("mintlens index", parseDatabasePooler({}, environment.variables));
      const config = parseConfig(flags, environment.variables);
      const stopAt = flags.stopAt === undefined ? undefined : Number(flags.stopAt);
      if (stopAt !== undefined && !Number.isSafeInteger(stopAt)) {
        throw new ConfigError([`stop at: ${flags.stopAt} is not a block number`]);
      }
      const webhooks = webhookSettings(flags, environment);
      const problems: string[] = [];
      const metrics = parseMetricsListener(flags, environment.variables, undefined, problems);
      if (problems.length > 0) throw new ConfigError(problems);
      await runIndexCommand(config, lifecycle, environment, { stopAt, webhooks, metrics });
    });
}

export async function runIndexCommand(
  config: Config,
  lifecycle: Lifecycle,
  environment: Environment,
  options: {
    stopAt?: number | undefined;
    webhooks?: Partial<DelivererSettings> | undefined;
    /** Where the indexers' and the deliverers' metrics are served; off when undefined or its port is. */
    metrics?: MetricsListener | undefined;
  } = {},
): Promise<void> {
  const { stopAt, webhooks } = options;
  const logger = createLogger(config.logLevel);
  const names = config.chains.map((c) => c.name);
  const databases = await openChainDatabases(config, names, logger, lifecycle, {
    schema: "migrate-embedded",
    pool: indexerPool(config),
    withDefault: false,
  });
  if (lifecycle.signal.aborted) return;
  const metrics = createProcessMetrics();
  metrics.watchAbortListeners("shutdown", lifecycle.signal);
  if (options.metrics)
    await serveMetrics(metrics, options.metrics, lifecycle, (line) => environment.stderr.write(`${line}\n`));
  const display = createProgressDisplay(logger, environment.stderr);
  lifecycle.defer(() => display.stop());
  if (lifecycle.signal.aborted) return;
  await runIndexers({
    config,
    sql: databases.of(names[0] as string).sql,
    chainSql: chainPools(databases, names),
    logger,
    onProgress: display.update,
    metrics,
    signal: lifecycle.signal,
    ...(stopAt !== undefined ? { untilBlock: stopAt } : {}),
    ...(webhooks ? { webhooks: { settings: webhooks } } : {}),
  });
  if (lifecycle.signal.aborted) logger.info("stopped on request");
}
