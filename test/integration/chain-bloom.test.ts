/**
 * Empty log answers checked against the block's logs bloom. The bloom code is held to two recorded
 * mainnet blocks (test/fixtures/realdata/ethereum-etl, MIT, see SOURCE.md there): their headers' blooms
 * must be exactly what their logs make. Lagging replicas are played by a proxy in front of anvil.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { keccak256, pad, toHex } from "viem";
import { bloomBits, bloomMayHold } from "../../src/chain/bloom.ts";
import { createChainClient } from "../../src/chain/client.ts";
import { MalformedAnswerError, RepeatedNodeError } from "../../src/chain/errors.ts";
import { parseHeader } from "../../src/chain/headers.ts";
import { TransientError } from "../../src/core/errors.ts";
import type { Hex } from "../../src/core/hex.ts";
import type { ChainLog } from "../../src/core/types.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { readBlocks } from "../../src/indexer/fetch-batch.ts";
import { buildCreations, emitPings, FixtureChain, rawRpc } from "../support/chain-fixture.ts";
import { type FaultProxyOptions, startFaultProxy } from "../support/fault-proxy.ts";

const BLOCKS = new URL("../fixtures/realdata/ethereum-etl/blocks_17173049_17173050/", import.meta.url);

function readLines<T>(name: string): T[] {
  return readFileSync(new URL(name, BLOCKS), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** A bloom with the given bits set, laid out as the yellow paper has it (bit 0: lowest bit of the last byte). */
function bloomOf(bits: Iterable<number>): Hex {
  const bytes = new Uint8Array(256);
  for (const bit of bits)
    bytes[255 - Math.floor(bit / 8)] = (bytes[255 - Math.floor(bit / 8)] ?? 0) | (1 << (bit % 8));
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

describe("logs bloom on recorded mainnet blocks", () => {
  const blocks = readLines<{ number: number; logs_bloom: Hex }>("expected_blocks.json");
  const logs = readLines<{ block_number: number; address: Hex; topics: Hex[] }>("expected_logs.json");

  for (const block of blocks) {
    test(`block ${block.number}: its logs' addresses and topics make up its header's bloom exactly`, () => {
      const values = logs
        .filter((log) => log.block_number === block.number)
        .flatMap((log) => [log.address, ...log.topics]);
      assert.ok(values.length > 900, `${values.length} values`);
      assert.equal(bloomOf(values.flatMap((value) => [...bloomBits(value)])), block.logs_bloom);
      for (const value of values) assert.ok(bloomMayHold(block.logs_bloom, bloomBits(value)), value);
    });
  }

  test("a bloom holds what was put in it, and not what was not", () => {
    const [transfer, ...others] = [...new Set(logs.flatMap((log) => log.topics))];
    const only = bloomOf(bloomBits(transfer as Hex));
    assert.ok(bloomMayHold(only, bloomBits(transfer as Hex)));
    assert.ok(others.length > 100);
    for (const other of others) assert.ok(!bloomMayHold(only, bloomBits(other)), other);
    const empty = bloomOf([]);
    assert.ok(!bloomMayHold(empty, bloomBits(transfer as Hex)));
    // Upper-case digits read the same.
    assert.ok(bloomMayHold(`0x${only.slice(2).toUpperCase()}`, bloomBits(transfer as Hex)));
  });

  test("a header's bloom is read and checked", () => {
    const header = {
      number: "0x1",
      hash: `0x${"11".repeat(32)}`,
      parentHash: `0x${"22".repeat(32)}`,
      timestamp: "0x5",
      logsBloom: blocks[0]?.logs_bloom,
    };
    assert.equal(parseHeader(header, 1).logsBloom, blocks[0]?.logs_bloom);
    for (const logsBloom of [undefined, null, "0x", `${blocks[0]?.logs_bloom}00`, `0x${"g".repeat(512)}`]) {
      assert.throws(() => parseHeader({ ...header, logsBloom }, 1), MalformedAnswerError, String(logsBloom));
    }
  });
});

const PING = keccak256(toHex("Ping(uint256,address,uint256)"));
const PONG = keccak256(toHex("Pong(uint256)"));

describe("empty log answers from a lagging replica", () => {
  let anvil: Anvil;
  let last: number;
  /** Blocks with five Ping logs each (the 4th with topic1 = 3); two blocks with a Pong log follow. */
  let pingBlocks: number[];
  let direct: ChainLog[];

  before(async () => {
    anvil = await startAnvil();
    const chain = await FixtureChain.create(anvil.url);
    const scenario = await buildCreations(chain);
    const first = (await chain.blockNumber()) + 1;
    await emitPings(chain, scenario.emitter, 3, 5);
    pingBlocks = [first, first + 1, first + 2];
    for (const v of [1n, 2n]) await chain.invoke(scenario.emitter, "Emitter", "pong", [v]);
    last = await chain.blockNumber();
    const client = createChainClient({ url: anvil.url });
    try {
      direct = (await readBlocks(client, "events", 0, last, [PING, PONG])).logs;
    } finally {
      await client.close();
    }
    assert.equal(direct.length, 17);
  });

  after(async () => {
    await anvil?.stop();
  });

  async function readThrough(faults: Omit<FaultProxyOptions, "upstream">, topic0: Hex[] = [PING, PONG]) {
    const proxy = await startFaultProxy({ upstream: anvil.url, ...faults });
    const client = createChainClient({ url: proxy.url, retries: 3, retryBaseMs: 1 });
    try {
      return { logs: (await readBlocks(client, "events", 0, last, topic0)).logs, counters: proxy.counters };
    } finally {
      await client.close();
      await proxy.close();
    }
  }

  test("logs a replica left out are asked for again by block hash, and found", async () => {
    for (const lagLogsFrom of [pingBlocks[1] as number, 0]) {
      const { logs, counters } = await readThrough({ lagLogsFrom });
      assert.deepEqual(logs, direct);
      assert.equal(counters.logsDropped, direct.filter((log) => log.blockNumber >= lagLogsFrom).length);
      // The range once, then each block whose logs were left out, by its hash.
      const leftOut = new Set(
        direct.filter((log) => log.blockNumber >= lagLogsFrom).map((l) => l.blockNumber),
      );
      assert.equal(counters.methods.eth_getLogs, 1 + leftOut.size);
    }
  });

  test("a replica that does not have the block yet errors, and is asked again", async () => {
    const { logs, counters } = await readThrough({ lagLogsFrom: 0, unknownPinnedLogs: 3 });
    assert.deepEqual(logs, direct);
    assert.equal(counters.pinnedRefused, 3);
  });

  test("a bloom's false positive is asked about once, and the empty answer trusted", async () => {
    // Ping's second topic is its counter: the bloom of a block with the 4th Ping holds the word 3, though
    // no log there has it first.
    const three = pad(toHex(3));
    const headers = await Promise.all(
      pingBlocks.map((n) => rawRpc<{ logsBloom: Hex }>(anvil.url, "eth_getBlockByNumber", [toHex(n), false])),
    );
    for (const header of headers) assert.ok(bloomMayHold(header.logsBloom, bloomBits(three)));
    const { logs, counters } = await readThrough({}, [three, PONG]);
    assert.deepEqual(
      logs,
      direct.filter((log) => log.topics[0] === PONG),
    );
    // The range, then each block with Pings once: no block without logs has a bloom to suspect.
    assert.equal(counters.methods.eth_getLogs, 1 + pingBlocks.length);
  });

  test("logs asked for by hash must be of that block", async () => {
    const header = await rawRpc<{ hash: Hex }>(anvil.url, "eth_getBlockByNumber", [
      toHex(pingBlocks[0] as number),
      false,
    ]);
    const proxy = await startFaultProxy({ upstream: anvil.url, otherFork: ["eth_getLogs"] });
    const client = createChainClient({ url: proxy.url, retries: 1, retryBaseMs: 1 });
    try {
      await assert.rejects(
        client.getBlockLogs(header.hash, pingBlocks[0] as number, [PING]),
        (error: unknown) => {
          assert.ok(error instanceof RepeatedNodeError);
          assert.match(
            error.cause.message,
            /^asked for the logs of block \d+ 0x[0-9a-f]{64}, got logs of 0x/,
          );
          return true;
        },
      );
      await assert.rejects(
        client.getBlockLogs(`0x${"ab".repeat(32)}`, pingBlocks[0] as number, [PING]),
        (error: unknown) => {
          assert.ok(error instanceof TransientError && !(error instanceof RepeatedNodeError));
          assert.match(error.message, /unknown block$/);
          return true;
        },
      );
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});
