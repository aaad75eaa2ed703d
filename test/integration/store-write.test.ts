import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address, Hex } from "../../src/core/hex.ts";
import { ZERO_ADDRESS } from "../../src/core/hex.ts";
import type { BlockHeader, NftTransfer, ValueFlow } from "../../src/core/types.ts";
import type { FetchedBatch } from "../../src/indexer/batch.ts";
import { type BatchPipeline, createBatchPipeline, type PreparedBatch } from "../../src/indexer/commit.ts";
import { createProjections } from "../../src/indexer/projections.ts";
import { ContractRegistry } from "../../src/indexer/registry.ts";
import { rollbackAfter } from "../../src/indexer/rollback.ts";
import { openWriteSession, type WriteSession } from "../../src/store/pg/session.ts";
import { ensureChain, nextBlock } from "../../src/store/tables/chain-state.ts";
import { storedContracts } from "../../src/store/tables/contracts.ts";
import { holderUnits } from "../../src/store/tables/ownership.ts";
import { nftTransfersAfter } from "../../src/store/tables/transfers.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const CHAIN_ID = 5151;
const COLLECTION = `0x${"c0".repeat(20)}` as Address;
const [ALICE, BOB, CAROL] = ["a1", "b0", "ca"].map((b) => `0x${b.repeat(20)}` as Address) as [
  Address,
  Address,
  Address,
];
const MAX_UINT256 = 2n ** 256n - 1n;
/** No pool and no pegged token: nothing is converted. */
const noRates = { nativePegged: [], pools: [], usdTokens: [] };

function pipelineFor(sql: TestDatabase["sql"], chainId: number, saleMemoryLimit?: number): BatchPipeline {
  return createBatchPipeline({
    sql,
    chainId,
    projections: createProjections({
      rates: noRates,
      ...(saleMemoryLimit !== undefined ? { saleMemoryLimit } : {}),
    }),
  });
}

const blockHash = (n: number): Hex => `0x${n.toString(16).padStart(64, "0")}` as Hex;
const header = (n: number): BlockHeader => ({
  number: n,
  hash: blockHash(n),
  parentHash: blockHash(n - 1),
  timestamp: 1_700_000_000 + n * 12,
  logsBloom: `0x${"00".repeat(256)}`,
});

function transfer(block: number, logIndex: number, tokenId: bigint, from: Address, to: Address): NftTransfer {
  return {
    contract: COLLECTION,
    tokenId,
    from,
    to,
    amount: 1n,
    blockNumber: block,
    logIndex,
    seq: 0,
    txHash: `0x${(block * 1000 + logIndex).toString(16).padStart(64, "0")}` as Hex,
    txIndex: logIndex,
    standard: "erc721",
  };
}

function batchOf(from: number, to: number, nft: NftTransfer[]): FetchedBatch {
  return {
    from,
    to,
    requestedTo: to,
    headers: Array.from({ length: to - from + 1 }, (_, i) => header(from + i)),
    nft,
    fungible: [],
    creations: [],
    creationSource: "trace",
    contracts: [],
    firstSeen: new Map(),
    logCount: nft.length,
    skipped: [],
    // Each transfer sent by its sender, no value, traced: nothing is paid, so nothing is sold.
    calls: new Map(nft.map((t) => [t.txHash, { txHash: t.txHash, from: t.from, to: COLLECTION, value: 0n }])),
    native: [],
    markets: [],
    punkBids: [],
    punkOffers: [],
    poolStates: [],
    metadataUpdates: [],
  };
}

describe("writing batches", () => {
  let db: TestDatabase;
  let session: WriteSession;
  before(async () => {
    db = await createTestDatabase();
    session = openWriteSession(db.sql);
  });
  after(async () => {
    await session?.end();
    await db?.close();
    await stopTestServer();
  });

  test("a pipelined transaction commits all its statements", async () => {
    await db.sql`CREATE TABLE pipeline_ok (n integer PRIMARY KEY)`;
    await session.pipelined((tx) => [
      tx`INSERT INTO pipeline_ok VALUES (1)`,
      tx`INSERT INTO pipeline_ok VALUES (2)`,
      tx`UPDATE pipeline_ok SET n = n * 10`,
    ]);
    const rows = await db.sql<{ n: number }[]>`SELECT n FROM pipeline_ok ORDER BY n`;
    assert.deepEqual(
      rows.map((r) => r.n),
      [10, 20],
    );
  });

  test("a failing statement rolls the whole transaction back and is the error reported", async () => {
    await db.sql`CREATE TABLE pipeline_fail (n integer PRIMARY KEY)`;
    await assert.rejects(
      session.pipelined((tx) => [
        tx`INSERT INTO pipeline_fail VALUES (1)`,
        tx`INSERT INTO pipeline_fail VALUES (1)`,
        tx`INSERT INTO pipeline_fail VALUES (3)`,
      ]),
      (error: Error & { code?: string }) => error.code === "23505",
    );
    const [count] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM pipeline_fail`;
    assert.equal(count?.n, "0");
    // The session's connection is back outside any transaction: the next one commits.
    for (let i = 0; i < 12; i++) {
      await session.pipelined((tx) => [tx`INSERT INTO pipeline_fail VALUES (${100 + i})`]);
    }
    const [after] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM pipeline_fail`;
    assert.equal(after?.n, "12");
  });

  test("a batch prepared while the one before it is still being written starts from that one's units", async () => {
    await ensureChain(db.sql, { chainId: CHAIN_ID, name: "write-test", nativeSymbol: "ETH", startBlock: 1 });
    const registry = new ContractRegistry(
      (addresses) => storedContracts(db.sql, CHAIN_ID, addresses),
      async () => {
        throw new Error("no contract is inspected here");
      },
    );
    const first = batchOf(1, 2, [
      transfer(1, 0, 1n, ZERO_ADDRESS, ALICE),
      transfer(1, 1, 2n, ZERO_ADDRESS, ALICE),
      transfer(2, 0, MAX_UINT256, ZERO_ADDRESS, BOB),
    ]);
    const second = batchOf(3, 4, [transfer(3, 0, 1n, ALICE, CAROL), transfer(4, 0, MAX_UINT256, BOB, ALICE)]);

    const pipeline = pipelineFor(db.sql, CHAIN_ID);
    const preparedFirst = await pipeline.prepare(first, await pipeline.resume(1));
    // Hold the first write open (its checkpoint update waits for this row lock), so that the
    // second batch is surely prepared while the store does not show the first one yet.
    const blocker = await db.sql.reserve();
    await blocker`BEGIN`;
    await blocker`SELECT 1 FROM chains WHERE chain_id = ${CHAIN_ID} FOR UPDATE`;
    const writing = pipeline.write(session, preparedFirst, registry);
    // Only a bound for a write that never reaches the lock; generous for a busy machine.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const waiting = await db.sql`
        SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`;
      if (waiting.length > 0) break;
      assert.ok(Date.now() < deadline, "the first write reached the locked checkpoint row");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const preparedSecond = await pipeline.prepare(second, preparedFirst.carries);
    await blocker`COMMIT`;
    blocker.release();
    await writing;
    await pipeline.write(session, preparedSecond, registry);

    assert.equal(await nextBlock(db.sql, CHAIN_ID), 5);
    const units = await holderUnits(db.sql, CHAIN_ID, [
      { contract: COLLECTION, holder: ALICE },
      { contract: COLLECTION, holder: BOB },
      { contract: COLLECTION, holder: CAROL },
    ]);
    assert.deepEqual(Object.fromEntries(units), { [COLLECTION + ALICE]: 2n, [COLLECTION + CAROL]: 1n });
    const [stats] = await db.sql<{ minted: string; holders: string; transfers: string }[]>`
      SELECT minted, holders, transfers FROM collection_stats WHERE chain_id = ${CHAIN_ID}`;
    assert.deepEqual(stats, { minted: "3", holders: "2", transfers: "5" });

    const { transfers, times } = await nftTransfersAfter(db.sql, CHAIN_ID, 0);
    assert.deepEqual(transfers, [...first.nft, ...second.nft]);
    assert.equal(times.get(4), header(4).timestamp);
  });
});

/** A sale of `tokenId` from `seller` to `buyer`, paid in the native coin: a transfer and its payment. */
function sale(block: number, tokenId: bigint, seller: Address, buyer: Address, price: bigint) {
  const t = transfer(block, Number(tokenId), tokenId, seller, buyer);
  return {
    t,
    paid: { txHash: t.txHash, from: buyer, to: seller, value: price, blockNumber: block, txIndex: t.txIndex },
  };
}

function salesBatch(block: number, sales: ReturnType<typeof sale>[]): FetchedBatch {
  const batch = batchOf(
    block,
    block,
    sales.map((s) => s.t),
  );
  return {
    ...batch,
    native: sales.map((s) => s.paid),
    calls: new Map(
      sales.map((s) => [s.t.txHash, { txHash: s.t.txHash, from: s.paid.from, to: COLLECTION, value: 0n }]),
    ),
  };
}

describe("the memory of last sales", () => {
  let db: TestDatabase;
  let session: WriteSession;
  const chainId = 5152;
  before(async () => {
    db = await createTestDatabase();
    session = openWriteSession(db.sql);
    await ensureChain(db.sql, { chainId, name: "memory-test", nativeSymbol: "ETH", startBlock: 1 });
  });
  after(async () => {
    await session?.end();
    await db?.close();
    await stopTestServer();
  });

  const registry = () =>
    new ContractRegistry(
      (addresses) => storedContracts(db.sql, chainId, addresses),
      async () => {
        throw new Error("no contract is inspected here");
      },
    );
  const washFlags = async () =>
    (
      await db.sql<{ token_id: string; block_number: string; flags: string[] }[]>`
        SELECT token_id, block_number, flags FROM sales WHERE chain_id = ${chainId} ORDER BY block_number, token_id`
    ).map((r) => `${r.block_number}:${r.token_id}:${r.flags.join("+")}`);

  test("tells wash pairs across batches, after it fills up, and after a restart that finds sales stored", async () => {
    const reg = registry();
    // Room for two tokens: the third batch overflows it, and it starts again from that batch.
    const pipeline = pipelineFor(db.sql, chainId, 2);
    let carries = await pipeline.resume(1);
    const run = async (batch: FetchedBatch) => {
      const prepared: PreparedBatch = await pipeline.prepare(batch, carries);
      await pipeline.write(session, prepared, reg);
      carries = prepared.carries;
    };
    await run(salesBatch(1, [sale(1, 1n, ALICE, BOB, 10n), sale(1, 2n, ALICE, BOB, 10n)]));
    // Token 1 comes back from the buyer of its last sale: a wash, known from memory.
    await run(salesBatch(2, [sale(2, 1n, BOB, ALICE, 11n)]));
    await run(salesBatch(3, [sale(3, 3n, ALICE, CAROL, 12n), sale(3, 4n, ALICE, CAROL, 12n)]));
    // Token 2's last sale was forgotten when the memory filled up: the store tells it.
    await run(salesBatch(4, [sale(4, 2n, BOB, ALICE, 13n), sale(4, 3n, CAROL, BOB, 14n)]));
    // A restart: the store holds sales, so a new memory asks it.
    carries = await createBatchPipeline({
      sql: db.sql,
      chainId,
      projections: createProjections({ rates: noRates }),
    }).resume(5);
    await run(salesBatch(5, [sale(5, 4n, CAROL, ALICE, 15n), sale(5, 1n, ALICE, BOB, 16n)]));
    // Every leg of a cycle is flagged: the one closing it as it is seen, the earlier ones after it.
    assert.deepEqual(await washFlags(), [
      "1:1:wash_cycle",
      "1:2:wash_cycle",
      "2:1:wash_cycle",
      "3:3:",
      "3:4:wash_cycle",
      "4:2:wash_cycle",
      "4:3:",
      "5:1:wash_cycle",
      "5:4:wash_cycle",
    ]);
  });
});

describe("the memory of value flows", () => {
  let db: TestDatabase;
  let session: WriteSession;
  const DAN = `0x${"da".repeat(20)}` as Address;
  before(async () => {
    db = await createTestDatabase();
    session = openWriteSession(db.sql);
  });
  after(async () => {
    await session?.end();
    await db?.close();
    await stopTestServer();
  });

  const sent = (block: number, from: Address, to: Address): ValueFlow => ({
    from,
    to,
    token: null,
    value: 10n ** 18n,
    blockNumber: block,
    txIndex: 0,
    time: header(block).timestamp,
  });
  // DAN funds Bob and Alice, Alice funds Carol; then Alice sells to Bob (a common funder), Bob to
  // Carol (no tie), Alice to Carol (the seller funded the buyer). Bob hands his proceeds back to
  // Carol (returned, given later); token 12 goes on from Carol to Dan and back to Bob (a cycle
  // closed by its third leg, Dan having funded Bob, which flags its two earlier legs later).
  const flows = [sent(1, DAN, BOB), sent(2, DAN, ALICE), sent(3, ALICE, CAROL), sent(7, BOB, CAROL)];
  const sales = new Map([
    [4, [sale(4, 10n, ALICE, BOB, 10n)]],
    [5, [sale(5, 12n, BOB, CAROL, 20n)]],
    [6, [sale(6, 11n, ALICE, CAROL, 30n)]],
    [8, [sale(8, 12n, CAROL, DAN, 40n)]],
    [9, [sale(9, 12n, DAN, BOB, 50n)]],
  ]);
  const LAST = 10;
  const IN_ONE_GO = [
    "4:10:wash_funder",
    "5:12:wash_returned+wash_cycle",
    "6:11:wash_funder",
    "8:12:wash_cycle",
    "9:12:wash_cycle+wash_funder",
  ];
  const batchAt = (from: number, to: number): FetchedBatch => {
    const batches = Array.from({ length: to - from + 1 }, (_, i) =>
      salesBatch(from + i, sales.get(from + i) ?? []),
    );
    return {
      ...batchOf(
        from,
        to,
        batches.flatMap((b) => b.nft),
      ),
      native: batches.flatMap((b) => b.native ?? []),
      calls: new Map(batches.flatMap((b) => [...b.calls])),
      flows: flows.filter((f) => f.blockNumber >= from && f.blockNumber <= to),
    };
  };
  // The node: the same flows the batches carry, read back by block range.
  const readFlows = async (from: number, to: number) => ({
    flows: flows.filter((f) => f.blockNumber >= from && f.blockNumber <= to),
    firstBlockTime: header(from).timestamp,
    lastBlockTime: header(to).timestamp,
  });
  const registryOf = (chainId: number) =>
    new ContractRegistry(
      (addresses) => storedContracts(db.sql, chainId, addresses),
      async () => {
        throw new Error("no contract is inspected here");
      },
    );
  const pipelineOf = (chainId: number, withReader = true) =>
    createBatchPipeline({
      sql: db.sql,
      chainId,
      projections: createProjections({ rates: noRates, ...(withReader ? { readFlows } : {}) }),
    });

  /** What a chain's sales, verdicts and rollups hold, without its id: equal for equal histories. */
  async function chainState(chainId: number): Promise<Record<string, unknown>> {
    const rows = (query: string) =>
      db.sql.unsafe(query, [chainId]).then((r) =>
        r.map((row) => {
          const { chain_id: _, ...rest } = row;
          return JSON.stringify(rest, (_k, v) =>
            v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v,
          );
        }),
      );
    return {
      sales: await rows(
        "SELECT block_number, log_index, seq, flags, total_native FROM sales WHERE chain_id = $1 ORDER BY 1, 2, 3",
      ),
      verdicts: await rows(
        "SELECT * FROM sale_verdicts WHERE chain_id = $1 ORDER BY block_number, log_index, rule",
      ),
      buckets: await rows(
        "SELECT * FROM collection_buckets WHERE chain_id = $1 ORDER BY contract, bucket_start",
      ),
      days: await rows("SELECT * FROM collection_days WHERE chain_id = $1 ORDER BY contract, day"),
      windows: await rows(
        "SELECT * FROM collection_windows WHERE chain_id = $1 ORDER BY window_seconds, contract",
      ),
      end: await rows("SELECT window_end FROM chains WHERE chain_id = $1"),
    };
  }

  /**
   * Indexes blocks 1..last on a chain of its own, restarting with a new pipeline before each of
   * `restarts`: the sales' flags.
   */
  async function index(
    chainId: number,
    restarts: number[],
    withReader = true,
    last = LAST,
  ): Promise<string[]> {
    await ensureChain(db.sql, { chainId, name: `flows-${chainId}`, nativeSymbol: "ETH", startBlock: 1 });
    const reg = registryOf(chainId);
    const make = () => pipelineOf(chainId, withReader);
    let current = make();
    let carries = await current.resume(1);
    let from = 1;
    for (const end of [...restarts.map((r) => r - 1), last]) {
      if (end >= from) {
        const prepared = await current.prepare(batchAt(from, end), carries);
        await current.write(session, prepared, reg);
        carries = prepared.carries;
      }
      from = end + 1;
      current = make();
      carries = await current.resume(from);
    }
    const rows = await db.sql<{ block_number: string; token_id: string; flags: string[] }[]>`
      SELECT block_number, token_id, flags FROM sales WHERE chain_id = ${chainId} ORDER BY block_number, token_id`;
    return rows.map((r) => `${r.block_number}:${r.token_id}:${r.flags.join("+")}`);
  }

  test("a restart reads the flows and the deals back: flags, verdicts and rollups equal those of a run in one go", async () => {
    assert.deepEqual(await index(5161, []), IN_ONE_GO);
    const inOneGo = await chainState(5161);
    assert.deepEqual(
      (inOneGo.verdicts as string[]).length,
      3,
      "two legs of the cycle and the proceeds handed back",
    );
    assert.deepEqual(await index(5162, [4]), IN_ONE_GO, "restarted before the first sale");
    assert.deepEqual(await index(5163, [2, 5, 6, 7, 8, 9, 10]), IN_ONE_GO, "restarted between every step");
    assert.deepEqual(await chainState(5163), inOneGo);
    assert.deepEqual(await index(5165, [6, 9]), IN_ONE_GO);
    assert.deepEqual(await chainState(5165), inOneGo);
    // Without a reader a restart starts with empty memories, and the funding before it is not seen.
    assert.deepEqual(await index(5164, [4], false), [
      "4:10:",
      "5:12:wash_returned+wash_cycle",
      "6:11:",
      "8:12:wash_cycle",
      "9:12:wash_cycle",
    ]);
  });

  test("a rollback takes back the verdicts given after its ancestor, and the rollups they moved", async () => {
    await index(5169, []);
    const inOneGo = await chainState(5169);
    for (const [k, ancestor] of [6, 7, 8, 9].entries()) {
      const [whole, upTo] = [5170 + 2 * k, 5171 + 2 * k];
      await index(whole, []);
      await index(upTo, [], true, ancestor);
      const projections = pipelineOf(whole).projections;
      await rollbackAfter(session, whole, ancestor, projections);
      assert.deepEqual(await chainState(whole), await chainState(upTo), `rolled back to ${ancestor}`);
      // Then on again, as after a reorganisation: the same as a run in one go.
      const pipeline = pipelineOf(whole);
      const carries = await pipeline.resume(ancestor + 1);
      const prepared = await pipeline.prepare(batchAt(ancestor + 1, LAST), carries);
      await pipeline.write(session, prepared, registryOf(whole));
      assert.deepEqual(await chainState(whole), inOneGo, `indexed on from ${ancestor}`);
    }
  });
});
