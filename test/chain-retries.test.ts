/**
 * Which failures are asked again and what the caller is told when asking again stops: answers that
 * will never change are not retried, and a node that keeps giving the same unusable answer is told
 * apart from one that is down, overloaded or behind.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData } from "viem";
import { createChainClient } from "../src/chain/client.ts";
import { classify } from "../src/chain/faults.ts";
import { type Anvil, startAnvil } from "../src/devchain/anvil.ts";
import { buildCreations, type CreationScenario, FixtureChain, fixtureAbi } from "./support/chain-fixture.ts";
import { startFaultProxy } from "./support/fault-proxy.ts";

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
});
