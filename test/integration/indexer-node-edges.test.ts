import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import { historyGenesisTimestamp } from "../../src/demo/activity.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { MAX_REPEATED_FAILURES } from "../../src/indexer/chain-indexer.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startFaultProxy } from "../support/fault-proxy.ts";
import { startHistoryChain, thisHour } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";
import { capturingLogger } from "../support/logs.ts";
import { snapshotStore } from "../support/snapshot.ts";

const CHAIN_ID = 31337;

let anvil: Anvil;
let head: number;
const databases: TestDatabase[] = [];

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

interface RpcRequest {
  method: string;
  params: unknown[];
}

/**
 * A node behind a load balancer whose replicas disagree: the first `times` answers for block
 * `block` name a parent that is not the block before it, while that block itself is unchanged.
 */
async function inconsistentNode(upstream: string, block: number, times: number) {
  let left = times;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const answer = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const parsed = (await answer.json()) as unknown;
    const requests = JSON.parse(body) as RpcRequest | RpcRequest[];
    const pairs = Array.isArray(requests)
      ? (requests as RpcRequest[]).map((r, i) => [r, (parsed as unknown[])[i]] as const)
      : [[requests, parsed] as const];
    for (const [request, response] of pairs) {
      const result = (response as { result?: { parentHash?: string } }).result;
      if (
        request.method === "eth_getBlockByNumber" &&
        Number(request.params[0]) === block &&
        result?.parentHash &&
        left > 0
      ) {
        left--;
        result.parentHash = `0x${"0d".repeat(32)}`;
      }
    }
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(parsed));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    remaining: () => left,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("nodes that answer inconsistently or keep failing", () => {
  before(async () => {
    ({ anvil } = await startHistoryChain({
      chainId: CHAIN_ID,
      seed: "phantom",
      days: 8,
      genesis: historyGenesisTimestamp(12, thisHour()),
    }));
    head = Number(await rawRpc<string>(anvil.url, "eth_blockNumber", []));
  });
  after(async () => {
    for (const db of databases) await db.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("a phantom reorganisation (no stored block differs) is logged, backed off, and undoes nothing", async () => {
    const reference = await database();
    await indexUntil({ sql: reference.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });

    const db = await database();
    const resumeAt = head - 10;
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: resumeAt - 1 });
    const node = await inconsistentNode(anvil.url, resumeAt, 3);
    const { logger, entries } = capturingLogger();
    try {
      await indexUntil({ sql: db.sql, rpcUrl: node.url, chainId: CHAIN_ID, untilBlock: head, logger });
    } finally {
      await node.close();
    }
    assert.equal(node.remaining(), 0, "the node gave its inconsistent answers");
    const messages = entries().map((entry) => entry.msg);
    assert.ok(
      messages.some((m) => m.includes("inconsistent answers")),
      `warned of the inconsistent node: ${messages.join(" | ")}`,
    );
    assert.ok(!messages.some((m) => m.startsWith("chain reorganisation")), "nothing was rolled back");
    assert.deepEqual(await snapshotStore(db.sql), await snapshotStore(reference.sql));
  });

  test("an unexplained error that never changes stops the chain with the block and the cause", async () => {
    const db = await database();
    const proxy = await startFaultProxy({
      upstream: anvil.url,
      rpcErrors: { eth_getLogs: { code: -32000, message: "internal error: bad bitmap index" } },
    });
    try {
      await assert.rejects(
        indexUntil({
          sql: db.sql,
          rpcUrl: proxy.url,
          chainId: CHAIN_ID,
          untilBlock: head,
          retryBaseMs: 5,
          tuning: { rpcRetries: 2 },
        }),
        (error: Error) => {
          assert.match(
            error.message,
            new RegExp(
              `^test: stopped at block 0, which failed ${MAX_REPEATED_FAILURES} times in a row the same way`,
            ),
          );
          assert.match(error.message, /eth_getLogs/);
          assert.match(error.message, /bad bitmap index/);
          return true;
        },
      );
      // Each round asked again, each ask with the transport's own retries (three attempts).
      assert.ok((proxy.counters.methods.eth_getLogs ?? 0) >= MAX_REPEATED_FAILURES * 3);
      const [chain] = await db.sql<{ next_block: string }[]>`SELECT next_block FROM chains`;
      assert.equal(chain?.next_block, "0", "nothing was written past the failing block");
    } finally {
      await proxy.close();
    }
  });

  test("a transaction the node never has stops the chain after a bounded number of rounds, naming it", async () => {
    const db = await database();
    // Without traces, every NFT transaction's sender is asked of the node; it answers null each time.
    const proxy = await startFaultProxy({
      upstream: anvil.url,
      tracesFrom: Number.MAX_SAFE_INTEGER,
      nullAnswers: ["eth_getTransactionByBlockHashAndIndex"],
    });
    try {
      await assert.rejects(
        indexUntil({
          sql: db.sql,
          rpcUrl: proxy.url,
          chainId: CHAIN_ID,
          untilBlock: head,
          retryBaseMs: 5,
          tuning: { rpcRetries: 2 },
        }),
        (error: Error) => {
          assert.match(
            error.message,
            new RegExp(`failed ${MAX_REPEATED_FAILURES} times in a row the same way`),
          );
          assert.match(error.message, /the node has no transaction \d+ of block 0x[0-9a-f]{64}/);
          return true;
        },
      );
      // At most: every transaction with a log, three attempts each, in every round.
      const logs = await rawRpc<{ transactionHash: string }[]>(anvil.url, "eth_getLogs", [
        { fromBlock: "0x0", toBlock: `0x${head.toString(16)}` },
      ]);
      const transactions = new Set(logs.map((l) => l.transactionHash)).size;
      const asked = proxy.counters.methods.eth_getTransactionByBlockHashAndIndex ?? 0;
      assert.ok(asked > 0, "the senders were asked of the node");
      assert.ok(
        asked <= MAX_REPEATED_FAILURES * 3 * transactions,
        `asked a bounded number of times (${asked}, ${transactions} transactions)`,
      );
    } finally {
      await proxy.close();
    }
  });
});
