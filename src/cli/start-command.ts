import type { Command } from "commander";
import { createApiMetrics } from "../api/metrics.ts";
import { parseApiConfig, parseApiPoolConfig } from "../config/api-config.ts";
import { parseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { parseDatabasePooler, requireDirectDatabase } from "../config/pooler-config.ts";
import { ensureChain } from "../store/tables/chain-state.ts";
import { addApiOptions, serveApi } from "./api-runner.ts";
import { addCommonOptions } from "./index-command.ts";
import { addMetadataOptions, openForMetadataWorkers, startMetadataWorkers } from "./metadata-runner.ts";
import { apiPool, indexerPool, openPool } from "./open-database.ts";
import { createProgressDisplay } from "./progress.ts";
import { runIndexers } from "./run-indexers.ts";
import type { Lifecycle } from "./shutdown.ts";

/**
 * `mintlens start`: what runs in production. Every configured chain's indexer and its API in one
 * process; a signal stops the API from taking requests, lets those under way finish, and stops
 * the indexers between batches.
 */
export function registerStartCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  addMetadataOptions(addApiOptions(addCommonOptions(program.command("start"))))
    .description(
      "index every configured chain, fetch its tokens' metadata, and serve the API for each, in one process",
    )
    .action(async (flags) => {
      requireDirectDatabase("mintlens start", parseDatabasePooler({}, environment.variables));
      const config = parseConfig(flags, environment.variables);
      const api = parseApiConfig(
        flags,
        environment.variables,
        config.chains.map((c) => c.name),
      );
      const pool = parseApiPoolConfig(flags, environment.variables);
      // The indexers read through the first pool; the API and the metadata worker have pools of their
      // own, so that none of the three can take the connections the others wait for.
      const {
        metadata: metadataConfig,
        logger,
        blobs,
        database,
      } = await openForMetadataWorkers(flags, config, environment, lifecycle, {
        schema: "migrate-embedded",
        pool: indexerPool(config),
      });
      if (lifecycle.signal.aborted) return;
      const apiSql = openPool(database, lifecycle, apiPool(pool));
      // Registered before the API starts, so each chain's rankings have a row to watch from the first request.
      for (const chain of config.chains) {
        await ensureChain(database.sql, {
          chainId: chain.chainId,
          name: chain.name,
          nativeSymbol: chain.nativeSymbol,
          startBlock: chain.startBlock,
        });
      }
      const metrics = createApiMetrics();
      await serveApi({
        sql: apiSql,
        chains: config.chains,
        api,
        dataDir: config.dataDir,
        logger,
        lifecycle,
        metrics,
        blobs,
        say: (line) => environment.stderr.write(`${line}\n`),
      });
      startMetadataWorkers({
        sql: database.sql,
        chains: config.chains,
        tuning: config.tuning,
        metadata: metadataConfig,
        logger,
        lifecycle,
        blobs,
        onToken: metrics.countMetadata,
        watchSignal: metrics.watchAbortListeners,
      });
      const display = createProgressDisplay(logger, environment.stderr);
      lifecycle.defer(() => display.stop());
      await runIndexers({
        config,
        sql: database.sql,
        logger,
        onProgress: (progress) => {
          metrics.setIndexed(progress.chain, progress.nextBlock - 1, progress.head);
          display.update(progress);
        },
        onRateSourcesLeftOut: metrics.setRateSourcesLeftOut,
        signal: lifecycle.signal,
      });
      if (lifecycle.signal.aborted) logger.info("stopped on request");
    });
}
