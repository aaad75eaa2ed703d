/**
 * Speeds of three parts, each alone: decoding transfer logs (pure, no I/O), reading tens of
 * thousands of logs with the chain client from a local anvil, and generating the demo's history.
 * Wall time depends on the machine and what else runs on it, so the tests assert what these parts
 * produce and this script reports how fast they produce it: best of a few runs.
 * Usage: npm run bench:parts [-- --runs 5]
 */
import { parseArgs } from "node:util";
import { keccak256, toHex } from "viem";
import { createChainClient } from "../src/chain/client.ts";
import type { Address, Hex } from "../src/core/hex.ts";
import type { ChainLog } from "../src/core/types.ts";
import { generateHistory, historyGenesisTimestamp } from "../src/demo/activity.ts";
import { startAnvil } from "../src/devchain/anvil.ts";
import { decodeLogs } from "../src/indexer/decode/decode-logs.ts";
import { TRANSFER_TOPIC } from "../src/indexer/decode/topics.ts";
import { buildCreations, emitPings, FixtureChain } from "../test/support/chain-fixture.ts";

const { values: args } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
const RUNS = Math.max(1, Number(args.runs));

const say = (message: string) => process.stdout.write(`${message}\n`);
const word = (value: bigint | string) => `0x${BigInt(value).toString(16).padStart(64, "0")}` as Hex;

async function best<T>(run: () => Promise<T> | T): Promise<{ ms: number; result: T }> {
  let ms = Number.POSITIVE_INFINITY;
  let result: T | undefined;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    result = await run();
    ms = Math.min(ms, performance.now() - started);
  }
  return { ms, result: result as T };
}

const perSecond = (count: number, ms: number) => Math.round(count / (ms / 1000)).toLocaleString("en");

async function decoding(): Promise<void> {
  const count = 100_000;
  const nft = "0x00000000000000000000000000000000000000aa" as Address;
  const from = word("0x00000000000000000000000000000000000000a1");
  const to = word("0x00000000000000000000000000000000000000b2");
  const logs: ChainLog[] = Array.from({ length: count }, (_, i) => ({
    address: nft,
    topics: [TRANSFER_TOPIC, from, to, word(BigInt(i))],
    data: "0x",
    blockNumber: 1000 + (i >> 10),
    blockHash: keccak256(toHex(`block ${1000 + (i >> 10)}`)),
    logIndex: i & 1023,
    transactionHash: keccak256(toHex(`tx ${i >> 4}`)),
    transactionIndex: (i >> 4) & 63,
  }));
  const { ms, result } = await best(() => decodeLogs(logs, () => undefined));
  if (result.nft.length !== count) throw new Error(`decoded ${result.nft.length} of ${count} transfers`);
  say(
    `decode: ${count.toLocaleString("en")} ERC-721 Transfer logs in ${ms.toFixed(1)} ms, ${perSecond(count, ms)} logs/s`,
  );
}

async function readingLogs(): Promise<void> {
  const PING = keccak256(toHex("Ping(uint256,address,uint256)"));
  const anvil = await startAnvil();
  try {
    const chain = await FixtureChain.create(anvil.url);
    const { emitter } = await buildCreations(chain);
    const from = (await chain.blockNumber()) + 1;
    await emitPings(chain, emitter, 50, 1000);
    const to = await chain.blockNumber();
    const client = createChainClient({ url: anvil.url });
    try {
      const { ms, result } = await best(() => client.getLogs(from, to, [PING]));
      say(
        `getLogs: ${result.length.toLocaleString("en")} logs in ${ms.toFixed(0)} ms, ${perSecond(result.length, ms)} logs/s`,
      );
    } finally {
      await client.close();
    }
  } finally {
    await anvil.stop();
  }
}

async function demoHistory(): Promise<void> {
  const days = 120;
  let ms = Number.POSITIVE_INFINITY;
  let blocks = 0;
  // A fresh chain for every run: a history is generated once per chain.
  for (let i = 0; i < RUNS; i++) {
    const anvil = await startAnvil({ timestamp: historyGenesisTimestamp(days) });
    try {
      const started = performance.now();
      const history = await generateHistory({ rpcUrl: anvil.url, seed: 1234, days });
      ms = Math.min(ms, performance.now() - started);
      blocks = history.blocks.count;
    } finally {
      await anvil.stop();
    }
  }
  say(`demo history: ${days} days, ${blocks} blocks in ${(ms / 1000).toFixed(1)} s`);
}

say(`best of ${RUNS} runs`);
await decoding();
await readingLogs();
await demoHistory();
