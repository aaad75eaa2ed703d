/**
 * What a node returns is refused unless it is well-formed enough to store: addresses and hashes are
 * hex, whatever field they come in. Checked on the 681 logs of two recorded mainnet blocks
 * (test/fixtures/realdata/ethereum-etl, MIT, see SOURCE.md there) and through a real node.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { keccak256, toHex } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import { MalformedAnswerError } from "../../src/chain/errors.ts";
import { parseLogs } from "../../src/chain/logs.ts";
import { address, hash } from "../../src/chain/parse.ts";
import { parseBlockReceipts } from "../../src/chain/receipts.ts";
import { parseParityBlockTraces } from "../../src/chain/traces.ts";
import { TransientError } from "../../src/core/errors.ts";
import type { BlockHeader, ContractCreation } from "../../src/core/types.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { type CreationSource, type ReadBlocks, readBlocks } from "../../src/indexer/fetch-batch.ts";
import {
  buildCreations,
  type CreationScenario,
  emitPings,
  FixtureChain,
  rawRpc,
} from "../support/chain-fixture.ts";
import { type FaultCounters, type FaultProxyOptions, startFaultProxy } from "../support/fault-proxy.ts";

const BLOCKS = new URL("../fixtures/realdata/ethereum-etl/blocks_17173049_17173050/", import.meta.url);

interface EtlLog {
  log_index: number;
  transaction_hash: string;
  transaction_index: number;
  address: string;
  data: string;
  topics: string[];
  block_number: number;
  block_hash: string;
}

interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  logIndex: string;
  transactionHash: string;
  transactionIndex: string;
  removed: boolean;
}

/** The recorded logs as eth_getLogs sends them (hex quantities, camelCase). */
function recordedRawLogs(): RawLog[] {
  return readFileSync(new URL("expected_logs.json", BLOCKS), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as EtlLog)
    .map((log) => ({
      address: log.address,
      topics: log.topics,
      data: log.data,
      blockNumber: toHex(log.block_number),
      blockHash: log.block_hash,
      logIndex: toHex(log.log_index),
      transactionHash: log.transaction_hash,
      transactionIndex: toHex(log.transaction_index),
      removed: false,
    }));
}

const PING = keccak256(toHex("Ping(uint256,address,uint256)"));
const OTHER = `0x${"ab".repeat(32)}`;

describe("addresses and hashes from the node are hex", () => {
  const raw = recordedRawLogs();
  const at = (i: number) => raw[i] as RawLog;
  const first = Number(at(0).blockNumber);
  const last = Number(at(raw.length - 1).blockNumber);
  const topic0s = new Set(raw.map((log) => log.topics[0] as string));
  const parse = (logs: RawLog[]) => parseLogs(structuredClone(logs), first, last, topic0s);

  /** The recorded logs with one field of log `i` changed. */
  const withField = (i: number, field: keyof RawLog, value: unknown) =>
    raw.map((log, k) => (k === i ? ({ ...log, [field]: value } as RawLog) : log));
  const withTopic = (i: number, t: number, value: string) =>
    withField(
      i,
      "topics",
      at(i).topics.map((topic, k) => (k === t ? value : topic)),
    );
  /** `text` with its last hex digit replaced by a character that is not one. */
  const spoil = (text: unknown, by = "g") => `${String(text).slice(0, -1)}${by}`;

  test("the recorded mainnet logs pass, and upper-case hex digits are taken in lower case", () => {
    const logs = parse(raw);
    assert.equal(logs.length, 681);
    const shouted = raw.map((log) => ({
      ...log,
      address: `0x${log.address.slice(2).toUpperCase()}`,
      topics: log.topics.map((t) => `0x${t.slice(2).toUpperCase()}`),
      blockHash: `0x${log.blockHash.slice(2).toUpperCase()}`,
      transactionHash: `0x${log.transactionHash.slice(2).toUpperCase()}`,
    }));
    assert.deepEqual(parse(shouted), logs);
  });

  test("a non-hex character in any address or hash of any log is a malformed answer", () => {
    // The second log of a block and of a transaction too: fields that repeat are not trusted for it.
    const secondOfBlock = raw.findIndex((log, i) => i > 0 && log.blockNumber === raw[i - 1]?.blockNumber);
    const secondOfTx = raw.findIndex(
      (log, i) => i > 0 && log.transactionHash === raw[i - 1]?.transactionHash,
    );
    const withFourTopics = raw.findIndex((log) => log.topics.length === 4);
    const cases: [string, RawLog[], RegExp][] = [];
    for (const i of [0, secondOfBlock, secondOfTx, raw.length - 1]) {
      for (const field of ["address", "blockHash", "transactionHash"] as const) {
        for (const by of ["g", "x", " ", "\u0010", "é"]) {
          cases.push([
            `log ${i} ${field} ending in ${JSON.stringify(by)}`,
            withField(i, field, spoil(at(i)[field], by)),
            new RegExp(`log ${i} ${field}`),
          ]);
        }
      }
    }
    for (let t = 0; t < 4; t++) {
      const topic = at(withFourTopics).topics[t] as string;
      cases.push([
        `topic ${t}`,
        withTopic(withFourTopics, t, spoil(topic)),
        new RegExp(`log ${withFourTopics} topic`),
      ]);
      cases.push([
        `topic ${t} in upper case`,
        withTopic(withFourTopics, t, spoil(topic.toUpperCase().replace("0X", "0x"), "G")),
        /topic/,
      ]);
    }
    cases.push([
      "an address without its 0x",
      withField(0, "address", `00${at(0).address.slice(2)}`),
      /log 0 address/,
    ]);
    cases.push([
      "a hash with 1x for 0x",
      withField(0, "blockHash", `1${at(0).blockHash.slice(1)}`),
      /log 0 blockHash/,
    ]);
    assert.ok(secondOfBlock > 0 && secondOfTx > 0 && withFourTopics >= 0);
    for (const [what, logs, message] of cases) {
      assert.throws(
        () => parse(logs),
        (error: unknown) => error instanceof MalformedAnswerError && message.test(error.message),
        what,
      );
    }
  });

  test("the field readers of every other answer refuse non-hex addresses and hashes too", () => {
    const account = at(0).address;
    const txHash = at(0).transactionHash;
    assert.equal(address(account.toUpperCase().replace("0X", "0x"), "from"), account);
    assert.equal(hash(txHash, "hash"), txHash);
    for (const by of ["g", "G", "z", " ", "-", "\u0010"]) {
      assert.throws(() => address(spoil(account, by), "from"), MalformedAnswerError);
      assert.throws(() => hash(spoil(txHash, by), "hash"), MalformedAnswerError);
    }
    assert.throws(() => address(`0X${account.slice(2)}`, "from"), MalformedAnswerError);
    assert.throws(() => hash(txHash.slice(0, -1), "hash"), MalformedAnswerError);
  });
});

describe("what a real node returns, checked", () => {
  let anvil: Anvil;
  let scenario: CreationScenario;
  let last: number;

  before(async () => {
    anvil = await startAnvil();
    const chain = await FixtureChain.create(anvil.url);
    scenario = await buildCreations(chain);
    await emitPings(chain, scenario.emitter, 2, 5);
    last = await chain.blockNumber();
  });

  after(async () => {
    await anvil?.stop();
  });

  test("non-hex characters: asked again, and what the node answers then is returned", async () => {
    const numbers = Array.from({ length: last + 1 }, (_, i) => i);
    const readAll = async (url: string) => {
      const client = createChainClient({ url, retries: 4, retryBaseMs: 1, maxLogRange: last + 1 });
      try {
        return await Promise.all([
          client.getLogs(0, last, [PING]),
          client.getHeaders(numbers),
          client.getTracedCreations(0, last),
        ]);
      } finally {
        await client.close();
      }
    };
    const clean = await startFaultProxy({ upstream: anvil.url });
    const spoiling = await startFaultProxy({
      upstream: anvil.url,
      nonHex: { methods: ["eth_getLogs", "eth_getBlockByNumber", "trace_block"], times: 3 },
    });
    try {
      const [expected, read] = [await readAll(clean.url), await readAll(spoiling.url)];
      assert.deepEqual(read, expected);
      assert.equal(read[0].length, 10);
      assert.equal(spoiling.counters.nonHex, 3);
      // Each spoiled answer was refused and asked for again.
      assert.equal(spoiling.counters.calls, clean.counters.calls + 3);
    } finally {
      await clean.close();
      await spoiling.close();
    }
  });

  /** Reads blocks [0, last] through a proxy with these faults, as a batch of the indexer reads them. */
  async function readThrough(
    source: CreationSource,
    faults: Omit<FaultProxyOptions, "upstream"> = {},
  ): Promise<{ read?: ReadBlocks; error?: unknown; counters: FaultCounters }> {
    const proxy = await startFaultProxy({ upstream: anvil.url, ...faults });
    const client = createChainClient({ url: proxy.url, retries: 2, retryBaseMs: 1 });
    try {
      return { read: await readBlocks(client, source, 0, last, [PING]), counters: proxy.counters };
    } catch (error) {
      return { error, counters: proxy.counters };
    } finally {
      await client.close();
      await proxy.close();
    }
  }

  test("creations carry their block's hash, from traces of either form and from receipts", async () => {
    const parity = await readThrough("traces");
    assert.deepEqual(parity.read?.creations, scenario.traced);
    const geth = await readThrough("traces", { disabledMethods: ["trace_block"] });
    assert.deepEqual(geth.read?.creations, scenario.traced);
    // Traced by the hash of the block, not by its number.
    assert.equal(
      geth.counters.methods.debug_traceBlockByNumber ?? 0,
      0,
      "never by number, not even the probe",
    );
    assert.equal(geth.counters.methods.debug_traceBlockByHash, last + 2, "the probe, then every block");
    const oldGeth = await readThrough("traces", {
      disabledMethods: ["trace_block"],
      stripTraceTxHashes: true,
    });
    assert.deepEqual(oldGeth.read?.creations, scenario.traced);
    for (const disabledMethods of [[], ["eth_getBlockReceipts"]]) {
      const receipts = await readThrough("receipts", { disabledMethods });
      assert.deepEqual(receipts.read?.creations, scenario.deployments);
    }
    const headers: readonly BlockHeader[] = parity.read?.headers ?? [];
    for (const creation of scenario.traced)
      assert.equal(creation.blockHash, headers[creation.blockNumber]?.hash);
  });

  test("a trace or receipt of another fork's block is refused, and the blocks are to be read again", async () => {
    const cases: [string, CreationSource, Omit<FaultProxyOptions, "upstream">][] = [
      ["trace_block", "traces", { otherFork: ["trace_block"] }],
      ["eth_getBlockReceipts", "receipts", { otherFork: ["eth_getBlockReceipts"] }],
      [
        "eth_getTransactionReceipt",
        "receipts",
        { disabledMethods: ["eth_getBlockReceipts"], otherFork: ["eth_getTransactionReceipt"] },
      ],
    ];
    for (const [method, source, faults] of cases) {
      const { read, error, counters } = await readThrough(source, faults);
      assert.equal(read, undefined, method);
      assert.ok(counters.otherFork > 0, method);
      assert.ok(error instanceof TransientError, method);
      const first = source === "traces" ? scenario.traced[0] : scenario.deployments[0];
      assert.equal(
        error.message,
        // Traces name their block's hash whether or not they hold a creation.
        source === "traces"
          ? `the traces of block ${first?.blockNumber} are not of the block the node returned`
          : `the creation of ${first?.address} in block ${first?.blockNumber} is not from the block the node returned`,
        method,
      );
    }
  });

  test("the parsers refuse traces and receipts of two blocks at once", async () => {
    const made = scenario.traced[2] as ContractCreation;
    const traces = await rawRpc<{ blockHash: string }[]>(anvil.url, "trace_block", [toHex(made.blockNumber)]);
    assert.deepEqual(parseParityBlockTraces(traces, made.blockNumber), scenario.traced.slice(2));
    const mixed = traces.map((trace, i) =>
      i === traces.length - 1 ? { ...trace, blockHash: OTHER } : trace,
    );
    assert.throws(() => parseParityBlockTraces(mixed, made.blockNumber), /of two blocks/);

    const deployed = scenario.deployments[0] as ContractCreation;
    const receipts = await rawRpc<{ blockHash: string }[]>(anvil.url, "eth_getBlockReceipts", [
      toHex(deployed.blockNumber),
    ]);
    assert.deepEqual(
      parseBlockReceipts(receipts, deployed.blockNumber).map((d) => d.creation),
      [deployed],
    );
    const twice = [...receipts, { ...receipts[0], blockHash: OTHER }];
    assert.throws(() => parseBlockReceipts(twice, deployed.blockNumber), /of two blocks/);
    assert.throws(
      () => parseBlockReceipts([{ ...receipts[0], blockHash: null }], deployed.blockNumber),
      MalformedAnswerError,
    );
  });
});
