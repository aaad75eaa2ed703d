import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData, type Hex } from "viem";
import { TransientError } from "../../src/core/errors.ts";
import { type Address, ZERO_ADDRESS } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import {
  connectDevChain,
  type DevChain,
  deployArtifact,
  devAddress,
  sendContractTx,
} from "../../src/devchain/deploy.ts";
import type { Progress } from "../../src/indexer/chain-indexer.ts";
import { TRANSFER_TOPICS } from "../../src/indexer/decode/topics.ts";
import type { InspectFn } from "../../src/indexer/registry.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";
import { snapshotStore } from "../support/snapshot.ts";

/*
 * Contracts anyone can deploy on mainnet, emitting what no honest token would. EventForge emits
 * any transfer event it is asked to, with no bookkeeping behind it: each scenario is a few
 * transactions that once halted the indexer, made it expand millions of rows, or lost logs.
 */

const CHAIN_ID = 31337;
const MAX_UINT256 = 2n ** 256n - 1n;
const alice = devAddress(1);
const bob = devAddress(2);
const carol = devAddress(3);
const dave = devAddress(4);

let anvil: Anvil;
let chain: DevChain;
const databases: TestDatabase[] = [];

before(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  chain = connectDevChain(anvil.url);
});
after(async () => {
  for (const db of databases) await db.close();
  await anvil?.stop();
  await stopTestServer();
});

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

const bytes = (hex: string) => Buffer.from(hex.slice(2), "hex");

async function deployForge(): Promise<Address> {
  return (await deployArtifact(chain, "EventForge")).address;
}

function forgeCall(functionName: string, args: unknown[]): Hex {
  return encodeFunctionData({ abi: loadArtifact("EventForge").abi, functionName, args });
}

async function forge(address: Address, functionName: string, args: unknown[]): Promise<number> {
  const receipt = await sendContractTx(chain, {
    address,
    abi: loadArtifact("EventForge").abi,
    functionName,
    args,
    from: devAddress(0),
  });
  return Number(receipt.blockNumber);
}

async function head(): Promise<number> {
  // Not viem's cached number: the blocks mined since the last call count.
  return Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
}

/** Counts the inspections of each contract made through the wrapped inspector. */
function countingInspector(counts: Map<Address, number>): (inspect: InspectFn) => InspectFn {
  return (inspect) => async (address, emitted) => {
    counts.set(address, (counts.get(address) ?? 0) + 1);
    return inspect(address, emitted);
  };
}

describe("contracts that emit absurd events", () => {
  test("nine ERC-1155 mints of 2^256-1 overflow no balance, holder or total", async () => {
    const db = await database();
    const address = await deployForge();
    const mint = forgeCall("transferSingle", [alice, ZERO_ADDRESS, alice, 7n, MAX_UINT256]);
    await forge(address, "multicall", [Array(9).fill(mint)]);
    await forge(address, "transferSingle", [alice, alice, bob, 7n, MAX_UINT256]);
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: await head() });

    const balances = await db.sql<{ holder: Uint8Array; amount: string }[]>`
      SELECT holder, amount FROM token_balances WHERE contract = ${bytes(address)} ORDER BY amount DESC`;
    assert.deepEqual(
      balances.map((b) => [`0x${Buffer.from(b.holder).toString("hex")}`, BigInt(b.amount)]),
      [
        [alice, 8n * MAX_UINT256],
        [bob, MAX_UINT256],
      ],
    );
    const [units] = await db.sql<{ units: string }[]>`
      SELECT units FROM collection_holders WHERE contract = ${bytes(address)} AND holder = ${bytes(alice)}`;
    assert.equal(BigInt(units?.units ?? 0), 8n * MAX_UINT256);
    const [stats] = await db.sql<{ minted: string; supply: string; holders: string }[]>`
      SELECT minted, supply, holders FROM collection_stats WHERE contract = ${bytes(address)}`;
    assert.deepEqual(stats, {
      minted: (9n * MAX_UINT256).toString(),
      supply: (9n * MAX_UINT256).toString(),
      holders: "2",
    });
    const [buckets] = await db.sql<{ minted: string }[]>`
      SELECT sum(minted) AS minted FROM collection_buckets WHERE contract = ${bytes(address)}`;
    assert.equal(buckets?.minted, (9n * MAX_UINT256).toString());
  });

  test("a block of maximal ERC-2309 ranges expands within its budget; the rest is recorded as spam", async () => {
    const db = await database();
    const address = await deployForge();
    // Three hundred ranges of 50,000 ids in one transaction: 15 million rows if all were expanded.
    await forge(address, "consecutive", [1n, 50_000n, ZERO_ADDRESS, alice, 300n]);
    await forge(address, "consecutive", [0n, MAX_UINT256, ZERO_ADDRESS, bob, 5n]);
    let last: Progress | undefined;
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      untilBlock: await head(),
      onProgress: (p) => {
        last = p;
      },
    });

    const [rows] = await db.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM nft_transfers WHERE contract = ${bytes(address)}`;
    assert.equal(rows?.n, "100000", "two ranges of 50,000 fill the contract's budget for the block");
    const spam = await db.sql<{ n: string; tokens: string }[]>`
      SELECT count(*) AS n, sum(tokens) AS tokens FROM skipped_logs
      WHERE contract = ${bytes(address)} AND reason = 'spam'`;
    assert.deepEqual(spam[0], {
      n: "303",
      tokens: (298n * 50_000n + 5n * 2n ** 256n).toString(),
    });
    assert.equal(last?.spam, 303);
    const [supply] = await db.sql<{ supply: string }[]>`
      SELECT supply FROM collection_stats WHERE contract = ${bytes(address)}`;
    assert.equal(supply?.supply, "100000");
  });

  test("a batch whose ranges expand past its row bound ends early; the blocks after it are read again", async () => {
    const address = await deployForge();
    // Indexed from this contract's deployment on: the earlier tests' ranges are not this one's.
    const startBlock = await head();
    // Alone past the bound: a block is never split, so it makes a batch of its own.
    const first = await forge(address, "consecutive", [1n, 6_000n, ZERO_ADDRESS, alice, 1n]);
    for (let i = 3; i < 10; i++) {
      await forge(address, "consecutive", [
        BigInt(i * 2_000 + 1),
        BigInt(i * 2_000 + 2_000),
        ZERO_ADDRESS,
        bob,
        1n,
      ]);
    }
    const untilBlock = await head();
    const reference = await database();
    await indexUntil({ sql: reference.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, startBlock, untilBlock });
    const db = await database();
    const spans: number[] = [];
    let before = 0;
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      startBlock,
      untilBlock,
      maxBatchRows: 5_000,
      onProgress: (p) => {
        if (p.nextBlock > first) spans.push(p.nextBlock - Math.max(before, first));
        before = p.nextBlock;
      },
    });
    assert.equal(spans[0], 1, `the block past the bound was a batch alone: ${spans}`);
    assert.ok(
      spans.every((blocks) => blocks <= 2),
      `no batch past the first range carried over 5,000 rows: ${spans}`,
    );
    assert.deepEqual(await snapshotStore(db.sql), await snapshotStore(reference.sql));
  });

  test("a contract is inspected again once for each event shape it had not been seen with, and no log goes unrecorded", async () => {
    const db = await database();
    const address = await deployForge();
    const first = await forge(address, "transferSingle", [alice, ZERO_ADDRESS, alice, 1n, 5n]);
    await forge(address, "erc721Transfer", [ZERO_ADDRESS, bob, 2n]);
    // ERC-20-shaped, from a contract read as ERC-1155 and ERC-721: only a new inspection tells how to read it.
    await forge(address, "erc20Transfer", [ZERO_ADDRESS, carol, 3n]);
    await forge(address, "erc20Transfer", [carol, dave, 3n]);
    await forge(address, "malformedTransfer", [alice, bob, false, 0n, "0x010203"]);
    const counts = new Map<Address, number>();
    let last: Progress | undefined;
    const run = (untilBlock: number) =>
      indexUntil({
        sql: db.sql,
        rpcUrl: anvil.url,
        chainId: CHAIN_ID,
        untilBlock,
        // One block per batch, one batch at a time: each new shape arrives in a batch of its own.
        tuning: { maxBlocksPerBatch: 1, prefetch: 1 },
        wrapInspect: countingInspector(counts),
        onProgress: (p) => {
          last = p;
        },
      });
    await run(await head());

    assert.equal(
      counts.get(address),
      4,
      "inspected when deployed (near the head), then for TransferSingle and each new Transfer layout",
    );
    const [row] = await db.sql<{ types: string[]; shapes: string[] }[]>`
      SELECT types, shapes FROM contracts WHERE address = ${bytes(address)}`;
    assert.deepEqual(row, {
      types: ["TYPE_ERC1155", "TYPE_ERC721", "TYPE_ERC721_LEGACY"],
      shapes: ["erc1155-transfer", "erc20-transfer", "erc721-transfer"],
    });
    const moves = await db.sql<{ token_id: string; standard: string }[]>`
      SELECT token_id, standard FROM nft_transfers WHERE contract = ${bytes(address)} ORDER BY block_number`;
    assert.deepEqual(
      moves.map((m) => [m.token_id, m.standard]),
      [
        ["1", "erc1155"],
        ["2", "erc721"],
        ["3", "legacy"],
        ["3", "legacy"],
      ],
    );
    assert.equal(last?.malformed, 1);

    // Every transfer-topic log the contract emitted is either indexed or recorded with its reason.
    const logs = await chain.publicClient.request({
      method: "eth_getLogs",
      params: [
        { address, fromBlock: `0x${first.toString(16)}`, toBlock: "latest", topics: [[...TRANSFER_TOPICS]] },
      ],
    });
    const [accounted] = await db.sql<{ n: string }[]>`
      SELECT (SELECT count(DISTINCT (block_number, log_index)) FROM nft_transfers WHERE contract = ${bytes(address)})
           + (SELECT count(*) FROM fungible_transfers WHERE contract = ${bytes(address)})
           + (SELECT count(*) FROM skipped_logs WHERE contract = ${bytes(address)}) AS n`;
    assert.equal(Number(accounted?.n), (logs as unknown[]).length);
    const [skipped] = await db.sql<{ reason: string }[]>`
      SELECT reason FROM skipped_logs WHERE contract = ${bytes(address)}`;
    assert.equal(skipped?.reason, "malformed");

    // The shapes are stored: after a restart, a shape seen before costs no inspection.
    await forge(address, "erc20Transfer", [dave, alice, 3n]);
    counts.clear();
    await run(await head());
    assert.equal(counts.get(address), undefined);
  });

  test("an inspection that fails is retried later and the chain moves on", async () => {
    const db = await database();
    const address = await deployForge();
    await forge(address, "transferSingle", [alice, ZERO_ADDRESS, alice, 1n, 5n]);
    await forge(address, "transferSingle", [alice, alice, bob, 1n, 2n]);
    let failed = 0;
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      untilBlock: await head(),
      wrapInspect: (inspect) => async (contract, emitted) => {
        if (contract === address && failed++ === 0) {
          throw new TransientError("eth_call to the node failed after 9 attempts: connection reset");
        }
        return inspect(contract, emitted);
      },
    });
    assert.equal(failed, 2, "the failed inspection was made once more");
    const [row] = await db.sql<
      { types: string[] }[]
    >`SELECT types FROM contracts WHERE address = ${bytes(address)}`;
    assert.deepEqual(row?.types, ["TYPE_ERC1155"]);
    const [units] = await db.sql<{ units: string }[]>`
      SELECT units FROM collection_holders WHERE contract = ${bytes(address)} AND holder = ${bytes(bob)}`;
    assert.equal(units?.units, "2");
  });
});

describe("ERC-20 contracts", () => {
  test("an ERC-20 deployed before the indexed range is stored once, with its types and decimals", async () => {
    for (const discovery of ["events", "auto"] as const) {
      const db = await database();
      const token = await deployArtifact(chain, "TestERC20", ["Dollar", "USD"]);
      const erc20 = loadArtifact("TestERC20").abi;
      const minted = await sendContractTx(chain, {
        address: token.address,
        abi: erc20,
        functionName: "mint",
        args: [alice, 10n ** 18n],
        from: devAddress(0),
      });
      const counts = new Map<Address, number>();
      const options = {
        sql: db.sql,
        rpcUrl: anvil.url,
        chainId: CHAIN_ID,
        startBlock: token.blockNumber + 1,
        discovery,
        wrapInspect: countingInspector(counts),
      };
      await indexUntil({ ...options, untilBlock: await head() });
      const rows = await db.sql<
        { types: string[]; decimals: number; symbol: string; mint_source: string; mint_tx: Uint8Array }[]
      >`SELECT types, decimals, symbol, mint_source, mint_tx FROM contracts WHERE address = ${bytes(token.address)}`;
      assert.equal(rows.length, 1, discovery);
      assert.deepEqual(
        { ...rows[0], mint_tx: `0x${Buffer.from(rows[0]?.mint_tx ?? []).toString("hex")}` },
        {
          types: ["TYPE_ERC20"],
          decimals: 18,
          symbol: "USD",
          mint_source: "first_event",
          mint_tx: minted.transactionHash,
        },
        discovery,
      );
      // Stored, so a later run does not inspect it again.
      await sendContractTx(chain, {
        address: token.address,
        abi: erc20,
        functionName: "mint",
        args: [bob, 1n],
        from: devAddress(0),
      });
      counts.clear();
      await indexUntil({ ...options, untilBlock: await head() });
      assert.equal(counts.get(token.address), undefined, discovery);
    }
  });
});
