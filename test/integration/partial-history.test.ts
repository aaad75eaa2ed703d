/**
 * Indexing from a start block after collections were deployed and traded: what the API shows of
 * holders whose earlier units are unknown, and the ownership history read from logs alone
 * (`--ownership-history logs`), compared holder by holder with what the contracts report at the head.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Abi, createPublicClient, decodeEventLog, http } from "viem";
import { isBurnAddress } from "../../src/core/burn.ts";
import type { Address } from "../../src/core/hex.ts";
import type { HistorySummary } from "../../src/demo/activity.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { type ContractName, loadArtifact } from "../../src/devchain/artifacts.ts";
import { type ApiClient, createApiFixtureOn } from "../support/api-client.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";
import { capturingLogger } from "../support/logs.ts";

const CHAIN_ID = 31337;

let anvil: Anvil;
let history: HistorySummary;
let client: ReturnType<typeof createPublicClient>;
let head: number;
let start: number;
const databases: TestDatabase[] = [];

const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}` as Address;
const abiOf = (name: ContractName): Abi => loadArtifact(name).abi;

/** Units per (collection, token, holder) as the contracts report them at the head, read with eth_call. */
async function holdingsAtHead(contracts: readonly Address[]): Promise<Map<string, bigint>> {
  const names = new Map<Address, ContractName>(
    Object.values(history.contracts).map((c) => [c.address, c.contractName as ContractName]),
  );
  const held = new Map<string, bigint>();
  for (const address of contracts) {
    const name = names.get(address);
    assert.ok(name, `${address} is a contract of the history`);
    const abi = abiOf(name);
    if (name === "CryptoPunksMarket") {
      const supply = Number(await client.readContract({ address, abi, functionName: "totalSupply" }));
      for (let i = 0; i < supply; i++) {
        const owner = (
          (await client.readContract({
            address,
            abi,
            functionName: "punkIndexToAddress",
            args: [BigInt(i)],
          })) as string
        ).toLowerCase() as Address;
        if (!isBurnAddress(owner)) held.set(`${address}:${i}:${owner}`, 1n);
      }
      continue;
    }
    const logs = await client.getLogs({ address, fromBlock: 0n, toBlock: BigInt(head) });
    const ids = new Set<bigint>();
    const pairs = new Set<string>();
    for (const log of logs) {
      const event = decodeEventLog({ abi, data: log.data, topics: log.topics, strict: false });
      const args = event.args as unknown as Record<string, unknown>;
      if (event.eventName === "Transfer") ids.add((args.tokenId ?? args.id) as bigint);
      if (event.eventName === "ConsecutiveTransfer") {
        for (let id = args.fromTokenId as bigint; id <= (args.toTokenId as bigint); id++) ids.add(id);
      }
      if (event.eventName === "TransferSingle" || event.eventName === "TransferBatch") {
        const tokenIds = event.eventName === "TransferSingle" ? [args.id as bigint] : (args.ids as bigint[]);
        for (const id of tokenIds) pairs.add(`${(args.to as string).toLowerCase()}:${id}`);
      }
    }
    for (const id of ids) {
      const owner = await client
        .readContract({ address, abi, functionName: "ownerOf", args: [id] })
        .catch(() => undefined);
      if (owner && !isBurnAddress((owner as string).toLowerCase() as Address))
        held.set(`${address}:${id}:${(owner as string).toLowerCase()}`, 1n);
    }
    for (const pair of pairs) {
      const [holder, id] = pair.split(":") as [Address, string];
      if (isBurnAddress(holder)) continue;
      const amount = (await client.readContract({
        address,
        abi,
        functionName: "balanceOf",
        args: [holder, BigInt(id)],
      })) as bigint;
      if (amount > 0n) held.set(`${address}:${id}:${holder}`, amount);
    }
  }
  return held;
}

/** The NFT collections the indexer met whose deployment it did not see: those older than the start block. */
async function olderCollections(db: TestDatabase): Promise<Address[]> {
  const rows = await db.sql<{ address: Uint8Array }[]>`
    SELECT address FROM contracts
    WHERE mint_source = 'first_event' AND types && '{TYPE_ERC721,TYPE_ERC1155,TYPE_ERC721_LEGACY,TYPE_CRYPTOPUNKS}'
    ORDER BY address`;
  return rows.map((r) => hex(r.address));
}

async function storedBalances(db: TestDatabase, contracts: readonly Address[]): Promise<Map<string, bigint>> {
  const rows = await db.sql<{ contract: Uint8Array; token_id: string; holder: Uint8Array; amount: string }[]>`
    SELECT contract, token_id::text, holder, amount::text FROM token_balances`;
  const wanted = new Set(contracts);
  return new Map(
    rows
      .filter((r) => wanted.has(hex(r.contract)))
      .map((r) => [`${hex(r.contract)}:${r.token_id}:${hex(r.holder)}`, BigInt(r.amount)]),
  );
}

interface ListedOwner {
  address: string;
  ownedCount: string;
}

/** A whole owners list over REST, paged by token, or by offset when `byOffset`. */
async function restOwners(
  api: ApiClient,
  contract: Address,
  direction: string,
  byOffset: boolean,
): Promise<ListedOwner[]> {
  const all: ListedOwner[] = [];
  let token = "";
  for (let page = 0; page < 1000; page++) {
    const query = byOffset ? `offset=${all.length}` : token ? `pageToken=${encodeURIComponent(token)}` : "";
    const answer = await api.get(
      `/collections/v1beta2/${contract}/owners_list?limit=7&sortDirection=${direction}&${query}`,
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const body = answer.body as { owner: ListedOwner[]; nextPageToken: string };
    all.push(...body.owner);
    if (byOffset ? body.owner.length < 7 : body.nextPageToken === "") return all;
    token = body.nextPageToken;
  }
  throw new Error("the owners list does not end");
}

async function grpcOwners(api: ApiClient, contract: Address, direction: string): Promise<ListedOwner[]> {
  const all: ListedOwner[] = [];
  let pageToken = "";
  for (let page = 0; page < 1000; page++) {
    const answer = await api.grpc("CollectionsService", "ListCollectionOwners", {
      contractAddress: contract,
      limit: 7,
      sortDirection: direction,
      ...(pageToken ? { pageToken } : {}),
    });
    assert.equal(answer.error, null, answer.error?.message);
    const body = answer.response as { owner: ListedOwner[]; nextPageToken: string };
    all.push(...body.owner.map((o) => ({ address: o.address, ownedCount: String(o.ownedCount) })));
    if (body.nextPageToken === "") return all;
    pageToken = body.nextPageToken;
  }
  throw new Error("the owners list does not end");
}

/** Every view of a collection's holders over both protocols: never a negative or failed answer, all alike. */
async function checkOwnersViews(db: TestDatabase, api: ApiClient, contract: Address): Promise<ListedOwner[]> {
  const address = Buffer.from(contract.slice(2), "hex");
  const positive = await db.sql<{ holder: Uint8Array; units: string }[]>`
    SELECT holder, units::text FROM collection_holders h WHERE contract = ${address} AND units > 0
    -- Qualified: the bare name would order by the text selected.
    ORDER BY h.units DESC, h.holder`;
  const expected = positive.map((r) => ({ address: hex(r.holder), ownedCount: r.units }));
  for (const direction of ["SORT_DIRECTION_DESC", "SORT_DIRECTION_ASC"]) {
    const want = direction === "SORT_DIRECTION_DESC" ? expected : [...expected].reverse();
    assert.deepEqual(await restOwners(api, contract, direction, false), want, `REST by token, ${direction}`);
    assert.deepEqual(await restOwners(api, contract, direction, true), want, `REST by offset, ${direction}`);
    assert.deepEqual(await grpcOwners(api, contract, direction), want, `gRPC, ${direction}`);
  }
  const [stats] = await db.sql<{ holders: string }[]>`
    SELECT holders::text FROM collection_stats WHERE contract = ${address}`;
  assert.equal(Number(stats?.holders), expected.length, "the holder count counts the holders listed");
  for (const path of ["owners_count", "supply"]) {
    const rest = await api.get(
      `/collections/v1beta2/${contract}/${path}/DURATION_30_DAYS/GROUP_BY_PERIOD_1_DAY`,
    );
    assert.equal(rest.status, 200, JSON.stringify(rest.body));
    const method = path === "owners_count" ? "GetOwnersCount" : "GetSupply";
    const grpc = await api.grpc("CollectionsService", method, {
      contractAddress: contract,
      duration: "DURATION_30_DAYS",
      groupByPeriod: "GROUP_BY_PERIOD_1_DAY",
    });
    assert.equal(grpc.error, null, grpc.error?.message);
    assert.doesNotMatch(JSON.stringify(rest.body), /"-/, `no negative figure in ${path}`);
  }
  return expected;
}

before(async () => {
  ({ anvil, history } = await startHistoryChain({
    chainId: CHAIN_ID,
    seed: "partial",
    days: 12,
    genesis: "recent",
  }));
  client = createPublicClient({ transport: http(anvil.url, { batch: { batchSize: 200 } }) });
  head = Number(await client.getBlockNumber());
  start = Math.floor(head / 2);
});

after(async () => {
  for (const db of databases) await db.close();
  await anvil?.stop();
  await stopTestServer();
});

describe("indexed from a start block after the collections' deployment", () => {
  let db: TestDatabase;
  let api: ApiClient;

  before(async () => {
    db = await createTestDatabase();
    databases.push(db);
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      startBlock: start,
      untilBlock: head,
    });
    api = await createApiFixtureOn(db.sql, CHAIN_ID);
  });
  after(async () => api?.close());

  test("holders seen only sending are stored below zero, and no list, count or series shows them", async () => {
    const older = await olderCollections(db);
    assert.ok(older.length >= 3, `collections older than block ${start}: ${older.length}`);
    const [negative] = await db.sql<
      { n: string }[]
    >`SELECT count(*)::text AS n FROM collection_holders WHERE units < 0`;
    assert.ok(Number(negative?.n) > 0, "the history makes holders with unknown earlier units");
    for (const contract of older) {
      const listed = await checkOwnersViews(db, api, contract);
      for (const owner of listed) assert.ok(BigInt(owner.ownedCount) > 0n);
    }
  });

  test("then read from logs alone, the history makes ownership exactly what the contracts report", async () => {
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      startBlock: start,
      untilBlock: head,
      ownershipHistory: "logs",
    });
    const older = await olderCollections(db);
    const truth = await holdingsAtHead(older);
    assert.ok(truth.size > 50, "the collections hold a fair number of tokens");
    assert.deepEqual(await storedBalances(db, older), truth);
    const [negative] = await db.sql<
      { n: string }[]
    >`SELECT count(*)::text AS n FROM collection_holders WHERE units < 0`;
    assert.equal(negative?.n, "0");
    for (const contract of older) {
      const units = new Map<string, bigint>();
      for (const [key, amount] of truth) {
        const [c, , holder] = key.split(":") as [Address, string, string];
        if (c === contract) units.set(holder, (units.get(holder) ?? 0n) + amount);
      }
      // Wait for the API's data version to move past the history's transaction.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const listed = await checkOwnersViews(db, api, contract);
      assert.deepEqual(
        new Map(listed.map((o) => [o.address, BigInt(o.ownedCount)])),
        units,
        `holders of ${contract}`,
      );
    }
  });

  test("a different start block given on a later run is reported, and the stored one kept", async () => {
    const { logger, entries } = capturingLogger();
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      startBlock: 0,
      untilBlock: head,
      logger,
    });
    const warned = entries().find((e) => e.msg.includes("given now is ignored"));
    assert.ok(warned, "the ignored start block was reported");
    assert.match(
      warned.msg,
      new RegExp(`indexed from block ${start} since its first run: the start block 0`),
    );
    const [row] = await db.sql<{ start_block: string }[]>`SELECT start_block::text FROM chains`;
    assert.equal(row?.start_block, String(start));
  });
});

describe("the ownership history, interrupted between its transactions and resumed", () => {
  test("ends with the same ownership as the chain: nothing read twice, no block left out", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const abort = new AbortController();
    const watcher = (async () => {
      for (let i = 0; i < 5000 && !abort.signal.aborted; i++) {
        const [row] = await db.sql<{ n: string }[]>`
          SELECT count(*)::text AS n FROM ownership_histories WHERE next_block > 0 AND next_block < end_block`.catch(
          () => [{ n: "0" }],
        );
        if (Number(row?.n) > 0) abort.abort();
        else await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const run = {
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      startBlock: start,
      untilBlock: head,
      ownershipHistory: "logs",
      historyChunkBlocks: Math.max(1, Math.floor(start / 40)),
    } as const;
    await indexUntil({ ...run, signal: abort.signal });
    abort.abort();
    await watcher;
    const [partway] = await db.sql<{ n: string }[]>`
      SELECT count(*)::text AS n FROM ownership_histories WHERE applied_at IS NULL AND next_block > 0`;
    assert.ok(Number(partway?.n) > 0, "stopped with histories read part of the way");

    await indexUntil(run);
    const older = await olderCollections(db);
    const [unfinished] = await db.sql<{ n: string }[]>`
      SELECT count(*)::text AS n FROM ownership_histories WHERE applied_at IS NULL OR next_block <> end_block`;
    assert.equal(unfinished?.n, "0");
    assert.deepEqual(await storedBalances(db, older), await holdingsAtHead(older));
    const [left] = await db.sql<{ n: string }[]>`SELECT count(*)::text AS n FROM ownership_history_balances`;
    assert.equal(left?.n, "0", "an applied history leaves no pending units behind");
  });
});
