import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Abi, createPublicClient, decodeEventLog, http } from "viem";
import { isBurnAddress } from "../../src/core/burn.ts";
import type { Address } from "../../src/core/hex.ts";
import { bucketStart } from "../../src/core/periods.ts";
import type { HistorySummary } from "../../src/demo/activity.ts";
import type { DemoContractKey } from "../../src/demo/contracts.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { type ContractName, loadArtifact } from "../../src/devchain/artifacts.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";

const CHAIN_ID = 31337;
const ERC721_KEYS = ["erc721", "erc721Create2", "erc721Create", "erc721Consecutive"] as const;

/** What the chain itself says: owners read with eth_call, independent of the indexer's decoding. */
interface Holding {
  contract: Address;
  tokenId: bigint;
  holder: Address;
  amount: bigint;
}

let anvil: Anvil;
let db: TestDatabase;
let history: HistorySummary;
let head: number;
let client: ReturnType<typeof createPublicClient>;
let truth: Holding[];

const abiOf = (name: ContractName): Abi => loadArtifact(name).abi;
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}` as Address;

async function allLogsOf(address: Address, name: ContractName) {
  const logs = await client.getLogs({ address, fromBlock: 0n, toBlock: BigInt(head) });
  return logs.map((log) => ({
    log,
    event: decodeEventLog({ abi: abiOf(name), data: log.data, topics: log.topics, strict: true }),
  }));
}

async function readTruth(): Promise<Holding[]> {
  const holdings: Holding[] = [];
  const c = history.contracts;
  for (const key of [...ERC721_KEYS, "legacyErc721", "paidMint"] as const) {
    const { address, contractName } = c[key];
    const ids = new Set<bigint>();
    for (const { event } of await allLogsOf(address, contractName)) {
      const args = event.args as unknown as Record<string, unknown>;
      if (event.eventName === "Transfer") ids.add((args.tokenId ?? args.id) as bigint);
      if (event.eventName === "ConsecutiveTransfer") {
        for (let id = args.fromTokenId as bigint; id <= (args.toTokenId as bigint); id++) ids.add(id);
      }
    }
    assert.ok(ids.size > 0, `${key} has tokens`);
    await Promise.all(
      [...ids].map(async (tokenId) => {
        const owner = await client
          .readContract({ address, abi: abiOf(contractName), functionName: "ownerOf", args: [tokenId] })
          .catch(() => undefined);
        if (owner)
          holdings.push({
            contract: address,
            tokenId,
            holder: (owner as string).toLowerCase() as Address,
            amount: 1n,
          });
      }),
    );
  }
  const erc1155 = c.erc1155;
  const pairs = new Set<string>();
  for (const { event } of await allLogsOf(erc1155.address, "TestERC1155")) {
    const args = event.args as unknown as Record<string, unknown>;
    const ids = event.eventName === "TransferSingle" ? [args.id as bigint] : ((args.ids ?? []) as bigint[]);
    for (const id of ids) pairs.add(`${(args.to as string).toLowerCase()}:${id}`);
  }
  await Promise.all(
    [...pairs].map(async (pair) => {
      const [holder, id] = pair.split(":") as [Address, string];
      const amount = (await client.readContract({
        address: erc1155.address,
        abi: abiOf("TestERC1155"),
        functionName: "balanceOf",
        args: [holder, BigInt(id)],
      })) as bigint;
      if (amount > 0n) holdings.push({ contract: erc1155.address, tokenId: BigInt(id), holder, amount });
    }),
  );
  const punks = c.punks;
  const supply = Number(
    await client.readContract({
      address: punks.address,
      abi: abiOf("CryptoPunksMarket"),
      functionName: "totalSupply",
    }),
  );
  await Promise.all(
    Array.from({ length: supply }, async (_, i) => {
      const owner = (
        (await client.readContract({
          address: punks.address,
          abi: abiOf("CryptoPunksMarket"),
          functionName: "punkIndexToAddress",
          args: [BigInt(i)],
        })) as string
      ).toLowerCase() as Address;
      if (!isBurnAddress(owner))
        holdings.push({ contract: punks.address, tokenId: BigInt(i), holder: owner, amount: 1n });
    }),
  );
  return holdings.filter((h) => !isBurnAddress(h.holder));
}

describe("indexing a generated chain", () => {
  before(async () => {
    ({ anvil, history } = await startHistoryChain({
      chainId: CHAIN_ID,
      seed: "scenario",
      days: 40,
      genesis: "recent",
    }));
    client = createPublicClient({ transport: http(anvil.url, { batch: { batchSize: 200 } }) });
    head = Number(await client.getBlockNumber());
    db = await createTestDatabase();
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: head });
    truth = await readTruth();
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("every token balance equals what the contracts report", async () => {
    const rows = await db.sql<
      { contract: Uint8Array; token_id: string; holder: Uint8Array; amount: string }[]
    >`
      SELECT contract, token_id, holder, amount FROM token_balances ORDER BY contract, token_id, holder`;
    const stored = rows.map((r) => `${hex(r.contract)}:${r.token_id}:${hex(r.holder)}:${r.amount}`).sort();
    const expected = truth.map((h) => `${h.contract}:${h.tokenId}:${h.holder}:${h.amount}`).sort();
    assert.ok(expected.length > 100, "the history holds a fair number of tokens");
    assert.deepEqual(stored, expected);
  });

  test("holders per collection, supply and holder counts match the chain", async () => {
    const byCollection = new Map<Address, Map<Address, bigint>>();
    for (const h of truth) {
      const holders = byCollection.get(h.contract) ?? new Map<Address, bigint>();
      holders.set(h.holder, (holders.get(h.holder) ?? 0n) + h.amount);
      byCollection.set(h.contract, holders);
    }
    for (const [contract, holders] of byCollection) {
      const rows = await db.sql<{ holder: Uint8Array; units: string }[]>`
        SELECT holder, units FROM collection_holders WHERE contract = ${Buffer.from(contract.slice(2), "hex")}`;
      assert.deepEqual(
        new Map(rows.map((r) => [hex(r.holder), BigInt(r.units)])),
        holders,
        `holders of ${contract}`,
      );
      const [stats] = await db.sql<{ supply: string; holders: string }[]>`
        SELECT supply, holders FROM collection_stats WHERE contract = ${Buffer.from(contract.slice(2), "hex")}`;
      const supply = [...holders.values()].reduce((a, b) => a + b, 0n);
      assert.equal(BigInt(stats?.supply ?? -1), supply, `supply of ${contract}`);
      assert.equal(Number(stats?.holders), holders.size, `holder count of ${contract}`);
    }
  });

  test("per-token supply matches the chain", async () => {
    const supply = new Map<string, bigint>();
    for (const h of truth)
      supply.set(`${h.contract}:${h.tokenId}`, (supply.get(`${h.contract}:${h.tokenId}`) ?? 0n) + h.amount);
    const rows = await db.sql<{ contract: Uint8Array; token_id: string; supply: string }[]>`
      SELECT contract, token_id, sum(amount) AS supply FROM token_balances GROUP BY contract, token_id`;
    assert.deepEqual(
      new Map(rows.map((r) => [`${hex(r.contract)}:${r.token_id}`, BigInt(r.supply)])),
      supply,
    );
  });

  test("contracts are typed and carry their deployment as mint event", async () => {
    const expectedTypes: Partial<Record<DemoContractKey, string[]>> = {
      erc721: ["TYPE_ERC721"],
      erc721Create2: ["TYPE_ERC721"],
      erc721Create: ["TYPE_ERC721"],
      erc721Consecutive: ["TYPE_ERC721"],
      erc1155: ["TYPE_ERC1155"],
      legacyErc721: ["TYPE_ERC721_LEGACY"],
      punks: ["TYPE_CRYPTOPUNKS"],
      erc20: ["TYPE_ERC20"],
    };
    for (const [key, types] of Object.entries(expectedTypes)) {
      const contract = history.contracts[key as DemoContractKey];
      const [row] = await db.sql<
        {
          types: string[];
          mint_tx: Uint8Array;
          mint_block: string;
          minter: Uint8Array;
          creator: Uint8Array;
          mint_source: string;
          decimals: number;
        }[]
      >`SELECT types, mint_tx, mint_block, minter, creator, mint_source, decimals FROM contracts
        WHERE address = ${Buffer.from(contract.address.slice(2), "hex")}`;
      assert.ok(row, `${key} is stored`);
      assert.deepEqual(row.types, types, `types of ${key}`);
      assert.equal(hex(row.mint_tx), contract.txHash, `mint tx of ${key}`);
      assert.equal(Number(row.mint_block), contract.blockNumber, `mint block of ${key}`);
      assert.equal(hex(row.creator), contract.creator, `creator of ${key}`);
      const sender = (await client.getTransaction({ hash: contract.txHash })).from.toLowerCase();
      assert.equal(hex(row.minter), sender, `minter of ${key}`);
      assert.equal(row.mint_source, "trace");
      assert.equal(row.decimals, key === "erc20" ? 18 : 0);
    }
  });

  test("buckets add up to the totals, and mints land in the bucket of their block", async () => {
    const contract = history.contracts.erc721;
    const mintsPerBucket = new Map<number, bigint>();
    const blockTimes = new Map<bigint, number>();
    for (const { log, event } of await allLogsOf(contract.address, "TestERC721")) {
      const args = event.args as unknown as { from: string };
      if (event.eventName !== "Transfer" || !isBurnAddress(args.from.toLowerCase() as Address)) continue;
      const number = log.blockNumber as bigint;
      if (!blockTimes.has(number))
        blockTimes.set(number, Number((await client.getBlock({ blockNumber: number })).timestamp));
      const start = bucketStart(blockTimes.get(number) as number);
      mintsPerBucket.set(start, (mintsPerBucket.get(start) ?? 0n) + 1n);
    }
    const rows = await db.sql<{ start: string; minted: string }[]>`
      SELECT extract(epoch FROM bucket_start)::bigint AS start, minted FROM collection_buckets
      WHERE contract = ${Buffer.from(contract.address.slice(2), "hex")} AND minted <> 0`;
    assert.deepEqual(new Map(rows.map((r) => [Number(r.start), BigInt(r.minted)])), mintsPerBucket);

    const sums = await db.sql<{ contract: Uint8Array; supply: string; holders: string; transfers: string }[]>`
      SELECT contract, sum(minted - burned) AS supply, sum(holders_delta) AS holders, sum(transfers) AS transfers
      FROM collection_buckets GROUP BY contract`;
    for (const s of sums) {
      const [stats] = await db.sql<{ supply: string; holders: string; transfers: string }[]>`
        SELECT supply, holders, transfers FROM collection_stats WHERE contract = ${s.contract}`;
      const [count] = await db.sql<
        { n: string }[]
      >`SELECT count(*) AS n FROM nft_transfers WHERE contract = ${s.contract}`;
      assert.deepEqual([s.supply, s.holders, s.transfers], [stats?.supply, stats?.holders, stats?.transfers]);
      assert.equal(s.transfers, count?.n);
    }
  });
});
