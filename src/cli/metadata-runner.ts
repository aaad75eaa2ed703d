import { join } from "node:path";
import type { Command } from "commander";
import { type BlobStoreConfigInput, parseBlobStoreConfig } from "../config/blob-store-config.ts";
import type { ChainConfig, Config } from "../config/config.ts";
import { ConfigError } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import {
  type MetadataConfig,
  type MetadataConfigInput,
  parseMetadataConfig,
} from "../config/metadata-config.ts";
import { createLogger, type Logger } from "../core/logger.ts";
import type { BlobStore } from "../media/blobs.ts";
import { createFetcher } from "../metadata/fetch.ts";
import { parseAllowList } from "../metadata/ssrf.ts";
import { runMetadataWorker } from "../metadata/worker.ts";
import type { PoolOptions, Sql } from "../store/pg/database.ts";
import { openMetadataClient } from "../store/tables/metadata.ts";
import { chainClientOf } from "./chain-client.ts";
import { type ChainDatabases, openChainDatabases } from "./chain-databases.ts";
import { openBlobStore } from "./open-blob-store.ts";
import type { SchemaPolicy } from "./open-database.ts";
import { collect } from "./repeatable.ts";
import type { Lifecycle } from "./shutdown.ts";

/** The flags of every command that runs the metadata worker. */
export function addMetadataOptions(command: Command): Command {
  return command
    .option(
      "--ipfs-gateway <url>",
      "the IPFS gateway documents and images are fetched through (default https://ipfs.io)",
    )
    .option("--arweave-gateway <url>", "the Arweave gateway (default https://arweave.net)")
    .option(
      "--metadata-allow <address[:port]|cidr>",
      "a private address metadata may be fetched from (a local gateway); repeatable, or comma-separated",
      collect,
    )
    .option("--metadata-concurrency <n>", "tokens fetched at once per chain (default 32)")
    .option("--metadata-per-host <n>", "tokens fetched at once from one host (default 8)")
    .option("--metadata-per-contract <n>", "tokens of one contract worked on at once per chain (default 16)")
    .option(
      "--metadata-pool-size <n>",
      "database connections of the metadata worker, apart from the API's and the indexer's (default 8)",
    );
}

/**
 * What a command that runs the workers opens first: their settings, the image cache (shared with
 * the API where one runs, so images are served from where they were stored) and the database,
 * its schema and its first pool as `open` says: each chain's database, and the default one when
 * `open` asks for it.
 */
export async function openForMetadataWorkers(
  flags: MetadataConfigInput & BlobStoreConfigInput,
  config: Config,
  environment: Environment,
  lifecycle: Lifecycle,
  open: { schema: SchemaPolicy; pool: PoolOptions; withDefault: boolean },
): Promise<{ metadata: MetadataConfig; logger: Logger; blobs: BlobStore; databases: ChainDatabases }> {
  const metadata = parseMetadataConfig(flags, environment.variables);
  const blobConfig = parseBlobStoreConfig(flags, environment.variables, join(config.dataDir, "blobs"));
  const logger = createLogger(config.logLevel);
  const blobs = await openBlobStore(blobConfig, logger, lifecycle);
  const names = config.chains.map((c) => c.name);
  const databases = await openChainDatabases(config, names, logger, lifecycle, open);
  return { metadata, logger, blobs, databases };
}

/**
 * Runs one metadata worker per chain until `lifecycle` ends, each with a chain client of its own
 * (the indexer's requests never wait behind token URIs). `sql` is the database of `chains`: a
 * command whose chains are in several databases starts the workers once per database.
 */
export function startMetadataWorkers(options: {
  sql: Sql;
  chains: readonly ChainConfig[];
  tuning: Config["tuning"];
  metadata: MetadataConfig;
  logger: Logger;
  lifecycle: Lifecycle;
  /** Where images are cached. */
  blobs: BlobStore;
  /** Each token looked for, with its outcome (for the metrics). */
  onToken?: (chain: string, status: string) => void;
  /** Each worker's stop signal, named `metadata:<chain>` (the metrics count its listeners). */
  watchSignal?: (name: string, signal: AbortSignal) => void;
}): void {
  const { metadata, logger, lifecycle } = options;
  let allow: ReturnType<typeof parseAllowList>;
  try {
    allow = parseAllowList(metadata.allow);
  } catch (error) {
    throw new ConfigError([`metadata allow: ${(error as Error).message}`]);
  }
  const fetcher = createFetcher({ allow });
  // Released after the workers (deferred first): they store their last outcomes through it.
  const writer = openMetadataClient(options.sql, metadata.poolSize);
  lifecycle.defer(() => writer.end({ timeout: 5 }));
  const stop = new AbortController();
  const running = options.chains.map(async (chain) => {
    const chainLogger = logger.child({ chain: chain.name, part: "metadata" });
    const signal = AbortSignal.any([lifecycle.signal, stop.signal]);
    options.watchSignal?.(`metadata:${chain.name}`, signal);
    const client = chainClientOf(chain, options.tuning, chainLogger);
    try {
      await runMetadataWorker(
        {
          sql: writer,
          chainId: chain.chainId,
          client,
          fetcher,
          logger: chainLogger,
          gateways: { ipfs: metadata.ipfsGateway, arweave: metadata.arweaveGateway },
          concurrency: metadata.concurrency,
          perHost: metadata.perHost,
          perContract: metadata.perContract,
          blobs: options.blobs,
          onToken: (_token, status) => options.onToken?.(chain.name, status),
        },
        signal,
      );
    } catch (error) {
      chainLogger.error({ err: error }, "the metadata worker stopped");
    } finally {
      await client.close();
    }
  });
  lifecycle.defer(async () => {
    stop.abort();
    await Promise.allSettled(running);
  });
}
