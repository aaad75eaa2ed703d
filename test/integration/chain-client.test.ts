import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData, keccak256, pad, toHex } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import { ClientClosedError, MalformedAnswerError } from "../../src/chain/errors.ts";
import { parseLogs } from "../../src/chain/logs.ts";
import type { ChainClient } from "../../src/chain/rpc-types.ts";
import { UserFacingError } from "../../src/core/errors.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ChainLog } from "../../src/core/types.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import {
  buildCreations,
  type CreationScenario,
  emitPings,
  FixtureChain,
  fixtureAbi,
  fixtureRuntimeCode,
  rawRpc,
} from "../support/chain-fixture.ts";
import { startFaultProxy } from "../support/fault-proxy.ts";

const PING = keccak256(toHex("Ping(uint256,address,uint256)"));
const PONG = keccak256(toHex("Pong(uint256)"));

interface RawLog {
  address: string;
  topics: string[];
  data: Hex;
  blockNumber: Hex;
  blockHash: string;
  logIndex: Hex;
  transactionHash: string;
  transactionIndex: Hex;
}

/** The node's own answer, normalised by hand: the oracle the client's parser is held to. */
async function rawLogs(url: string, from: number, to: number, topic0: Hex[]): Promise<ChainLog[]> {
  const raw = await rawRpc<RawLog[]>(url, "eth_getLogs", [
    { fromBlock: toHex(from), toBlock: toHex(to), topics: [topic0] },
  ]);
  return raw.map((log) => ({
    address: log.address.toLowerCase() as Address,
    topics: log.topics.map((t) => t.toLowerCase() as Hex),
    data: log.data,
    blockNumber: Number(log.blockNumber),
    blockHash: log.blockHash.toLowerCase() as Hex,
    logIndex: Number(log.logIndex),
    transactionHash: log.transactionHash.toLowerCase() as Hex,
    transactionIndex: Number(log.transactionIndex),
  }));
}

function selector(name: string, fn: string): Hex {
  return encodeFunctionData({ abi: fixtureAbi(name), functionName: fn, args: [] });
}

describe("chain client against anvil", () => {
  let anvil: Anvil;
  let chain: FixtureChain;
  let scenario: CreationScenario;
  let client: ChainClient;
  /** Last block of the scenario and its logs. */
  let last: number;
  const PINGS_PER_TX = 50;
  const PING_TXS = 3;

  before(async () => {
    anvil = await startAnvil();
    chain = await FixtureChain.create(anvil.url);
    scenario = await buildCreations(chain);
    await emitPings(chain, scenario.emitter, PING_TXS, PINGS_PER_TX);
    for (const v of [7n, 8n]) await chain.invoke(scenario.emitter, "Emitter", "pong", [v]);
    last = await chain.blockNumber();
    client = createChainClient({ url: anvil.url });
  });

  after(async () => {
    await client?.close();
    await anvil?.stop();
  });

  test("chainId and blockNumber", async () => {
    assert.equal(await client.chainId(), 31337);
    assert.equal(await client.blockNumber(), last);
  });

  test("getLogs returns exactly the node's logs, parsed, in (block, logIndex) order", async () => {
    const logs = await client.getLogs(0, last, [PING, PONG]);
    assert.deepEqual(logs, await rawLogs(anvil.url, 0, last, [PING, PONG]));
    assert.equal(logs.length, PING_TXS * PINGS_PER_TX + 2);

    const pings = logs.filter((log) => log.topics[0] === PING);
    assert.equal(pings.length, PING_TXS * PINGS_PER_TX);
    pings.forEach((log, k) => {
      const i = k % PINGS_PER_TX;
      assert.equal(log.address, scenario.emitter);
      assert.equal(log.topics[1], pad(toHex(i)));
      assert.equal(log.topics[2], pad(chain.sender));
      assert.equal(log.data, pad(toHex(i * 2)));
      assert.equal(log.logIndex, i);
    });
    const pongs = logs.filter((log) => log.topics[0] === PONG);
    assert.deepEqual(
      pongs.map((log) => log.data),
      [pad(toHex(7)), pad(toHex(8))],
    );
    for (let i = 1; i < logs.length; i++) {
      const [a, b] = [logs[i - 1] as ChainLog, logs[i] as ChainLog];
      assert.ok(
        a.blockNumber < b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex < b.logIndex),
      );
    }
  });

  test("getLogs filters by topic0 and range", async () => {
    const pongs = await client.getLogs(0, last, [PONG]);
    assert.deepEqual(pongs, await rawLogs(anvil.url, 0, last, [PONG]));
    const firstPingBlock = (await client.getLogs(0, last, [PING]))[0]?.blockNumber ?? -1;
    const one = await client.getLogs(firstPingBlock, firstPingBlock, [PING]);
    assert.equal(one.length, PINGS_PER_TX);
    assert.ok(one.every((log) => log.blockNumber === firstPingBlock));
    assert.deepEqual(await client.getLogs(0, last, []), []);
    await assert.rejects(client.getLogs(5, 4, [PING]), RangeError);
  });

  test("the log parser refuses answers the indexer must not trust", async () => {
    const raw = await rawRpc<Record<string, unknown>[]>(anvil.url, "eth_getLogs", [
      { fromBlock: "0x0", toBlock: toHex(last), topics: [[PING, PONG]] },
    ]);
    const both = new Set<string>([PING, PONG]);
    const parse =
      (logs: unknown, from = 0, topics: ReadonlySet<string> = both) =>
      () =>
        parseLogs(structuredClone(logs), from, last, topics);
    assert.deepEqual(parse(raw)(), await rawLogs(anvil.url, 0, last, [PING, PONG]));
    const [first, second] = raw as [Record<string, unknown>, Record<string, unknown>];
    const rest = raw.slice(2);
    const upper = { ...first, address: (first.address as string).toUpperCase().replace("0X", "0x") };
    assert.equal(parse([upper, second, ...rest])()[0]?.address, scenario.emitter);

    const refused: [string, () => unknown, RegExp][] = [
      ["a duplicate", parse([first, first, second, ...rest]), /order/],
      ["logs out of order", parse([second, first, ...rest]), /order/],
      ["a removed log", parse([{ ...first, removed: true }, second, ...rest]), /removed/],
      ["a block outside the range", parse(raw, Number(first.blockNumber) + 1), /blockNumber/],
      [
        "a pending log",
        parse([{ ...first, blockHash: null, blockNumber: null }, second, ...rest]),
        /blockNumber/,
      ],
      [
        "two hashes for one block",
        parse([first, { ...second, blockHash: `0x${"ab".repeat(32)}` }, ...rest]),
        /blockHash/,
      ],
      ["a topic not asked for", parse(raw, 0, new Set([PONG])), /topic0/],
      ["a log without topics", parse([{ ...first, topics: [] }, second, ...rest]), /topics/],
      ["not a list", parse({ logs: raw }), /eth_getLogs result/],
    ];
    for (const [what, run, message] of refused) {
      assert.throws(
        run,
        (error: unknown) => error instanceof MalformedAnswerError && message.test(error.message),
        what,
      );
    }
  });

  test("getLogs past the node's head is a lagging node (retried), not a refused range", async () => {
    const impatient = createChainClient({ url: anvil.url, retries: 1, retryBaseMs: 1 });
    try {
      await assert.rejects(impatient.getLogs(last + 3, last + 5, [PING]), {
        name: "TransientError",
        message: new RegExp(
          `^eth_getLogs to ${anvil.url} failed after 2 attempts: JSON-RPC error -32602: .*block height is ${last} but requested was ${last + 3}$`,
        ),
      });
    } finally {
      await impatient.close();
    }
  });

  test("getLogs over many small chunks fetched concurrently gives the same logs", async () => {
    const chunked = createChainClient({ url: anvil.url, maxLogRange: 1, logConcurrency: 3, batchSize: 4 });
    try {
      assert.deepEqual(
        await chunked.getLogs(0, last, [PING, PONG]),
        await client.getLogs(0, last, [PING, PONG]),
      );
    } finally {
      await chunked.close();
    }
  });

  test("getHeaders returns the headers asked for, in the order asked", async () => {
    const numbers = [last, 0, 3, 3, 1];
    const headers = await client.getHeaders(numbers);
    const expected = await Promise.all(
      numbers.map(async (n) => {
        const block = await rawRpc<{ hash: Hex; parentHash: Hex; timestamp: Hex; logsBloom: Hex }>(
          anvil.url,
          "eth_getBlockByNumber",
          [toHex(n), false],
        );
        return {
          number: n,
          hash: block.hash,
          parentHash: block.parentHash,
          timestamp: Number(block.timestamp),
          logsBloom: block.logsBloom,
        };
      }),
    );
    assert.deepEqual(headers, expected);
    const [h2, h3] = await client.getHeaders([2, 3]);
    assert.equal(h3?.parentHash, h2?.hash);
    assert.deepEqual(await client.getHeaders([]), []);
  });

  test("many requests go out in batches, never more HTTP requests at once than allowed", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url });
    const capped = createChainClient({ url: proxy.url, batchSize: 3, maxInFlight: 2 });
    try {
      const numbers = Array.from({ length: 60 }, (_, i) => i % (last + 1));
      assert.deepEqual(await capped.getHeaders(numbers), await client.getHeaders(numbers));
      assert.equal(proxy.counters.calls, 60);
      assert.equal(proxy.counters.requests, 20);
      assert.equal(proxy.counters.maxOpen, 2);
    } finally {
      await capped.close();
      await proxy.close();
    }
  });

  test("close fails what is pending at once", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url, rates: { hang: 1 } });
    const closing = createChainClient({ url: proxy.url, timeoutMs: 60_000 });
    try {
      const pending = closing.getHeaders([1, 2]);
      const queued = closing.getLogs(0, last, [PING]);
      const settled = new Set<string>();
      void pending.catch(() => {}).finally(() => settled.add("pending"));
      void queued.catch(() => {}).finally(() => settled.add("queued"));
      while (proxy.counters.requests < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      await closing.close();
      // The node never answers and the timeout is a minute away: only close can have failed them,
      // and "at once" means by the next turn of the event loop, not after some time.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual([...settled].sort(), ["pending", "queued"]);
      await assert.rejects(pending, ClientClosedError);
      await assert.rejects(queued, ClientClosedError);
      await assert.rejects(closing.chainId(), ClientClosedError);
    } finally {
      await proxy.close();
    }
  });

  test("getHeaders of a block the node does not have gives up with a transient error", async () => {
    const impatient = createChainClient({ url: anvil.url, retries: 2, retryBaseMs: 1 });
    try {
      await assert.rejects(impatient.getHeaders([last + 1000]), {
        name: "TransientError",
        message: new RegExp(
          `eth_getBlockByNumber .* failed after 3 attempts: block ${last + 1000} is not available`,
        ),
      });
    } finally {
      await impatient.close();
    }
  });

  test("getCode returns runtime code, 0x for accounts without, and honours the block", async () => {
    const child = scenario.traced[2]?.address as Address;
    assert.equal(await client.getCode(child), fixtureRuntimeCode("Child"));
    assert.equal(await client.getCode(chain.sender), "0x");
    assert.equal(await client.getCode(child, (scenario.traced[2]?.blockNumber ?? 1) - 1), "0x");
  });

  test("call returns data, and undefined on a revert, an unknown function or an account without code", async () => {
    assert.equal(await client.call(scenario.emitter, selector("Emitter", "value")), pad(toHex(42)));
    assert.equal(await client.call(scenario.emitter, selector("Emitter", "fail")), undefined);
    // A revert reason is the contract's own text, whatever it says.
    assert.equal(await client.call(scenario.emitter, selector("Emitter", "failWords")), undefined);
    assert.equal(await client.call(scenario.emitter, "0xdeadbeef"), undefined);
    assert.equal(await client.call(chain.sender, selector("Emitter", "value")), undefined);
    const deployedAt = scenario.deployments[0]?.blockNumber ?? 1;
    assert.equal(
      await client.call(scenario.emitter, selector("Emitter", "value"), deployedAt - 1),
      undefined,
    );
    assert.equal(
      await client.call(scenario.emitter, selector("Emitter", "value"), deployedAt),
      pad(toHex(42)),
    );
  });

  test("getTransactionSender", async () => {
    assert.equal(await client.getTransactionSender(scenario.someTx), chain.sender);
  });

  test("traced creations: CREATE and CREATE2 from a factory, deployments; nothing that was undone", async () => {
    assert.equal(await client.traceApi(), "parity");
    const creations = await client.getTracedCreations(0, last);
    assert.deepEqual(creations, scenario.traced);
    for (const creation of creations) assert.notEqual(await client.getCode(creation.address), "0x");
    for (const address of scenario.undone) {
      assert.equal(await client.getCode(address), "0x");
      assert.ok(!creations.some((c) => c.address === address));
    }
    const made = scenario.traced[2]?.blockNumber ?? -1;
    assert.deepEqual(await client.getTracedCreations(made, made), scenario.traced.slice(2));
  });

  test("traced creations from geth's callTracer, with and without txHash, equal the parity ones", async () => {
    for (const stripTraceTxHashes of [false, true]) {
      const proxy = await startFaultProxy({
        upstream: anvil.url,
        disabledMethods: ["trace_block"],
        stripTraceTxHashes,
      });
      const viaGeth = createChainClient({ url: proxy.url });
      try {
        assert.equal(await viaGeth.traceApi(), "geth");
        assert.deepEqual(await viaGeth.getTracedCreations(0, last), scenario.traced);
        assert.ok(proxy.counters.methodDisabled >= 1);
      } finally {
        await viaGeth.close();
        await proxy.close();
      }
    }
  });

  test("a node without any trace API says so", async () => {
    const proxy = await startFaultProxy({
      upstream: anvil.url,
      disabledMethods: ["trace_block", "debug_traceBlockByHash"],
    });
    const untraced = createChainClient({ url: proxy.url });
    try {
      assert.equal(await untraced.traceApi(), "none");
      await assert.rejects(untraced.getTracedCreations(0, 1), UserFacingError);
    } finally {
      await untraced.close();
      await proxy.close();
    }
  });

  test("a node that traces recent blocks only has no trace API for an older probe block", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url, tracesFrom: last });
    try {
      const probedOld = createChainClient({ url: proxy.url });
      const probedRecent = createChainClient({ url: proxy.url });
      try {
        assert.equal(await probedOld.traceApi(0), "none");
        assert.ok(proxy.counters.traceRefused > 0, "the proxy refused to trace block 0");
        assert.equal(await probedRecent.traceApi(last), "parity");
      } finally {
        await probedOld.close();
        await probedRecent.close();
      }
    } finally {
      await proxy.close();
    }
  });

  test("receipt creations: successful top-level deployments only", async () => {
    assert.deepEqual(await client.getReceiptCreations(0, last), scenario.deployments);
  });

  test("receipt creations without eth_getBlockReceipts, from the block's transactions", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url, disabledMethods: ["eth_getBlockReceipts"] });
    const older = createChainClient({ url: proxy.url });
    try {
      assert.deepEqual(await older.getReceiptCreations(0, last), scenario.deployments);
      // Probed once, then the other path for every block.
      assert.ok(proxy.counters.methodDisabled >= 1 && proxy.counters.methodDisabled <= last + 1);
      const refusedBefore = proxy.counters.methodDisabled;
      assert.deepEqual(await older.getReceiptCreations(0, last), scenario.deployments);
      assert.equal(proxy.counters.methodDisabled, refusedBefore);
    } finally {
      await older.close();
      await proxy.close();
    }
  });

  test("receipt creations without status (before Byzantium) are confirmed by the code left behind", async () => {
    for (const disabledMethods of [[], ["eth_getBlockReceipts"]]) {
      const proxy = await startFaultProxy({ upstream: anvil.url, stripReceiptStatus: true, disabledMethods });
      const old = createChainClient({ url: proxy.url });
      try {
        // The failed deployment in the scenario leaves a receipt with a contract address but no code.
        assert.deepEqual(await old.getReceiptCreations(0, last), scenario.deployments);
      } finally {
        await old.close();
        await proxy.close();
      }
    }
  });

  test("getLogs over tens of thousands of logs returns every one, in order", async () => {
    const from = (await chain.blockNumber()) + 1;
    const TXS = 50;
    const PER_TX = 1000;
    await emitPings(chain, scenario.emitter, TXS, PER_TX);
    const to = await chain.blockNumber();
    const logs: ChainLog[] = await client.getLogs(from, to, [PING]);
    assert.equal(logs.length, TXS * PER_TX);
    assert.equal(logs[0]?.blockNumber, from);
    assert.equal(logs[logs.length - 1]?.logIndex, PER_TX - 1);
    assert.deepEqual(logs, await rawLogs(anvil.url, from, to, [PING]));
  });
});
