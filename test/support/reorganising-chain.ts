/**
 * A chain that reorganises under a running indexer, and the store's truth a stream consumer must end
 * with: for the tests of the outbox, its transports and webhooks through reorganisations.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { generateHistory } from "../../src/demo/history.ts";
import { type Sql, toHex } from "../../src/store/pg/database.ts";
import { rawRpc } from "./chain-fixture.ts";
import { nextIndexedBlock } from "./indexing.ts";

/** Waits, bounded in time, until `done` holds. */
export async function until(
  what: string,
  done: () => Promise<boolean> | boolean,
  ms = 30_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

export interface ReorganisingRun {
  sql: Sql;
  chainId: number;
  rpcUrl: string;
  /** Seeds are `${seed}-trunk`, `${seed}-orphaned-${round}` and `${seed}-canonical-${round}`. */
  seed: string;
  trunkDays: number;
  /** How long the indexer may take to reach the node's head. */
  catchUpMs?: number;
  /** Called once the orphaned blocks of a round are indexed, before they are reverted. */
  onOrphaned?: () => Promise<void>;
}

/**
 * Generates a trunk of activity, then twice: a day of blocks indexed and then reverted, replaced by
 * two days of other activity that outgrow them. Returns how many blocks each reorganisation took
 * away.
 */
export async function runReorganisingHistory(run: ReorganisingRun): Promise<number[]> {
  const { sql, chainId, rpcUrl, seed } = run;
  const head = async () => Number(await rawRpc<string>(rpcUrl, "eth_blockNumber", []));
  const caughtUp = async () => {
    const target = await head();
    await until(
      `the indexer reaches block ${target}`,
      async () => (await nextIndexedBlock(sql, chainId)) > target,
      run.catchUpMs,
    );
    return target;
  };
  await until("the indexer registers the chain", async () => (await nextIndexedBlock(sql, chainId)) > 0);
  await generateHistory({ rpcUrl, seed: `${seed}-trunk`, days: run.trunkDays });
  const depths: number[] = [];
  for (const round of [1, 2]) {
    const snapshot = await rawRpc<string>(rpcUrl, "evm_snapshot", []);
    const forkPoint = await head();
    await generateHistory({ rpcUrl, seed: `${seed}-orphaned-${round}`, days: 1 });
    const orphanedHead = await caughtUp();
    await run.onOrphaned?.();
    assert.equal(await rawRpc<boolean>(rpcUrl, "evm_revert", [snapshot]), true);
    await generateHistory({ rpcUrl, seed: `${seed}-canonical-${round}`, days: 2 });
    assert.ok((await head()) > orphanedHead, "the new branch outgrows the orphaned one");
    await caughtUp();
    depths.push(orphanedHead - forkPoint);
  }
  return depths;
}

/**
 * The store's holdings (`contract:tokenId:holder` → units) and trades (as StreamConsumer keys and
 * summarises them: kind, price and flags).
 */
export async function storeTruth(
  sql: Sql,
  chainId: number,
  minimumHoldings = 50,
): Promise<{ holdings: Map<string, bigint>; trades: Map<string, string> }> {
  const balances = await sql<
    { contract: Uint8Array; token_id: string; holder: Uint8Array; amount: string }[]
  >`
    SELECT contract, token_id::text, holder, amount::text FROM token_balances
    WHERE chain_id = ${chainId} AND amount <> 0`;
  const holdings = new Map(
    balances.map((b) => [`${toHex(b.contract)}:${b.token_id}:${toHex(b.holder)}`, BigInt(b.amount)]),
  );
  assert.ok(holdings.size > minimumHoldings, `the chain has holdings (${holdings.size})`);
  const sales = await sql<
    {
      contract: Uint8Array;
      token_id: string;
      block_number: string;
      log_index: number;
      seq: number;
      seller: Uint8Array;
      total_native: string;
      kind: string;
      flags: string[];
    }[]
  >`SELECT contract, token_id::text, block_number::text, log_index, seq, seller, total_native::text, kind, flags
    FROM sales WHERE chain_id = ${chainId}`;
  assert.ok(
    sales.some((s) => s.kind === "sale"),
    "the chain has sales",
  );
  const trades = new Map(
    sales.map((s) => [
      `${toHex(s.contract)}:${s.token_id}:${s.block_number}:${s.log_index}:${s.seq}:${toHex(s.seller)}`,
      `${s.kind}:${s.total_native}:${s.flags.join(",")}`,
    ]),
  );
  return { holdings, trades };
}
