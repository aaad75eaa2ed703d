/**
 * Which failures are asked again and what the caller is told when asking again stops: answers that
 * will never change are not retried, and a node that keeps giving the same unusable answer is told
 * apart from one that is down, overloaded or behind.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import { MalformedAnswerError, RepeatedNodeError } from "../../src/chain/errors.ts";
import { classify, isOutage } from "../../src/chain/faults.ts";
import { TransientError } from "../../src/core/errors.ts";
import type { Hex } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { buildCreations, type CreationScenario, FixtureChain, fixtureAbi } from "../support/chain-fixture.ts";
import { type FaultProxyOptions, startFaultProxy } from "../support/fault-proxy.ts";

/** How geth and erigon answer an eth_call that ran past their RPC EVM timeout. */
const CALL_TIMED_OUT = { code: -32000, message: "execution aborted (timeout = 5s)" };

describe("retries against a real node", () => {
  let anvil: Anvil;
  let chain: FixtureChain;
  let scenario: CreationScenario;

  before(async () => {
    anvil = await startAnvil();
    chain = await FixtureChain.create(anvil.url);
    scenario = await buildCreations(chain);
  });

  after(async () => {
    await anvil?.stop();
  });

  test("a block asked for by a hash the node does not know is a lag, whatever the node's words", () => {
    for (const error of [
      {
        code: -32000,
        message: "block 0x61fd5bf77db0e3533a641d2b486e94519f460ae5e00cfb300017ff114e448a3d not found",
      },
      { code: -32001, message: "Resource not found" },
      { code: -32000, message: "unknown block" },
    ]) {
      const failure = { method: "debug_traceBlockByHash", ...error, inBatch: false };
      assert.equal(classify(failure), "retry", error.message);
      assert.equal(isOutage(failure), true, error.message);
    }
  });

  test("an eth_call the node aborted for running too long is no answer, not asked again", async () => {
    assert.equal(classify({ method: "eth_call", ...CALL_TIMED_OUT, inBatch: false }), "revert");
    const value = encodeFunctionData({ abi: fixtureAbi("Emitter"), functionName: "value", args: [] });
    const proxy = await startFaultProxy({ upstream: anvil.url, rpcErrors: { eth_call: CALL_TIMED_OUT } });
    const client = createChainClient({ url: proxy.url, retries: 3, retryBaseMs: 1 });
    try {
      assert.equal(await client.call(scenario.emitter, value), undefined);
      assert.equal(proxy.counters.rpcErrors, 1);
      assert.equal(proxy.counters.requests, 1);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  /** What reading block 1's header through a proxy with these faults fails with, once its retries run out. */
  async function failureOf(
    faults: Omit<FaultProxyOptions, "upstream">,
  ): Promise<{ error: unknown; url: string }> {
    const proxy = await startFaultProxy({ upstream: anvil.url, ...faults });
    const client = createChainClient({ url: proxy.url, retries: 2, retryBaseMs: 1, timeoutMs: 300 });
    try {
      await client.getHeaders([1]);
    } catch (error) {
      return { error, url: proxy.url };
    } finally {
      await client.close();
      await proxy.close();
    }
    assert.fail("the header was read");
  }

  test("a node that keeps answering an error it does not explain: RepeatedNodeError with its words", async () => {
    const unexplained = { code: -32000, message: "getting block: unexpected EOF" };
    const { error, url } = await failureOf({ rpcErrors: { eth_getBlockByNumber: unexplained } });
    assert.ok(error instanceof RepeatedNodeError && error instanceof TransientError);
    assert.equal(error.name, "RepeatedNodeError");
    assert.equal(error.method, "eth_getBlockByNumber");
    assert.equal(
      error.message,
      `eth_getBlockByNumber to ${url} failed after 3 attempts: JSON-RPC error -32000: getting block: unexpected EOF`,
    );
    assert.equal(error.cause.message, "JSON-RPC error -32000: getting block: unexpected EOF");
  });

  test("a node that keeps answering malformed: RepeatedNodeError whose cause is the malformed answer", async () => {
    const { error } = await failureOf({ nonHex: { methods: ["eth_getBlockByNumber"], times: 1000 } });
    assert.ok(error instanceof RepeatedNodeError);
    assert.equal(error.method, "eth_getBlockByNumber");
    assert.ok(error.cause instanceof MalformedAnswerError);
    assert.match(error.cause.message, /^malformed answer: block 1 hash is 0x[0-9a-f]{63}g$/);
  });

  test("outages stay plain TransientErrors: down, overloaded, rate limited, behind, unreachable, silent", async () => {
    const outages: [string, Omit<FaultProxyOptions, "upstream">][] = [
      ["HTTP 503", { alwaysFailStatus: 503 }],
      ["HTTP 429", { rates: { tooManyRequests: 1 } }],
      ["a dropped connection", { rates: { reset: 1 } }],
      ["no answer", { rates: { hang: 1 } }],
      ["a truncated answer", { rates: { truncate: 1 } }],
      ["a block the node does not have yet", { rates: { nullBlock: 1 } }],
      [
        "a lagging node's words",
        { rpcErrors: { eth_getBlockByNumber: { code: -32000, message: "header not found" } } },
      ],
      [
        "a rate limit in a JSON-RPC error",
        {
          rpcErrors: {
            eth_getBlockByNumber: {
              code: -32005,
              message: "daily request count exceeded, request rate limited",
            },
          },
        },
      ],
    ];
    for (const [what, faults] of outages) {
      const { error } = await failureOf(faults);
      assert.ok(error instanceof TransientError && !(error instanceof RepeatedNodeError), what);
      assert.equal(error.name, "TransientError", what);
    }

    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const unreachable = createChainClient({ url: `http://127.0.0.1:${port}`, retries: 1, retryBaseMs: 1 });
    try {
      await assert.rejects(unreachable.getHeaders([1]), (error: unknown) => {
        assert.ok(error instanceof TransientError && !(error instanceof RepeatedNodeError));
        return true;
      });
    } finally {
      await unreachable.close();
    }
  });

  test("unusable answers with an outage among them: a plain TransientError", async () => {
    const proxy = await startFaultProxy({
      upstream: anvil.url,
      seed: 7,
      rates: { serverError: 0.3 },
      rpcErrors: { eth_getBlockByNumber: { code: -32000, message: "getting block: unexpected EOF" } },
    });
    const client = createChainClient({ url: proxy.url, retries: 6, retryBaseMs: 1 });
    try {
      await assert.rejects(client.getHeaders([1]), (error: unknown) => {
        assert.ok(error instanceof TransientError && !(error instanceof RepeatedNodeError));
        assert.match(error.message, /failed after 7 attempts/);
        return true;
      });
      assert.ok(proxy.counters.serverError > 0 && proxy.counters.rpcErrors > 0);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  test("the sender comes by block and position, from a node that prunes its transaction index", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url, nullAnswers: ["eth_getTransactionByHash"] });
    const client = createChainClient({ url: proxy.url, retries: 2, retryBaseMs: 1 });
    try {
      assert.equal(await client.getTransactionSender(scenario.someTx), chain.sender);
      const byHash = await fetch(proxy.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_getTransactionByHash",
          params: [scenario.someTx.hash],
        }),
      });
      assert.equal(((await byHash.json()) as { result: unknown }).result, null);
      assert.equal(proxy.counters.nullAnswers, 1);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  test("a sender lookup answered with another transaction is refused; one the node does not have is refused too", async () => {
    const client = createChainClient({ url: anvil.url, retries: 2, retryBaseMs: 1 });
    try {
      const other = scenario.traced[0]?.txHash as Hex;
      await assert.rejects(
        client.getTransactionSender({ ...scenario.someTx, hash: other }),
        (error: unknown) => {
          assert.ok(error instanceof RepeatedNodeError);
          assert.equal(error.method, "eth_getTransactionByBlockHashAndIndex");
          assert.ok(error.cause instanceof MalformedAnswerError);
          assert.match(
            error.message,
            new RegExp(`expecting ${other}, the node answered ${scenario.someTx.hash}$`),
          );
          return true;
        },
      );
      const elsewhere = { ...scenario.someTx, blockHash: `0x${"ab".repeat(32)}` as Hex };
      await assert.rejects(client.getTransactionSender(elsewhere), (error: unknown) => {
        assert.ok(error instanceof RepeatedNodeError);
        assert.match(
          error.message,
          /failed after 3 attempts: the node has no transaction \d+ of block 0x(ab)+$/,
        );
        return true;
      });
    } finally {
      await client.close();
    }
  });
});
