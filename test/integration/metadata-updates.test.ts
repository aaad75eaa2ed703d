/**
 * EIP-4906: `MetadataUpdate` and `BatchMetadataUpdate` decoded from every layout contracts use,
 * merged per batch, and, on anvil, queueing exactly the known tokens they name, in the batch's
 * own transaction.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { type Abi, encodeAbiParameters, encodeFunctionData, numberToHex, pad, toEventSelector } from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { MetadataUpdate } from "../../src/core/types.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import { connectDevChain, type DevChain } from "../../src/devchain/deploy.ts";
import {
  BATCH_METADATA_UPDATE_TOPIC,
  decodeMetadataUpdate,
  METADATA_UPDATE_TOPIC,
  mergeMetadataUpdates,
} from "../../src/indexer/decode/metadata-updates.ts";
import { LOG_TOPICS } from "../../src/indexer/fetch-batch.ts";
import {
  EMPTY_OUTCOME,
  type MetadataOutcome,
  pullMintRange,
  retryLater,
  storeOutcome,
  takeDueTokens,
} from "../../src/store/tables/metadata.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";

const NFT = "0x00000000000000000000000000000000000000aa" as Address;
const OTHER = "0x00000000000000000000000000000000000000bb" as Address;
const MAX = 2n ** 256n - 1n;

const hex = (address: string) => Buffer.from(address.slice(2), "hex");
const word = (n: bigint) => pad(numberToHex(n), { size: 32 });
const uints = (...values: bigint[]) =>
  encodeAbiParameters(
    values.map(() => ({ type: "uint256" })),
    values,
  ) as Hex;

describe("EIP-4906 events", () => {
  test("the topics are the selectors of the standard's events, and eth_getLogs asks for them", () => {
    assert.equal(METADATA_UPDATE_TOPIC, toEventSelector("MetadataUpdate(uint256)"));
    assert.equal(BATCH_METADATA_UPDATE_TOPIC, toEventSelector("BatchMetadataUpdate(uint256,uint256)"));
    assert.ok(LOG_TOPICS.includes(METADATA_UPDATE_TOPIC));
    assert.ok(LOG_TOPICS.includes(BATCH_METADATA_UPDATE_TOPIC));
  });

  test("ids are read from data as the standard lays them out, or from topics where a contract indexed them", () => {
    const one = { address: NFT, topics: [METADATA_UPDATE_TOPIC], data: uints(7n) };
    assert.deepEqual(decodeMetadataUpdate(one), { contract: NFT, fromTokenId: 7n, toTokenId: 7n });
    const range = { address: NFT, topics: [BATCH_METADATA_UPDATE_TOPIC], data: uints(0n, MAX) };
    assert.deepEqual(decodeMetadataUpdate(range), { contract: NFT, fromTokenId: 0n, toTokenId: MAX });
    const indexed = { address: NFT, topics: [METADATA_UPDATE_TOPIC, word(9n)], data: "0x" as Hex };
    assert.deepEqual(decodeMetadataUpdate(indexed), { contract: NFT, fromTokenId: 9n, toTokenId: 9n });
    const indexedRange = {
      address: NFT,
      topics: [BATCH_METADATA_UPDATE_TOPIC, word(3n), word(5n)],
      data: "0x" as Hex,
    };
    assert.deepEqual(decodeMetadataUpdate(indexedRange), { contract: NFT, fromTokenId: 3n, toTokenId: 5n });
  });

  test("logs of another shape, backwards ranges and other events name nothing", () => {
    const cases: { topics: Hex[]; data: Hex }[] = [
      { topics: [METADATA_UPDATE_TOPIC], data: "0x" },
      { topics: [METADATA_UPDATE_TOPIC], data: uints(1n, 2n) },
      { topics: [METADATA_UPDATE_TOPIC, word(1n)], data: uints(1n) },
      { topics: [BATCH_METADATA_UPDATE_TOPIC], data: uints(1n) },
      { topics: [BATCH_METADATA_UPDATE_TOPIC], data: uints(5n, 4n) },
      { topics: [BATCH_METADATA_UPDATE_TOPIC, word(5n)], data: "0x" },
      { topics: [toEventSelector("Transfer(address,address,uint256)")], data: uints(1n) },
    ];
    for (const c of cases)
      assert.equal(decodeMetadataUpdate({ address: NFT, ...c }), undefined, JSON.stringify(c));
  });

  test("merged ranges name exactly the tokens the updates named, each once, per contract", () => {
    const update = fc.record({
      contract: fc.constantFrom(NFT, OTHER),
      fromTokenId: fc.bigInt({ min: 0n, max: 40n }),
      length: fc.bigInt({ min: 0n, max: 6n }),
    });
    fc.assert(
      fc.property(fc.array(update, { maxLength: 12 }), (drawn) => {
        const updates: MetadataUpdate[] = drawn.map((u) => ({
          contract: u.contract,
          fromTokenId: u.fromTokenId,
          toTokenId: u.fromTokenId + u.length,
        }));
        const named = (list: readonly MetadataUpdate[]) => {
          const keys: string[] = [];
          for (const u of list)
            for (let id = u.fromTokenId; id <= u.toTokenId; id++) keys.push(`${u.contract}:${id}`);
          return keys;
        };
        const merged = mergeMetadataUpdates(updates);
        const mergedKeys = named(merged);
        assert.equal(new Set(mergedKeys).size, mergedKeys.length, "no token is named twice");
        assert.deepEqual(new Set(mergedKeys), new Set(named(updates)));
        // Neither overlapping nor adjacent: as few ranges as cover them.
        for (const contract of [NFT, OTHER]) {
          const ranges = merged.filter((u) => u.contract === contract);
          for (let i = 1; i < ranges.length; i++) {
            assert.ok(
              (ranges[i] as MetadataUpdate).fromTokenId > (ranges[i - 1] as MetadataUpdate).toTokenId + 1n,
            );
          }
        }
      }),
    );
  });
});

describe("EIP-4906 events on a chain", () => {
  let anvil: Anvil;
  let chain: DevChain;
  let db: TestDatabase;
  let sender: Address;
  let forge: Address;
  const forgeAbi = loadArtifact("EventForge").abi as Abi;

  async function call(functionName: string, args: unknown[]): Promise<void> {
    const hash = await chain.walletClient.writeContract({
      address: forge,
      abi: forgeAbi,
      functionName,
      args,
      account: sender,
      chain: null,
    });
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, "success");
  }

  const queued = async () =>
    (
      await db.sql<{ id: string; reason: string }[]>`
        SELECT token_id::text AS id, reason FROM metadata_queue WHERE contract = ${Buffer.from(forge.slice(2), "hex")}
        ORDER BY token_id`
    ).map((r) => `${r.id}:${r.reason}`);
  // Minted tokens the worker has not moved into the queue yet.
  const inRanges = async () =>
    (
      await db.sql<{ id: string }[]>`
        SELECT t.token_id::text AS id FROM metadata_mint_ranges r
        JOIN tokens t ON t.chain_id = r.chain_id AND t.block_number BETWEEN r.first_block AND r.last_block
        WHERE t.contract = ${Buffer.from(forge.slice(2), "hex")} ORDER BY t.token_id`
    ).map((r) => r.id);

  before(async () => {
    anvil = await startAnvil({ chainId: 31337 });
    chain = connectDevChain(anvil.url);
    const [first] = await chain.walletClient.requestAddresses();
    assert.ok(first);
    sender = first.toLowerCase() as Address;
    const { bytecode } = loadArtifact("EventForge");
    const hash = await chain.walletClient.deployContract({
      abi: forgeAbi,
      bytecode,
      account: sender,
      chain: null,
    });
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    assert.ok(receipt.contractAddress);
    forge = receipt.contractAddress.toLowerCase() as Address;
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("updates queue the minted tokens they name, including one minted in the same block, and nothing else", async () => {
    const zero = "0x0000000000000000000000000000000000000000";
    for (const id of [1n, 2n, 3n, 10n, 11n]) await call("erc721Transfer", [zero, sender, id]);
    let head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: 31337, untilBlock: head });
    assert.deepEqual(await queued(), []);
    assert.deepEqual(await inRanges(), ["1", "2", "3", "10", "11"]);
    assert.deepEqual(await pullMintRange(db.sql, 31337), { ranges: 1, tokens: 5 });
    assert.deepEqual(await queued(), ["1:mint", "2:mint", "3:mint", "10:mint", "11:mint"]);
    assert.deepEqual(await inRanges(), []);
    // As if the worker had fetched them all: the queue is empty.
    await db.sql`DELETE FROM metadata_queue`;

    const forgeCall = (functionName: string, args: unknown[]) => ({ functionName, args });
    const calls = [
      forgeCall("rawLog", [[METADATA_UPDATE_TOPIC], uints(2n)]),
      forgeCall("rawLog", [[BATCH_METADATA_UPDATE_TOPIC, word(9n), word(10n)], "0x"]),
      // A token minted in the same transaction as the update that names it.
      forgeCall("erc721Transfer", [zero, sender, 12n]),
      forgeCall("rawLog", [[BATCH_METADATA_UPDATE_TOPIC], uints(12n, 12n)]),
      // Names no known token, and a backwards range that names nothing.
      forgeCall("rawLog", [[METADATA_UPDATE_TOPIC], uints(99n)]),
      forgeCall("rawLog", [[BATCH_METADATA_UPDATE_TOPIC], uints(3n, 1n)]),
    ];
    await call("multicall", [calls.map((c) => encodeFunctionData({ abi: forgeAbi, ...c }))]);
    head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: 31337, untilBlock: head });
    // Token 12's mint recorded its range; the update queues it at once, and the range, moved into
    // the queue later, leaves it as it is.
    assert.deepEqual(await queued(), ["2:update", "10:update", "12:update"]);
    assert.deepEqual(await inRanges(), ["12"]);
    assert.deepEqual(await pullMintRange(db.sql, 31337), { ranges: 1, tokens: 0 });
    assert.deepEqual(await queued(), ["2:update", "10:update", "12:update"]);

    // "Every token": the whole collection, each token once.
    await call("rawLog", [[BATCH_METADATA_UPDATE_TOPIC], uints(0n, MAX)]);
    head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: 31337, untilBlock: head });
    assert.deepEqual(await queued(), [
      "1:update",
      "2:update",
      "3:update",
      "10:update",
      "11:update",
      "12:update",
    ]);
    // A token waiting out a backoff is due again at once.
    await db.sql`UPDATE metadata_queue SET due_at = now() + interval '1 hour', attempts = 3 WHERE token_id = 3`;
    await call("rawLog", [[METADATA_UPDATE_TOPIC], uints(3n)]);
    head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: 31337, untilBlock: head });
    const [three] = await db.sql<{ due: boolean; attempts: number }[]>`
      SELECT due_at <= now() AS due, attempts FROM metadata_queue WHERE token_id = 3`;
    // Its attempts still count: announcing updates cannot keep a token from ever failing.
    assert.deepEqual({ ...three }, { due: true, attempts: 3 });
  });

  test("a token queued again while it is worked on: the older take's outcome is stored but leaves it due for the newer take", async () => {
    const key = { chainId: 31337, contract: forge, tokenId: 1n };
    const doc = (raw: string): MetadataOutcome => ({ ...EMPTY_OUTCOME, status: "ok", raw, name: raw });
    await db.sql`UPDATE metadata_queue SET due_at = now() - interval '1 second'`;
    const take = async () => {
      const taken = await takeDueTokens(db.sql, key.chainId, 100, 300);
      const token = taken.find((t) => t.contract === forge && t.tokenId === key.tokenId);
      assert.ok(token, "token 1 was due");
      return token;
    };
    const first = await take();
    // The contract announces an update of token 1 while the first take is under way.
    await call("rawLog", [[METADATA_UPDATE_TOPIC], uints(1n)]);
    const head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: 31337, untilBlock: head });
    const second = await take();
    assert.notEqual(second.lease, first.lease);

    const row = async () => {
      const [queued] = await db.sql<{ attempts: number }[]>`
        SELECT attempts FROM metadata_queue WHERE contract = ${hex(forge)} AND token_id = 1`;
      const [stored] = await db.sql<{ raw: string }[]>`
        SELECT raw FROM token_metadata WHERE contract = ${hex(forge)} AND token_id = 1`;
      return { queued: queued ? { ...queued } : undefined, raw: stored?.raw };
    };
    // The first take fails for a while: the newer take's row is left as it is.
    const attempts = (await row()).queued?.attempts;
    await retryLater(db.sql, key.chainId, first, 60, "HTTP 503");
    assert.deepEqual(await row(), { queued: { attempts }, raw: undefined });
    // The first take's outcome (the old document) is stored; the token stays queued for the second.
    assert.equal(await storeOutcome(db.sql, key.chainId, first, doc("old")), true);
    assert.deepEqual(await row(), { queued: { attempts }, raw: "old" });
    // The second take's outcome replaces it, and the token leaves the queue.
    assert.equal(await storeOutcome(db.sql, key.chainId, second, doc("new")), true);
    assert.deepEqual(await row(), { queued: undefined, raw: "new" });
    // An outcome arriving after that is of no take any more: nothing is stored.
    assert.equal(await storeOutcome(db.sql, key.chainId, first, doc("old")), false);
    assert.deepEqual(await row(), { queued: undefined, raw: "new" });
  });
});
