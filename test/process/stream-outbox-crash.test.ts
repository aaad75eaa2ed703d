/**
 * The outbox when `mintlens index` is killed (-9) at random points of a backfill and started again:
 * its ids have no gap, its events follow the chain's order, it holds one row per stored transfer and
 * trade, and it is the outbox of an uninterrupted run.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil, nextIndexedBlock } from "../support/indexing.ts";
import { indexArguments, spawnMintlens } from "../support/mintlens-process.ts";
import { snapshotStore } from "../support/snapshot.ts";

const CHAIN_ID = 31337;
/** Only for a run that hangs: generous, so that a busy machine never makes a run look hung. */
const RUN_TIMEOUT_MS = 120_000;

let anvil: Anvil;
let head: number;
const databases: TestDatabase[] = [];

before(async () => {
  ({ anvil } = await startHistoryChain({
    chainId: CHAIN_ID,
    seed: "stream-crash",
    days: 30,
    genesis: "recent",
  }));
  head = Number(await rawRpc<string>(anvil.url, "eth_blockNumber", []));
});
after(async () => {
  for (const db of databases) await db.close();
  await anvil?.stop();
  await stopTestServer();
});

/** Runs `mintlens index` to `head`; `killAt` kills it once the checkpoint passes that block. */
function runIndex(db: TestDatabase, killAt: number | undefined, delayMs: number) {
  const run = spawnMintlens(
    indexArguments({
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      databaseUrl: db.url,
      batchBlocks: 3,
      stopAt: head,
    }),
    { timeoutMs: RUN_TIMEOUT_MS },
  );
  if (killAt !== undefined) {
    void (async () => {
      while (run.running() && (await nextIndexedBlock(db.sql, CHAIN_ID)) <= killAt) await sleep(2);
      await sleep(delayMs);
      run.kill();
    })();
  }
  return run.exited;
}

test("kill -9 mid-backfill and restarts: the outbox has no gap, no repeat, and follows the chain's order", async () => {
  const db = await createTestDatabase();
  databases.push(db);
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  let kills = 0;
  let finished = false;
  for (let attempt = 0; attempt < 20 && !finished; attempt++) {
    const from = await nextIndexedBlock(db.sql, CHAIN_ID);
    const killAt = kills < 4 ? from + Math.ceil((head - from) * 0.3 * random()) : undefined;
    const { code, stderr } = await runIndex(db, killAt, Math.floor(random() * 15));
    if (code === 0) finished = true;
    else {
      assert.equal(code, null, `the indexer failed on its own: ${stderr}`);
      kills++;
    }
  }
  assert.ok(finished, "the indexer finished");
  assert.ok(kills >= 2, `it was killed mid-backfill (${kills})`);

  const rows = await db.sql<
    {
      id: string;
      block_number: string;
      log_index: number;
      seq: number;
      kind: number;
      retracts: string | null;
    }[]
  >`
    SELECT id, block_number, log_index, seq, kind, retracts FROM stream_events WHERE chain_id = ${CHAIN_ID} ORDER BY id`;
  assert.ok(rows.length > 100, "the history has events");
  assert.deepEqual(
    rows.map((r) => Number(r.id)),
    rows.map((_, i) => i + 1),
    "ids run from 1 without a gap",
  );
  assert.ok(
    rows.every((r) => r.retracts === null),
    "nothing was retracted: no block was reorganised",
  );
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1], rows[i]] as [(typeof rows)[number], (typeof rows)[number]];
    // A block's verdicts come after its other rows.
    const order = (r: typeof a) => [Number(r.block_number), r.kind === 2 ? 1 : 0, r.log_index, r.seq, r.kind];
    const [x, y] = [order(a), order(b)];
    const before = x.findIndex((v, k) => v !== y[k]);
    assert.ok(
      // Equal places: trades of several sellers in one delivery, or verdicts of several rules.
      before < 0 ? a.kind !== 0 : (x[before] as number) < (y[before] as number),
      `row ${b.id} follows row ${a.id} in the chain's order`,
    );
  }
  const [counts] = await db.sql<{ transfers: string; sales: string; verdicts: string }[]>`
    SELECT (SELECT count(*) FROM nft_transfers WHERE chain_id = ${CHAIN_ID}) AS transfers,
           (SELECT count(*) FROM sales WHERE chain_id = ${CHAIN_ID}) AS sales,
           (SELECT count(*) FROM sale_verdicts WHERE chain_id = ${CHAIN_ID}) AS verdicts`;
  assert.equal(rows.filter((r) => r.kind === 0).length, Number(counts?.transfers), "a row per transfer");
  assert.equal(rows.filter((r) => r.kind === 1).length, Number(counts?.sales), "a row per trade");
  assert.equal(rows.filter((r) => r.kind === 2).length, Number(counts?.verdicts), "a row per verdict");
  assert.ok(Number(counts?.sales) > 0, "the history has trades");
  assert.ok(Number(counts?.verdicts) > 0, "the history has verdicts on earlier trades");

  // And it is the outbox of a run in one go.
  const reference = await createTestDatabase();
  databases.push(reference);
  await indexUntil({ sql: reference.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
  assert.deepEqual(
    (await snapshotStore(db.sql)).stream_events,
    (await snapshotStore(reference.sql)).stream_events,
  );
});
