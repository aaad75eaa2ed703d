import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Command } from "commander";
import { formatUnits } from "viem";
import { generateKey } from "../api/keys.ts";
import {
  type ApiConfigInput,
  type ApiPoolConfigInput,
  parseApiConfig,
  parseApiPoolConfig,
} from "../config/api-config.ts";
import { type BlobStoreConfigInput, parseBlobStoreConfig } from "../config/blob-store-config.ts";
import { ConfigError, parseConfig, parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { parseMetadataConfig } from "../config/metadata-config.ts";
import { createLogger } from "../core/logger.ts";
import { generateHistory, historyGenesisTimestamp, runLiveActivity } from "../demo/activity.ts";
import { startDemoMetadataServer } from "../demo/metadata-server.ts";
import { DEMO_METADATA_NAMES, moveGoneMetadata, pointDemoMetadata } from "../demo/metadata-setup.ts";
import { startAnvil } from "../devchain/anvil.ts";
import { parseAllowList } from "../metadata/ssrf.ts";
import { createProcessMetrics } from "../metrics/process-metrics.ts";
import { collectionSummaries } from "../store/read/summary.ts";
import { insertApiKey } from "../store/tables/api-keys.ts";
import { ensureChain } from "../store/tables/chain-state.ts";
import { addApiOptions, serveApi } from "./api-runner.ts";
import { startMetadataWorkers } from "./metadata-runner.ts";
import { openBlobStore } from "./open-blob-store.ts";
import { apiPool, indexerPool, openDatabase, openPool } from "./open-database.ts";
import { createProgressDisplay } from "./progress.ts";
import { runIndexers } from "./run-indexers.ts";
import type { Lifecycle } from "./shutdown.ts";

interface DemoFlags extends ApiConfigInput, ApiPoolConfigInput, BlobStoreConfigInput {
  dataDir?: string;
  days?: string;
  seed?: string;
}

const DEMO_CHAIN_ID = 31337;
const DEMO_CHAIN_NAME = "anvil";
const DEMO_USER = "demo";

export function registerDemoCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  addApiOptions(program.command("demo"), "<data-dir>/demo/blobs, emptied on each run")
    .description(
      "run everything locally: an embedded PostgreSQL, a local anvil chain filled with months of generated NFT activity, the indexer following it, and the API serving it",
    )
    .option(
      "--data-dir <dir>",
      "the demo keeps its database in <dir>/demo, emptied on each run (default .mintlens)",
    )
    .option("--days <n>", "days of generated history (default 120)")
    .option("--seed <seed>", "seed of the generated activity (default mintlens)")
    .action(async (flags: DemoFlags) => runDemo(flags, lifecycle, environment));
}

async function runDemo(flags: DemoFlags, lifecycle: Lifecycle, environment: Environment): Promise<void> {
  const days = Number(flags.days ?? 120);
  if (!Number.isInteger(days) || days < 1 || days > 3650)
    throw new ConfigError([`days: ${flags.days} is not a whole number from 1 to 3650`]);
  const seed = flags.seed ?? "mintlens";
  const api = parseApiConfig(flags, environment.variables, [DEMO_CHAIN_NAME]);
  const pool = parseApiPoolConfig(flags, environment.variables);
  // Always a folder of its own, so that emptying it can never touch an index kept in the data directory.
  const baseDir = resolve(flags.dataDir ?? ".mintlens");
  const dataDir = join(baseDir, "demo");
  // Where the flags say, never a store the environment configures for production: the demo's images are made up.
  const blobConfig = parseBlobStoreConfig(
    flags,
    { ...environment.variables, MINTLENS_BLOB_STORE: undefined },
    join(dataDir, "blobs"),
  );
  const { logLevel } = parseDatabaseConfig({}, environment.variables);
  const logger = createLogger(logLevel);
  // Opened before the chain is generated, so that a bucket that refuses fails the demo at once.
  const blobs = await openBlobStore(blobConfig, logger, lifecycle);
  const say = (message: string) => environment.stderr.write(`demo: ${message}\n`);
  const { signal } = lifecycle;

  // The local chain is new on every run, so a database indexed from an earlier one would not match it.
  rmSync(dataDir, { recursive: true, force: true });

  say("starting a local chain (anvil)");
  const anvil = await startAnvil({
    chainId: DEMO_CHAIN_ID,
    timestamp: historyGenesisTimestamp(days),
    ...(environment.anvilBinary !== undefined ? { binary: environment.anvilBinary } : {}),
  });
  // Deferred first, so released last: everything else talks to the chain until it stops.
  lifecycle.defer(async () => {
    await anvil.stop();
    say("stopped");
  });
  if (signal.aborted) return;

  say(`generating ${days} days of NFT activity on ${anvil.url} (seed ${seed})`);
  let history: Awaited<ReturnType<typeof generateHistory>>;
  try {
    history = await generateHistory({
      rpcUrl: anvil.url,
      seed,
      days,
      signal,
      onProgress: ({ day, blocks, transactions }) => {
        if (day % 30 === 0) say(`  day ${day}/${days}: ${blocks} blocks, ${transactions} transactions`);
      },
    });
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
  say(
    `generated ${history.transactions} transactions in ${history.blocks.count} blocks: ${Object.keys(history.contracts).length} contracts deployed`,
  );

  // The collections' token URIs point at a local stand-in for the web (and for IPFS and Arweave
  // gateways), which the metadata worker is allowed to reach, or at documents drawn on chain.
  const metadataServer = await startDemoMetadataServer(DEMO_METADATA_NAMES);
  lifecycle.defer(() => metadataServer.close());
  await pointDemoMetadata(anvil.url, history.contracts, metadataServer);
  say(
    `serving the collections' metadata at ${metadataServer.origin}/ (as a web host, an IPFS gateway and an Arweave gateway)`,
  );

  const { contracts } = history;
  const config = parseConfig(
    {
      chain: [`${DEMO_CHAIN_NAME}=${anvil.url}`],
      chainId: [String(DEMO_CHAIN_ID)],
      nativeSymbol: ["ETH"],
      confirmations: ["1"],
      pollInterval: "1000",
      // The chain's own WETH counts 1:1; its pairs price the dollar and the token.
      nativePegged: [contracts.weth.address],
      ratePools: [`v2:${contracts.wethStablePool.address},v2:${contracts.tokenWethPool.address}`],
      usdTokens: [contracts.stablecoin.address],
    },
    {},
  );
  say(`starting the embedded PostgreSQL in ${join(dataDir, "postgres")}`);
  const database = await openDatabase(undefined, dataDir, logger, lifecycle, {
    schema: "migrate",
    pool: indexerPool(config),
  });
  if (signal.aborted) return;
  const metrics = createProcessMetrics();
  startMetadataWorkers({
    sql: database.sql,
    chains: config.chains,
    tuning: config.tuning,
    metadata: parseMetadataConfig(
      {
        metadataAllow: [`127.0.0.1:${metadataServer.port}`],
        ipfsGateway: metadataServer.ipfsGateway,
        arweaveGateway: metadataServer.arweaveGateway,
      },
      {},
    ),
    logger,
    lifecycle,
    blobs,
    onToken: metrics.countMetadata,
    watchSignal: metrics.watchAbortListeners,
  });
  const display = createProgressDisplay(logger, environment.stderr, 5000);
  lifecycle.defer(() => display.stop());
  // Also ended when the indexer fails, so that no transaction is sent to a chain being stopped.
  const liveStop = new AbortController();
  const live = runLiveActivity({
    rpcUrl: anvil.url,
    seed,
    contracts: history.contracts,
    intervalMs: 3000,
    signal: AbortSignal.any([signal, liveStop.signal]),
  });
  // Its failure is reported when it is released; until then it must not count as unhandled.
  live.catch(() => {});
  lifecycle.defer(async () => {
    liveStop.abort();
    await live;
  });
  const summaries = setInterval(async () => {
    const rows = await collectionSummaries(database.sql, DEMO_CHAIN_ID).catch(() => []);
    if (rows.length === 0) return;
    display.print("demo: collections indexed so far:");
    for (const r of rows) {
      display.print(
        `demo:   ${r.address} ${r.name.padEnd(24)} ${r.types.join(",").padEnd(20)} supply ${r.supply.padStart(6)}  holders ${String(r.holders).padStart(4)}  transfers ${String(r.transfers).padStart(6)}  sales ${String(r.sales).padStart(5)}  volume ${formatUnits(BigInt(r.volume), 18).padStart(10)} ETH`,
      );
    }
  }, 15_000);
  lifecycle.defer(() => clearInterval(summaries));
  // The API serves from the first batch on; the certificate lives outside the emptied folder, so it survives runs.
  await ensureChain(database.sql, {
    chainId: DEMO_CHAIN_ID,
    name: DEMO_CHAIN_NAME,
    nativeSymbol: "ETH",
    startBlock: 0,
  });
  // Stored before the API starts, so the key works from the first request: a running API reads
  // the key table every few seconds.
  const key = generateKey();
  await insertApiKey(database.sql, { userName: DEMO_USER, keyId: key.keyId, keyHash: key.hash });
  const served = await serveApi({
    sql: openPool(database, lifecycle, apiPool(pool)),
    chains: [{ name: DEMO_CHAIN_NAME, chainId: DEMO_CHAIN_ID }],
    api,
    dataDir: baseDir,
    logger,
    lifecycle,
    metrics,
    blobs,
    say,
  });
  const chain = served.chains[0];
  const collection = contracts.erc721.address.toLowerCase();
  const showTryIt = async () => {
    if (chain === undefined) return;
    // A token somebody holds, so that the example shows its metadata (a burnt token has none).
    const [held] = await database.sql<{ id: string; holder: Uint8Array }[]>`
      SELECT token_id::text AS id, holder FROM token_balances
      WHERE chain_id = ${DEMO_CHAIN_ID} AND contract = ${Buffer.from(collection.slice(2), "hex")} AND amount > 0
      ORDER BY token_id LIMIT 1`.catch(() => []);
    const lines = tryItLines({
      key: key.key,
      restUrl: chain.restUrl,
      grpcAddress: chain.grpcAddress,
      certPath: served.certPath,
      collection,
      tokenId: held?.id ?? "1",
      holder: held ? `0x${Buffer.from(held.holder).toString("hex")}` : collection,
      punks: contracts.punks.address.toLowerCase(),
      dataDir,
    });
    for (const line of lines) display.print(line);
  };
  // The consecutive collection's documents are gone (404) until its contract points at their new
  // home: once the worker has recorded them failed, the move is made and announced (EIP-4906).
  const moveWhenGone = async () => {
    const address = Buffer.from(contracts.erc721Consecutive.address.slice(2), "hex");
    let seenGone = false;
    for (let waited = 0; waited < 120 && !seenGone && !signal.aborted; waited++) {
      const [failed] = await database.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM token_metadata
        WHERE chain_id = ${DEMO_CHAIN_ID} AND contract = ${address} AND status = 'failed'`.catch(() => []);
      seenGone = (failed?.n ?? 0) > 0;
      if (!seenGone) await sleep(1000);
    }
    if (signal.aborted) return;
    try {
      await moveGoneMetadata(anvil.url, contracts, metadataServer);
      display.print(
        `demo: ${DEMO_METADATA_NAMES.mcon}'s documents ${seenGone ? "were gone (HTTP 404)" : "are moving"}; its contract now points at their new home and said so (EIP-4906 BatchMetadataUpdate), so they are fetched again`,
      );
    } catch (error) {
      if (!signal.aborted)
        logger.warn({ err: error }, "demo: moving the consecutive collection's metadata failed");
    }
  };
  say(
    "indexing the history; the API's examples follow once it is indexed. New activity arrives every 3 s. Press Ctrl+C to stop.",
  );
  let shown = false;
  await runIndexers({
    config,
    sql: database.sql,
    logger,
    onProgress: (progress) => {
      display.update(progress);
      // Shown when the history is in, so the examples answer with it.
      if (!shown && progress.phase === "follow") {
        shown = true;
        void showTryIt();
        void moveWhenGone();
      }
    },
    metrics,
    signal,
    // Everything the demo runs is on this machine: a bot to try webhooks with is too.
    webhooks: { settings: { allow: parseAllowList(DEMO_WEBHOOK_ALLOW) } },
  });
}

/** Where the demo delivers webhooks although the addresses are private: this machine. */
const DEMO_WEBHOOK_ALLOW = ["127.0.0.0/8", "::1"];

/** What the demo prints for a newcomer: the dashboard's address, a key, and a REST, a gRPC and an OpenAPI example. */
export function tryItLines(o: {
  key: string;
  restUrl: string;
  grpcAddress: string;
  certPath: string;
  collection: string;
  tokenId: string;
  /** Who holds that token: the wallet example. */
  holder: string;
  /** The CryptoPunks market: the floor example (its open offers are on chain). */
  punks: string;
  /** The demo's data directory (`--data-dir`), where `mintlens webhooks` finds its database. */
  dataDir: string;
}): string[] {
  const cwd = process.cwd();
  // By name, not 127.0.0.1: TLS clients may not check a certificate against an IP address.
  const grpcAddress = o.grpcAddress.replace(/^127\.0\.0\.1:/, "localhost:");
  const relative = (path: string) => (path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path);
  const cert = relative(o.certPath);
  return [
    "",
    `demo: the dashboard is at ${o.restUrl}/ (paste the key below when it asks for one)`,
    "",
    `demo: the API is up. Your key (user ${DEMO_USER}; shown once, made again on each run):`,
    "",
    `  export MINTLENS_API_KEY=${o.key}`,
    "",
    "demo: REST (the top collections of the last 30 days by volume):",
    "",
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_30_DAYS?limit=5"`,
    "",
    "demo: an NFT with its metadata (fetched from the demo's local metadata server) and its last sale:",
    "",
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/foundational/v1beta2/nfts/${o.collection}/${o.tokenId}/details"`,
    "",
    "demo: its metadata document exactly as fetched (the image above is served by Mintlens itself, under /images/):",
    "",
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/foundational/v1beta2/nfts/${o.collection}/${o.tokenId}/raw_metadata"`,
    "",
    "demo: the collection's sales, newest first, each with its price and labels (organic, wash, market…):",
    "",
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/foundational/v1beta2/transfers/nft?contractAddress=${o.collection}&labelsAny=LABEL_SALE&limit=5"`,
    "",
    "demo: its name, supply, holders and volume; its traits (rarity ranks are in each NFT's details):",
    "",
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/collections/v1beta2/${o.collection}/metadata?includeStats=true"`,
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/collections/v1beta2/${o.collection}/traits/string?limit=10"`,
    "",
    "demo: what the token's holder owns (spam collections left out; add includeSpam=true to see them):",
    "",
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/wallets/v1beta2/${o.holder}/nfts?limit=5"`,
    "",
    "demo: the CryptoPunks market's floor, from the public offers open on chain:",
    "",
    `  curl -s -H "X-API-Key: $MINTLENS_API_KEY" "${o.restUrl}/marketplaces/v1beta2/floors/${o.punks}"`,
    "",
    "demo: gRPC over TLS (a collection's holders), with the client built into mintlens:",
    "",
    `  npm run -s mintlens -- call CollectionsService/ListCollectionOwners '{"contractAddress":"${o.collection}","limit":5}' --address ${grpcAddress} --ca ${cert}`,
    "",
    "demo: the sales as they are indexed, live, from the event stream (the key from MINTLENS_API_KEY; Ctrl-C stops it):",
    "",
    `  npm run -s mintlens -- watch --kind sale --address ${grpcAddress} --ca ${cert}`,
    "",
    "demo: the same sales POSTed to a URL of yours as they are indexed (a webhook: signed, retried, in order; see docs/webhooks.md):",
    "",
    `  npm run -s mintlens -- webhooks add http://127.0.0.1:9000/ --chain ${DEMO_CHAIN_NAME} --kind sale --webhook-allow 127.0.0.1 --data-dir ${relative(o.dataDir)}`,
    "",
    `demo: or with grpcurl (reflection is on): grpcurl -cacert ${cert} -H "x-api-key: $MINTLENS_API_KEY" ${grpcAddress} list`,
    `demo: the OpenAPI document of every operation: ${o.restUrl}/openapi.json`,
    "",
  ];
}
