import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { generateHistory, historyGenesisTimestamp } from "../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../src/devchain/anvil.ts";
import { MAX_REPEATED_FAILURES } from "../src/indexer/chain-indexer.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "./support/database.ts";
import { startFaultProxy } from "./support/fault-proxy.ts";
import { indexUntil } from "./support/indexing.ts";

const CHAIN_ID = 31337;

let anvil: Anvil;
let head: number;
const databases: TestDatabase[] = [];

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

describe("a node that keeps failing the same way", () => {
  before(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID, timestamp: historyGenesisTimestamp(8) });
    await generateHistory({ rpcUrl: anvil.url, seed: "stubborn", days: 4 });
    const answer = await fetch(anvil.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
    });
    head = Number(((await answer.json()) as { result: string }).result);
  });
  after(async () => {
    for (const db of databases) await db.close();
    await anvil?.stop();
    await stopTestServer();
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
});
