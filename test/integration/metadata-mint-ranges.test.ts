/**
 * Newly minted tokens reach the metadata queue through the block ranges the indexer records: tokens
 * minted on anvil and indexed are pending in ranges, workers move each range into the queue once
 * (several workers at once fetch every token once), a reorganisation between the mint and the move
 * forgets the orphaned tokens with their ranges (also while a worker is moving one), and neither a
 * move that never commits nor a worker that stops between taking a token and storing it loses one.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Abi } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import type { Address } from "../../src/core/hex.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import { connectDevChain, type DevChain } from "../../src/devchain/deploy.ts";
import { createFetcher } from "../../src/metadata/fetch.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import { runMetadataWorker } from "../../src/metadata/worker.ts";
import {
  EMPTY_OUTCOME,
  openMetadataClient,
  pullMintRange,
  storeOutcome,
  takeDueTokens,
} from "../../src/store/tables/metadata.ts";
import { deleteTokensMintedAfter, PENDING_METADATA_SQL } from "../../src/store/tables/tokens.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";

const CHAIN_ID = 31337;
let anvil: Anvil;
let chain: DevChain;
let db: TestDatabase;
let deployer: Address;
const erc721 = loadArtifact("TestERC721");

async function send(to: Address, functionName: string, args: unknown[]): Promise<void> {
  const hash = await chain.walletClient.writeContract({
    address: to,
    abi: erc721.abi as Abi,
    functionName,
    args,
    account: deployer,
    chain: null,
  });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, "success");
}

async function deployCollection(): Promise<Address> {
  const hash = await chain.walletClient.deployContract({
    abi: erc721.abi as Abi,
    bytecode: erc721.bytecode,
    args: ["Ranges", "RNG"],
    account: deployer,
    chain: null,
  });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  assert.ok(receipt.contractAddress);
  const address = receipt.contractAddress.toLowerCase() as Address;
  // Documents in the token URI itself: nothing is fetched from a server.
  await send(address, "setBaseURI", ["data:application/json,%7B%22name%22%3A%22Ranged%22%7D#"]);
  return address;
}

const head = async () => Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
const indexToHead = async () =>
  indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: await head() });

async function counts(): Promise<{ ranges: number; queued: number; pending: number; fetched: number }> {
  const [row] = await db.sql.unsafe<{ ranges: number; queued: number; pending: number; fetched: number }[]>(`
    SELECT (SELECT count(*) FROM metadata_mint_ranges)::int AS ranges,
           (SELECT count(*) FROM metadata_queue)::int AS queued,
           (SELECT count(*) FROM (${PENDING_METADATA_SQL}) p)::int AS pending,
           (SELECT count(*) FROM token_metadata)::int AS fetched`);
  assert.ok(row);
  return { ...row };
}

/** Starts a test with nothing pending nor fetched (the tokens of earlier tests stay known). */
async function forgetEverything(): Promise<void> {
  await db.sql`DELETE FROM metadata_mint_ranges`;
  await db.sql`DELETE FROM metadata_queue`;
  await db.sql`DELETE FROM token_metadata`;
}

before(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  chain = connectDevChain(anvil.url);
  const [first] = await chain.walletClient.requestAddresses();
  assert.ok(first);
  deployer = first.toLowerCase() as Address;
  db = await createTestDatabase();
});

after(async () => {
  await db?.close();
  await anvil?.stop();
  await stopTestServer();
});

test("each range is moved into the queue once, and workers running at once fetch every minted token once", async () => {
  const collection = await deployCollection();
  await indexToHead();
  // Four batches, four ranges of 10 tokens each.
  for (let batch = 0; batch < 4; batch++) {
    await send(collection, "mintBatch", [deployer, BigInt(batch * 10 + 1), 10n]);
    await indexToHead();
  }
  assert.deepEqual(await counts(), { ranges: 4, queued: 0, pending: 40, fetched: 0 });

  const client = createChainClient({ url: anvil.url });
  const stop = new AbortController();
  const seen: string[] = [];
  const pools = [openMetadataClient(db.sql, 3), openMetadataClient(db.sql, 3), openMetadataClient(db.sql, 3)];
  const workers = pools.map((sql) =>
    runMetadataWorker(
      {
        sql,
        chainId: CHAIN_ID,
        client,
        fetcher: createFetcher({ allow: parseAllowList([]) }),
        logger: silentLogger(),
        // Smaller than a range: a worker takes part of what it moved, and the others take the rest.
        concurrency: 4,
        idleMs: 20,
        onToken: (token, status) => {
          seen.push(`${token.tokenId}:${status}`);
          if (seen.length >= 40) stop.abort();
        },
      },
      stop.signal,
    ),
  );
  const timer = setTimeout(() => stop.abort(), 30_000);
  try {
    await Promise.all(workers);
  } finally {
    clearTimeout(timer);
    await client.close();
    await Promise.all(pools.map((p) => p.end()));
  }
  const expected = Array.from({ length: 40 }, (_, i) => `${i + 1}:ok`);
  assert.deepEqual([...seen].sort(), [...expected].sort(), "every token fetched once, by one worker");
  assert.deepEqual(await counts(), { ranges: 0, queued: 0, pending: 0, fetched: 40 });
  // Nothing is left to move: a further pull finds no range.
  assert.deepEqual(await pullMintRange(db.sql, CHAIN_ID), { ranges: 0, tokens: 0 });
});

test("a reorganisation between the mint and the move forgets the orphaned tokens and their ranges", async () => {
  await forgetEverything();
  const collection = await deployCollection();
  await indexToHead();
  await send(collection, "mintBatch", [deployer, 101n, 3n]);
  const kept = await head();
  const fork = await chain.publicClient.request({ method: "evm_snapshot" as never });
  await send(collection, "mintBatch", [deployer, 201n, 3n]);
  await send(collection, "mintBatch", [deployer, 301n, 3n]);
  await indexToHead();
  const before = await counts();
  assert.equal(before.pending, 9);

  // The blocks after `kept` are replaced by a longer branch that mints other tokens.
  await chain.publicClient.request({ method: "evm_revert" as never, params: [fork] as never });
  await send(collection, "mintBatch", [deployer, 401n, 2n]);
  await send(collection, "mintBatch", [deployer, 401n, 0n]);
  await send(collection, "mintBatch", [deployer, 401n, 0n]);
  await indexToHead();

  const pending = await db.sql.unsafe<{ token_id: string }[]>(
    `SELECT token_id::text FROM (${PENDING_METADATA_SQL}) p ORDER BY token_id`,
  );
  assert.deepEqual(
    pending.map((r) => r.token_id),
    ["101", "102", "103", "401", "402"],
    "the orphaned tokens are no longer pending; the new branch's are",
  );
  const ranges = await db.sql<{ first: string; last: string }[]>`
    SELECT first_block::text AS first, last_block::text AS last FROM metadata_mint_ranges ORDER BY first_block`;
  for (const r of ranges)
    assert.ok(Number(r.first) <= Number(r.last), `range ${r.first}-${r.last} is not empty`);
  assert.ok(
    ranges.every((r) => Number(r.last) <= kept || Number(r.first) > kept),
    "no range reaches across the fork point",
  );
  // Moving them all queues exactly the surviving tokens.
  while ((await pullMintRange(db.sql, CHAIN_ID)).ranges > 0);
  const queued = await db.sql<
    { token_id: string }[]
  >`SELECT token_id::text FROM metadata_queue ORDER BY token_id`;
  assert.deepEqual(
    queued.map((r) => r.token_id),
    ["101", "102", "103", "401", "402"],
  );
});

test("a rollback waits for a range being moved, then forgets what was moved", async () => {
  await forgetEverything();
  const collection = await deployCollection();
  await indexToHead();
  const ancestor = await head();
  await send(collection, "mintBatch", [deployer, 501n, 4n]);
  await indexToHead();
  assert.deepEqual((await counts()).ranges, 1);

  // A worker moves the range in a transaction that has not committed yet.
  const mover = await db.sql.reserve();
  const rolledBack = db.sql.reserve();
  try {
    await mover`BEGIN`;
    assert.deepEqual(await pullMintRange(mover, CHAIN_ID), { ranges: 1, tokens: 4 });
    const rollback = (async () => {
      const tx = await rolledBack;
      await tx`BEGIN`;
      await deleteTokensMintedAfter(tx, CHAIN_ID, ancestor);
      await tx`COMMIT`;
    })();
    // The rollback is held up by the range's lock until the move commits.
    await new Promise((r) => setTimeout(r, 300));
    const [waiting] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    assert.equal(waiting?.n, 1, "the rollback waits for the move");
    await mover`COMMIT`;
    await rollback;
  } finally {
    mover.release();
    (await rolledBack).release();
  }
  // The moved tokens were forgotten with their tokens: nothing is pending, nothing is left queued.
  assert.deepEqual(await counts(), { ranges: 0, queued: 0, pending: 0, fetched: 0 });
  const [left] = await db.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM tokens WHERE block_number > ${ancestor}`;
  assert.equal(left?.n, 0);
});

test("a move that never commits leaves its range, and a token taken but never stored comes due again", async () => {
  await forgetEverything();
  const collection = await deployCollection();
  await indexToHead();
  await send(collection, "mintBatch", [deployer, 601n, 3n]);
  await indexToHead();
  const pendingBefore = await counts();
  assert.deepEqual(pendingBefore, { ranges: 1, queued: 0, pending: 3, fetched: 0 });

  // The process dies in the middle of the move: its transaction is rolled back.
  await assert.rejects(
    db.sql.begin(async (tx) => {
      assert.deepEqual(await pullMintRange(tx, CHAIN_ID), { ranges: 1, tokens: 3 });
      throw new Error("crashed");
    }),
    /crashed/,
  );
  assert.deepEqual(await counts(), pendingBefore, "the range is still there, nothing queued");

  // Moved and taken, then the worker dies before storing anything: the lease runs out.
  assert.deepEqual(await pullMintRange(db.sql, CHAIN_ID), { ranges: 1, tokens: 3 });
  const taken = await takeDueTokens(db.sql, CHAIN_ID, 10, 1);
  assert.equal(taken.length, 3);
  assert.deepEqual(await takeDueTokens(db.sql, CHAIN_ID, 10, 1), [], "leased tokens are not due");
  assert.deepEqual(await counts(), { ranges: 0, queued: 3, pending: 3, fetched: 0 });
  await new Promise((r) => setTimeout(r, 1_100));
  const again = await takeDueTokens(db.sql, CHAIN_ID, 10, 300);
  assert.deepEqual(
    again.map((t) => t.tokenId).sort(),
    taken.map((t) => t.tokenId).sort(),
    "the same tokens are due again",
  );
  // A late outcome of the dead take is stored but leaves the row to the new take, which ends it.
  const [late] = taken;
  assert.ok(late);
  assert.equal(await storeOutcome(db.sql, CHAIN_ID, late, EMPTY_OUTCOME), true);
  assert.equal((await counts()).queued, 3);
  for (const token of again) assert.equal(await storeOutcome(db.sql, CHAIN_ID, token, EMPTY_OUTCOME), true);
  assert.deepEqual(await counts(), { ranges: 0, queued: 0, pending: 0, fetched: 3 });
});
