import type { Command } from "commander";
import { parseApiConfig, parseApiPoolConfig } from "../config/api-config.ts";
import { ConfigError, parseConfig } from "../config/config.ts";
import { checkReadUrls, parseDatabaseUrls } from "../config/database-urls.ts";
import type { Environment } from "../config/environment.ts";
import { parseDatabasePooler, requireDirectDatabase } from "../config/pooler-config.ts";
import { createProcessMetrics } from "../metrics/process-metrics.ts";
import { ensureChain } from "../store/tables/chain-state.ts";
import { addApiOptions, serveApi } from "./api-runner.ts";
import { chainPools, openApiPools, urlsOf } from "./chain-databases.ts";
import { addCommonOptions, STREAM_RETENTION_FLAG, STREAM_RETENTION_HELP } from "./index-command.ts";
import { addMetadataOptions, openForMetadataWorkers, startMetadataWorkers } from "./metadata-runner.ts";
import { apiPool, indexerPool } from "./open-database.ts";
import { createProgressDisplay } from "./progress.ts";
import { collect } from "./repeatable.ts";
import { runIndexers } from "./run-indexers.ts";
import type { Lifecycle } from "./shutdown.ts";
import { addWebhookOptions, webhookSettings } from "./webhook-runner.ts";

/**
 * `mintlens start`: what runs in production. Every configured chain's indexer and its API in one
 * process; a signal stops the API from taking requests, lets those under way finish, and stops
 * the indexers between batches.
 */
export function registerStartCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  addWebhookOptions(addMetadataOptions(addApiOptions(addCommonOptions(program.command("start")))))
    .description(
      "index every configured chain, fetch its tokens' metadata, and serve the API for each, in one process",
    )
    .option(
      "--read-database-url <[chain=]url>",
      "a streaming replica the API reads from while the indexers write to the primary: url for the default database's, chain=url for a chain's own; repeatable (env MINTLENS_READ_DATABASE_URL)",
      collect,
    )
    .option(STREAM_RETENTION_FLAG, STREAM_RETENTION_HELP)
    .action(async (flags) => {
      requireDirectDatabase("mintlens start", parseDatabasePooler({}, environment.variables));
      const config = parseConfig(flags, environment.variables);
      const names = config.chains.map((c) => c.name);
      const problems: string[] = [];
      const read = parseDatabaseUrls(
        flags.readDatabaseUrl,
        environment.variables.MINTLENS_READ_DATABASE_URL,
        "read database url",
        problems,
      );
      checkReadUrls(read, urlsOf(config), names, "read database url", problems);
      if (problems.length > 0) throw new ConfigError(problems);
      const api = parseApiConfig(flags, environment.variables, names);
      const pool = parseApiPoolConfig(flags, environment.variables);
      const webhooks = webhookSettings(flags, environment);
      // The indexers read through the first pool; the API and the metadata worker have pools of their
      // own, so that none of the three can take the connections the others wait for.
      const {
        metadata: metadataConfig,
        logger,
        blobs,
        databases,
      } = await openForMetadataWorkers(flags, config, environment, lifecycle, {
        schema: "migrate-embedded",
        pool: indexerPool(config),
        // The API reads its keys there.
        withDefault: true,
      });
      if (lifecycle.signal.aborted) return;
      // Registered before the API starts, so each chain's rankings have a row to watch from the first request.
      for (const chain of config.chains) {
        await ensureChain(databases.of(chain.name).sql, {
          chainId: chain.chainId,
          name: chain.name,
          nativeSymbol: chain.nativeSymbol,
          startBlock: chain.startBlock,
        });
      }
      const apiPools = await openApiPools(
        databases,
        urlsOf(config),
        read,
        names,
        logger,
        lifecycle,
        apiPool(pool),
      );
      if (lifecycle.signal.aborted) return;
      const metrics = createProcessMetrics();
      await serveApi({
        sql: apiPools.sql,
        chains: config.chains.map((chain) => ({ ...chain, sql: apiPools.chainSql.get(chain.name) })),
        api,
        dataDir: config.dataDir,
        logger,
        lifecycle,
        metrics,
        blobs,
        say: (line) => environment.stderr.write(`${line}\n`),
      });
      for (const group of databases.groups) {
        if (group.chains.length === 0) continue;
        startMetadataWorkers({
          sql: group.database.sql,
          chains: config.chains.filter((c) => group.chains.includes(c.name)),
          tuning: config.tuning,
          metadata: metadataConfig,
          logger,
          lifecycle,
          blobs,
          onToken: metrics.countMetadata,
          watchSignal: metrics.watchAbortListeners,
        });
      }
      const display = createProgressDisplay(logger, environment.stderr);
      lifecycle.defer(() => display.stop());
      await runIndexers({
        config,
        sql: (databases.default ?? databases.of(names[0] as string)).sql,
        chainSql: chainPools(databases, names),
        logger,
        onProgress: display.update,
        metrics,
        signal: lifecycle.signal,
        ...(webhooks ? { webhooks: { settings: webhooks } } : {}),
      });
      if (lifecycle.signal.aborted) logger.info("stopped on request");
    });
}
