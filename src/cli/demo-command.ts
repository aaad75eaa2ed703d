import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { formatUnits } from "viem";
import { ConfigError, parseConfig, parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { createLogger } from "../core/logger.ts";
import { generateHistory, historyGenesisTimestamp, runLiveActivity } from "../demo/activity.ts";
import { startAnvil } from "../devchain/anvil.ts";
import { collectionSummaries } from "../store/summary.ts";
import { openDatabase } from "./open-database.ts";
import { createProgressDisplay } from "./progress.ts";
import { runIndexers } from "./run-indexers.ts";
import type { Lifecycle } from "./shutdown.ts";

interface DemoFlags {
  dataDir?: string;
  days?: string;
  seed?: string;
}

const DEMO_CHAIN_ID = 31337;

export function registerDemoCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  program
    .command("demo")
    .description(
      "run everything locally: an embedded PostgreSQL, a local anvil chain filled with months of generated NFT activity, and the indexer following it",
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
  // Always a folder of its own, so that emptying it can never touch an index kept in the data directory.
  const dataDir = resolve(flags.dataDir ?? ".mintlens", "demo");
  const { logLevel } = parseDatabaseConfig({}, environment.variables);
  const logger = createLogger(logLevel);
  const say = (message: string) => process.stderr.write(`demo: ${message}\n`);
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

  say(`starting the embedded PostgreSQL in ${join(dataDir, "postgres")}`);
  const database = await openDatabase(undefined, dataDir, logger, lifecycle);
  if (signal.aborted) return;
  const { contracts } = history;
  const config = parseConfig(
    {
      chain: [`anvil=${anvil.url}`],
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
  const display = createProgressDisplay(logger, process.stderr.isTTY === true, 5000);
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
  say("indexing; new activity arrives every 3 s. Press Ctrl+C to stop.");
  await runIndexers({
    config,
    sql: database.sql,
    logger,
    onProgress: display.update,
    signal,
  });
}
