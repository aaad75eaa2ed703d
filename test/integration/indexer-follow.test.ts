import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { createPublicClient, http } from "viem";
import { runIndexers } from "../../src/cli/run-indexers.ts";
import { parseConfig } from "../../src/config/config.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { historyGenesisTimestamp } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { connectDevChain, deployArtifact } from "../../src/devchain/deploy.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startFaultProxy } from "../support/fault-proxy.ts";
import { startHistoryChain, thisHour } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";
import { snapshotStore } from "../support/snapshot.ts";

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await stopTestServer();
});

async function anvilWith(
  chainId: number,
  seed: string,
  days: number,
): Promise<{ anvil: Anvil; head: number }> {
  const { anvil } = await startHistoryChain({
    chainId,
    seed,
    days,
    genesis: historyGenesisTimestamp(days + 5, thisHour()),
  });
  cleanups.push(() => anvil.stop());
  const head = Number(await createPublicClient({ transport: http(anvil.url) }).getBlockNumber());
  return { anvil, head };
}

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  cleanups.push(() => db.close());
  return db;
}

const bytes = (hex: string) => Buffer.from(hex.slice(2), "hex");

function config(chains: Array<{ name: string; url: string; chainId: number }>, confirmations: number) {
  return parseConfig(
    {
      chain: chains.map((c) => `${c.name}=${c.url}`),
      chainId: chains.map((c) => `${c.name}=${c.chainId}`),
      nativeSymbol: ["ETH"],
      confirmations: [String(confirmations)],
      pollInterval: "100",
      batchBlocks: "20",
    },
    {},
  );
}

describe("following the head", () => {
  test("a contract deployed at the head is stored once it reaches the confirmation depth", async () => {
    const anvil = await startAnvil({ chainId: 31337 });
    cleanups.push(() => anvil.stop());
    const db = await database();
    const controller = new AbortController();
    const running = runIndexers({
      config: config([{ name: "local", url: anvil.url, chainId: 31337 }], 2),
      sql: db.sql,
      logger: silentLogger(),
      onProgress: () => {},
      signal: controller.signal,
    });
    try {
      const chain = connectDevChain(anvil.url);
      const deployed = await deployArtifact(chain, "TestERC721", ["Late", "LATE"]);
      await chain.testClient.mine({ blocks: 2 });
      // Nothing else is mined: only following the head can store it. The bound is for a test that
      // would otherwise wait forever, generous for a busy machine.
      const deadline = Date.now() + 120_000;
      let types: unknown;
      while (types === undefined && Date.now() < deadline) {
        const rows = await db.sql`SELECT types FROM contracts WHERE address = ${bytes(deployed.address)}`;
        if (rows.length > 0) types = rows[0]?.types;
        else await new Promise((r) => setTimeout(r, 50));
      }
      assert.deepEqual(types, ["TYPE_ERC721"], "the contract is stored once confirmed");
      const [chainRow] = await db.sql<{ next_block: string }[]>`SELECT next_block FROM chains`;
      assert.ok(
        Number(chainRow?.next_block) <= deployed.blockNumber + 1 + 2,
        "blocks within the confirmation depth wait",
      );
    } finally {
      controller.abort();
      await running;
    }
  });

  test("several chains index at once into one store, each as if alone", async () => {
    const a = await anvilWith(31337, "chain-a", 15);
    const b = await anvilWith(31338, "chain-b", 12);
    // Empty blocks even the heads out, so that one stop block ends both runs.
    for (const chain of [a, b]) {
      const short = Math.max(a.head, b.head) - chain.head;
      if (short > 0) await connectDevChain(chain.anvil.url).testClient.mine({ blocks: short });
      chain.head += short;
    }
    const together = await database();
    await runIndexers({
      config: config(
        [
          { name: "alpha", url: a.anvil.url, chainId: 31337 },
          { name: "beta", url: b.anvil.url, chainId: 31338 },
        ],
        0,
      ),
      sql: together.sql,
      logger: silentLogger(),
      onProgress: () => {},
      signal: AbortSignal.timeout(120_000),
      untilBlock: Math.max(a.head, b.head),
    });
    const both = await snapshotStore(together.sql);
    for (const [chainId, head, url] of [
      [31337, a.head, a.anvil.url],
      [31338, b.head, b.anvil.url],
    ] as const) {
      const alone = await database();
      await indexUntil({ sql: alone.sql, rpcUrl: url, chainId, untilBlock: head });
      const expected = await snapshotStore(alone.sql);
      for (const [table, rows] of Object.entries(expected)) {
        if (table === "chains") continue;
        const mine = (both[table] ?? []).filter(
          (r) => (r as { chain_id: string }).chain_id === String(chainId),
        );
        assert.deepEqual(mine, rows, `${table} of chain ${chainId}`);
      }
      assert.ok((expected.nft_transfers?.length ?? 0) > 100, `chain ${chainId} has transfers`);
    }
  });

  test("a statement that keeps failing for one chain stops that chain, naming the block; the other indexes on", async () => {
    const a = await anvilWith(31337, "healthy", 10);
    const b = await anvilWith(31338, "refused", 10);
    const db = await database();
    // The database refuses every transfer of chain 31338, as a constraint or a full disk would.
    await db.sql.unsafe(`
      CREATE FUNCTION refuse_transfer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'transfer refused by the database' USING ERRCODE = '23514'; END $$;
      CREATE TRIGGER refuse_transfer BEFORE INSERT ON nft_transfers FOR EACH ROW
        WHEN (NEW.chain_id = 31338) EXECUTE FUNCTION refuse_transfer();`);
    const untilBlock = Math.min(a.head, b.head);
    await assert.rejects(
      runIndexers({
        config: config(
          [
            { name: "alpha", url: a.anvil.url, chainId: 31337 },
            { name: "beta", url: b.anvil.url, chainId: 31338 },
          ],
          0,
        ),
        sql: db.sql,
        logger: silentLogger(),
        onProgress: () => {},
        signal: AbortSignal.timeout(120_000),
        untilBlock,
        retryBaseMs: 20,
      }),
      (error: Error) => {
        assert.match(error.message, /^beta: stopped at block \d+, which failed 5 times in a row/);
        assert.match(error.message, /transfer refused by the database/);
        return true;
      },
    );
    const chains = await db.sql<{ chain_id: string; next_block: string }[]>`
      SELECT chain_id, next_block FROM chains ORDER BY chain_id`;
    const next = Object.fromEntries(chains.map((c) => [c.chain_id, Number(c.next_block)]));
    assert.equal(next["31337"], untilBlock + 1, "the healthy chain indexed to the end");
    assert.ok((next["31338"] ?? 0) < untilBlock, "the refused chain stopped before the end");
    const [transfers] = await db.sql<
      { n: string }[]
    >`SELECT count(*) AS n FROM nft_transfers WHERE chain_id = 31337`;
    assert.ok(Number(transfers?.n) > 100);
  });

  test("without a trace API, or with one that cannot trace where indexing starts, deployments come from receipts and factory-made collections from their first transfer", async () => {
    const { anvil, head } = await anvilWith(31337, "no-traces", 30);
    const withTraces = await database();
    await indexUntil({ sql: withTraces.sql, rpcUrl: anvil.url, chainId: 31337, untilBlock: head });
    const traced = await snapshotStore(withTraces.sql);
    for (const node of [
      { disabledMethods: ["trace_block", "debug_traceBlockByHash"] },
      // A full node: it traces the last blocks only.
      { tracesFrom: head - 2 },
    ]) {
      const proxy = await startFaultProxy({ upstream: anvil.url, ...node });
      cleanups.push(() => proxy.close());
      const withoutTraces = await database();
      await indexUntil({ sql: withoutTraces.sql, rpcUrl: proxy.url, chainId: 31337, untilBlock: head });
      assert.ok(
        proxy.counters.methodDisabled + proxy.counters.traceRefused > 0,
        "the proxy refused the trace requests",
      );
      await checkFallback(withoutTraces, traced);
    }

    async function checkFallback(withoutTraces: TestDatabase, traced: Record<string, unknown[]>) {
      const fallback = await snapshotStore(withoutTraces.sql);
      for (const table of ["nft_transfers", "token_balances", "collection_holders", "collection_stats"]) {
        assert.deepEqual(fallback[table], traced[table], `${table} does not depend on traces`);
      }
      // Sales are the exception: without traces, the coin a transaction moved inside it is not
      // seen, only its value (a sweep's refund, how it was shared among sellers).
      const transfersOnly = (rows: unknown[] | undefined) =>
        (rows as Record<string, unknown>[]).map(
          ({ sales, sold_units, volume, min_unit_price, max_unit_price, ...rest }) => rest,
        );
      assert.deepEqual(
        transfersOnly(fallback.collection_buckets),
        transfersOnly(traced.collection_buckets),
        "the transfers, holders and supply of collection_buckets do not depend on traces",
      );
      // A sale priced from what the traces showed is priced the same as with traces everywhere;
      // one priced from the transaction's value says so.
      const key = (r: Record<string, unknown>) =>
        [r.contract, r.token_id, r.block_number, r.log_index, r.seq, r.seller].join(":");
      const tracedSales = new Map(
        (traced.sales as Record<string, unknown>[]).map((r) => [key(r), r] as const),
      );
      const fallbackSales = fallback.sales as Record<string, unknown>[];
      assert.ok(
        fallbackSales.some((r) => (r.flags as string[]).includes("tx_value")),
        "some sale was priced from its transaction's value",
      );
      for (const sale of fallbackSales) {
        if ((sale.flags as string[]).includes("tx_value")) continue;
        const same = tracedSales.get(key(sale));
        assert.ok(same, `${key(sale)} is a sale with traces too`);
        assert.equal(sale.total_native, same.total_native, key(sale));
      }

      const client = createPublicClient({ transport: http(anvil.url) });
      const rows = await withoutTraces.sql<
        {
          address: Uint8Array;
          mint_source: string;
          mint_tx: Uint8Array;
          minter: Uint8Array;
          creator: Uint8Array | null;
        }[]
      >`SELECT address, mint_source, mint_tx, minter, creator FROM contracts`;
      const sources = new Set(rows.map((r) => r.mint_source));
      assert.deepEqual([...sources].sort(), ["first_event", "receipt"], "both fallbacks were used");
      for (const row of rows) {
        const address = `0x${Buffer.from(row.address).toString("hex")}` as `0x${string}`;
        const tx = `0x${Buffer.from(row.mint_tx).toString("hex")}` as `0x${string}`;
        if (row.mint_source === "receipt") {
          const receipt = await client.getTransactionReceipt({ hash: tx });
          assert.equal(receipt.contractAddress?.toLowerCase(), address, "the receipt deployed this contract");
        } else {
          const [first] = await client.getLogs({ address, fromBlock: 0n, toBlock: BigInt(head) });
          assert.equal(
            first?.transactionHash,
            tx,
            `the mint event of ${address} is its first log's transaction`,
          );
          assert.equal(row.creator, null, "no creator is known without traces");
        }
        const sender = (await client.getTransaction({ hash: tx })).from.toLowerCase();
        assert.equal(`0x${Buffer.from(row.minter).toString("hex")}`, sender);
      }
    }
  });
});
