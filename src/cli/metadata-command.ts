import type { Command } from "commander";
import { ConfigError, parseConfig, parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { parseMetricsListener } from "../config/metrics-config.ts";
import { parseDatabasePooler, requireDirectDatabase } from "../config/pooler-config.ts";
import { UserFacingError } from "../core/errors.ts";
import type { Address } from "../core/hex.ts";
import { createLogger } from "../core/logger.ts";
import { createProcessMetrics } from "../metrics/process-metrics.ts";
import { queueCollection, queueTokens } from "../store/tables/metadata.ts";
import { openChainDatabases } from "./chain-databases.ts";
import { addCommonOptions } from "./index-command.ts";
import { addMetadataOptions, openForMetadataWorkers, startMetadataWorkers } from "./metadata-runner.ts";
import { addMetricsOptions, serveMetrics } from "./metrics-listener.ts";
import { addBlobStoreOptions } from "./open-blob-store.ts";
import { COMMAND_POOL } from "./open-database.ts";
import { collect } from "./repeatable.ts";
import { type Lifecycle, untilStopped } from "./shutdown.ts";

interface RefreshFlags {
  chain: string;
  token?: string;
  databaseUrl?: string[];
  dataDir?: string;
  logLevel?: string;
}

/**
 * `mintlens metadata`: the metadata worker alone, for every configured chain (what `mintlens
 * start` also runs); `mintlens metadata refresh`: queue a collection's or a token's metadata again.
 */
export function registerMetadataCommand(
  program: Command,
  lifecycle: Lifecycle,
  environment: Environment,
): void {
  const metadata = addMetricsOptions(
    addBlobStoreOptions(
      addMetadataOptions(addCommonOptions(program.command("metadata").enablePositionalOptions())),
    ),
    "off",
  )
    .description("fetch the metadata of every queued token of the configured chains, until stopped")
    .action(async (flags) => {
      requireDirectDatabase("mintlens metadata", parseDatabasePooler({}, environment.variables));
      const config = parseConfig(flags, environment.variables);
      const problems: string[] = [];
      const listener = parseMetricsListener(flags, environment.variables, undefined, problems);
      if (problems.length > 0) throw new ConfigError(problems);
      const { metadata, logger, blobs, databases } = await openForMetadataWorkers(
        flags,
        config,
        environment,
        lifecycle,
        // The workers take and store tokens through a pool of their own (--metadata-pool-size).
        { schema: "check", pool: COMMAND_POOL, withDefault: false },
      );
      if (lifecycle.signal.aborted) return;
      const metrics = createProcessMetrics();
      metrics.watchAbortListeners("shutdown", lifecycle.signal);
      await serveMetrics(metrics, listener, lifecycle, (line) => environment.stderr.write(`${line}\n`));
      for (const group of databases.groups) {
        startMetadataWorkers({
          sql: group.database.sql,
          chains: config.chains.filter((c) => group.chains.includes(c.name)),
          tuning: config.tuning,
          metadata,
          logger,
          lifecycle,
          blobs,
          onToken: metrics.countMetadata,
          watchSignal: metrics.watchAbortListeners,
        });
      }
      await untilStopped(lifecycle);
    });

  metadata
    .command("refresh <contract>")
    .description(
      "queue the metadata of a collection's tokens (or of one, with --token) to be fetched again now",
    )
    .requiredOption("--chain <name>", "the chain, by the name it was indexed under")
    .option("--token <id>", "one token id")
    .option(
      "--database-url <[chain=]url>",
      "PostgreSQL 15+ URL: url for the default database, chain=url for a chain's own; repeatable (env DATABASE_URL); default: the embedded PostgreSQL",
      collect,
    )
    .option("--data-dir <dir>", "data directory of the embedded PostgreSQL (default .mintlens)")
    .option("--log-level <level>", "fatal, error, warn, info, debug or trace (env MINTLENS_LOG_LEVEL)")
    .action(async (contract: string, flags: RefreshFlags) => {
      const problems: string[] = [];
      if (!/^0x[0-9a-fA-F]{40}$/.test(contract)) problems.push(`contract: ${contract} is not an address`);
      if (flags.token !== undefined && !/^\d{1,78}$/.test(flags.token))
        problems.push(`token: ${flags.token} is not a token id`);
      if (problems.length > 0) throw new ConfigError(problems);
      const database = parseDatabaseConfig(flags, environment.variables);
      const logger = createLogger(database.logLevel);
      const databases = await openChainDatabases(database, [flags.chain], logger, lifecycle, {
        schema: "check",
        pool: COMMAND_POOL,
        withDefault: false,
      });
      const { sql } = databases.of(flags.chain);
      const [chain] = await sql<
        { chain_id: string }[]
      >`SELECT chain_id::text FROM chains WHERE name = ${flags.chain}`;
      if (chain === undefined) throw new UserFacingError(`chain ${flags.chain} is not in the store`);
      const address = contract.toLowerCase() as Address;
      let queued: number;
      if (flags.token === undefined) {
        queued = await queueCollection(sql, Number(chain.chain_id), address, "refresh");
      } else {
        queued = await queueTokens(
          sql,
          Number(chain.chain_id),
          [{ contract: address, tokenId: BigInt(flags.token) }],
          "refresh",
        );
        if (queued === 0)
          throw new UserFacingError(
            `token ${flags.token} of ${address} is not known on ${flags.chain}: never seen minted, and nobody holds it`,
          );
      }
      environment.stdout.write(`queued ${queued} token${queued === 1 ? "" : "s"}\n`);
    });
}
