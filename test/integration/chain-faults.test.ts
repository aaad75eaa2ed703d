import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData, keccak256, toHex } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import { NodeRejectedError } from "../../src/chain/errors.ts";
import { parseRetryAfter } from "../../src/chain/retry.ts";
import type { ChainClient, RpcOptions } from "../../src/chain/rpc-types.ts";
import { RequestTooLargeError, TransientError, UserFacingError } from "../../src/core/errors.ts";
import type { Address } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import {
  buildCreations,
  type CreationScenario,
  emitPings,
  FixtureChain,
  fixtureAbi,
} from "../support/chain-fixture.ts";
import { type FaultKind, RANGE_REFUSALS, startFaultProxy } from "../support/fault-proxy.ts";

const PING = keccak256(toHex("Ping(uint256,address,uint256)"));
const PONG = keccak256(toHex("Pong(uint256)"));

/** Everything the client reads, in one value, so "the same answer" is one deepEqual. */
async function readEverything(
  client: ChainClient,
  scenario: CreationScenario,
  last: number,
  sender: Address,
) {
  const numbers = Array.from({ length: last + 1 }, (_, i) => i);
  const value = encodeFunctionData({ abi: fixtureAbi("Emitter"), functionName: "value", args: [] });
  const fail = encodeFunctionData({ abi: fixtureAbi("Emitter"), functionName: "fail", args: [] });
  const [logs, pongs, headers, traced, deployed, codes, calls, sender_] = await Promise.all([
    client.getLogs(0, last, [PING, PONG]),
    client.getLogs(0, last, [PONG]),
    client.getHeaders(numbers),
    client.getTracedCreations(0, last),
    client.getReceiptCreations(0, last),
    Promise.all(scenario.traced.map((c) => client.getCode(c.address))),
    Promise.all([client.call(scenario.emitter, value), client.call(scenario.emitter, fail)]),
    client.getTransactionSender(scenario.someTx),
  ]);
  assert.equal(sender_, sender);
  return { logs, pongs, headers, traced, deployed, codes, calls };
}

/**
 * "Bounded time", read from what the client decided rather than from a clock: the waits it
 * chose between attempts, each within the backoff's bounds for its attempt.
 */
function assertBackoffWaits(warnings: { obj: object }[], retries: number, baseMs: number): void {
  const waits = warnings.map((w) => w.obj as { attempt: number; delayMs: number });
  assert.deepEqual(
    waits.map((w) => w.attempt),
    Array.from({ length: retries }, (_, i) => i + 1),
  );
  for (const { attempt, delayMs } of waits) {
    const ceiling = baseMs * 2 ** (attempt - 1);
    assert.ok(delayMs >= ceiling / 2 && delayMs <= ceiling, `attempt ${attempt} waited ${delayMs} ms`);
  }
}

function collectingLogger() {
  const warnings: { obj: object; msg: string }[] = [];
  return {
    warnings,
    logger: {
      warn: (obj: object, msg: string) => warnings.push({ obj, msg }),
      info: () => {},
    },
  };
}

describe("chain client through a faulty proxy", () => {
  let anvil: Anvil;
  let chain: FixtureChain;
  let scenario: CreationScenario;
  let last: number;
  let direct: Awaited<ReturnType<typeof readEverything>>;

  before(async () => {
    anvil = await startAnvil();
    chain = await FixtureChain.create(anvil.url);
    scenario = await buildCreations(chain);
    await emitPings(chain, scenario.emitter, 40, 20);
    for (const v of [1n, 2n, 3n]) await chain.invoke(scenario.emitter, "Emitter", "pong", [v]);
    last = await chain.blockNumber();
    const client = createChainClient({ url: anvil.url });
    try {
      direct = await readEverything(client, scenario, last, chain.sender);
    } finally {
      await client.close();
    }
    assert.equal(direct.logs.length, 40 * 20 + 3);
    assert.equal(direct.traced.length, 4);
  });

  after(async () => {
    await anvil?.stop();
  });

  test("returns exactly what it returns directly, while every kind of fault is injected", async (t) => {
    const proxy = await startFaultProxy({
      upstream: anvil.url,
      seed: 20240611,
      maxLogRange: 4,
      rates: {
        tooManyRequests: 0.05,
        serverError: 0.05,
        hang: 0.03,
        reset: 0.04,
        truncate: 0.05,
        dropBatchElement: 0.2,
        nullBlock: 0.05,
      },
    });
    const { warnings, logger } = collectingLogger();
    const options: RpcOptions = {
      url: proxy.url,
      timeoutMs: 400,
      retries: 12,
      retryBaseMs: 5,
      batchSize: 8,
      maxInFlight: 4,
      maxLogRange: 64,
      logConcurrency: 3,
    };
    try {
      // Fresh clients, so each round starts from the configured log range and meets refusals again.
      for (let round = 0; round < 3; round++) {
        const client = createChainClient({ ...options, logger });
        try {
          assert.deepEqual(await readEverything(client, scenario, last, chain.sender), direct);
        } finally {
          await client.close();
        }
      }
    } finally {
      await proxy.close();
    }
    const kinds: FaultKind[] = [
      "tooManyRequests",
      "serverError",
      "hang",
      "reset",
      "truncate",
      "dropBatchElement",
      "nullBlock",
    ];
    for (const kind of kinds) assert.ok(proxy.counters[kind] > 0, `no ${kind} fault was injected`);
    RANGE_REFUSALS.forEach((refusal, i) => {
      assert.ok((proxy.counters.rangeRefused[i] ?? 0) > 0, `range refusal "${refusal.message}" never sent`);
    });
    t.diagnostic(`injected: ${JSON.stringify(proxy.counters)}`);
    assert.ok(warnings.length > 0);
    assert.ok(warnings.every((w) => w.msg === "JSON-RPC request failed; retrying"));
  });

  test("a node that always fails: one clear line naming the URL and method, after its retries, in bounded time", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url, alwaysFailStatus: 503 });
    const { port } = new URL(proxy.url);
    const key = "0123456789abcdef0123456789abcdef";
    const { warnings, logger } = collectingLogger();
    const client = createChainClient({
      url: `http://mintlens:s3cret@127.0.0.1:${port}/v3/${key}`,
      retries: 3,
      retryBaseMs: 10,
      logger,
    });
    try {
      await assert.rejects(client.blockNumber(), (error: unknown) => {
        assert.ok(error instanceof TransientError);
        assert.equal(
          error.message,
          `eth_blockNumber to http://***@127.0.0.1:${port}/v3/*** failed after 4 attempts: HTTP 503: "injected failure"`,
        );
        return true;
      });
    } finally {
      await client.close();
      await proxy.close();
    }
    assert.equal(proxy.counters.alwaysFailed, 4);
    assertBackoffWaits(warnings, 3, 10);
  });

  test("a node that never answers: gives up after its retries, in bounded time", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url, rates: { hang: 1 } });
    const { warnings, logger } = collectingLogger();
    const client = createChainClient({ url: proxy.url, timeoutMs: 200, retries: 2, retryBaseMs: 10, logger });
    try {
      await assert.rejects(
        client.getHeaders([1, 2, 3]),
        new TransientError(
          `eth_getBlockByNumber to ${proxy.url} failed after 3 attempts: no answer within 200 ms`,
        ),
      );
    } finally {
      await client.close();
      await proxy.close();
    }
    // Each attempt was ended by the client's own timeout (the message says so), one batch of
    // three per attempt, with short waits between them.
    assert.equal(proxy.counters.hang, 3);
    assertBackoffWaits(warnings, 2, 10);
  });

  test("a node that cannot be reached: connection errors are retried, then reported", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = createChainClient({ url: `http://127.0.0.1:${port}`, retries: 2, retryBaseMs: 10 });
    try {
      await assert.rejects(client.chainId(), {
        name: "TransientError",
        message: `eth_chainId to http://127.0.0.1:${port} failed after 3 attempts: connection failed (ECONNREFUSED)`,
      });
    } finally {
      await client.close();
    }
  });

  test("a request the node calls wrong is not retried", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url });
    const client = createChainClient({ url: proxy.url, retries: 5, retryBaseMs: 10 });
    try {
      await assert.rejects(client.getCode("0x1234"), (error: unknown) => {
        assert.ok(error instanceof NodeRejectedError && error instanceof UserFacingError);
        assert.equal(
          error.message,
          `${proxy.url} rejected eth_getCode: JSON-RPC error -32602: invalid string length`,
        );
        return true;
      });
      assert.equal(proxy.counters.requests, 1);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  test("a node that refuses even single blocks of logs: RequestTooLargeError naming the block", async () => {
    const proxy = await startFaultProxy({ upstream: anvil.url, maxLogRange: 0 });
    const client = createChainClient({ url: proxy.url, maxLogRange: 8 });
    try {
      await assert.rejects(client.getLogs(3, 6, [PING]), (error: unknown) => {
        assert.ok(error instanceof RequestTooLargeError);
        assert.match(
          error.message,
          new RegExp(
            `^${proxy.url} refuses eth_getLogs even for the single block 3: JSON-RPC error -32\\d+: .+$`,
          ),
        );
        return true;
      });
      // 4 blocks: refused, then halves [3,4], then [3,3] alone: three requests, no retries of a refusal.
      assert.equal(proxy.counters.requests, 3);
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

test("Retry-After in both of its forms", () => {
  const now = Date.parse("2024-06-11T12:00:00Z");
  assert.equal(parseRetryAfter("0", now), 0);
  assert.equal(parseRetryAfter("2", now), 2000);
  assert.equal(parseRetryAfter("Tue, 11 Jun 2024 12:00:05 GMT", now), 5000);
  assert.equal(parseRetryAfter("Tue, 11 Jun 2024 11:00:00 GMT", now), 0);
  assert.equal(parseRetryAfter("3600", now), 30_000);
  assert.equal(parseRetryAfter("soon", now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
});
