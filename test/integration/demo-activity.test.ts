import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { keccak256, stringToHex } from "viem";
import { type Address, type Hex, hexToNumber, wordToAddress, ZERO_ADDRESS } from "../../src/core/hex.ts";
import { generateHistory, type HistorySummary, runLiveActivity } from "../../src/demo/activity.ts";
import { generateBulkTransfers } from "../../src/demo/bulk-transfers.ts";
import { JsonRpc } from "../../src/demo/rpc.ts";
import { type Anvil, type AnvilOptions, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import { startHistoryChain } from "../support/histories.ts";

const DAY = 86_400;
const GENESIS = 1_700_000_000;
/** Four months: every kind of activity happens, and every 30-day stretch has some. */
const HISTORY = { seed: 1234, days: 120 };
const topic = (signature: string): Hex => keccak256(stringToHex(signature));

interface Log {
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  transactionHash: Hex;
}

/** `code` with the bytes the artifact leaves zero (immutables) zeroed too. */
function withoutImmutables(code: string, artifact: string): string {
  if (code.length !== artifact.length) return code;
  let out = "";
  for (let i = 0; i < code.length; i += 2)
    out += artifact.slice(i, i + 2) === "00" ? "00" : code.slice(i, i + 2);
  return out;
}

const started: Anvil[] = [];
async function anvil(options: AnvilOptions = {}): Promise<Anvil> {
  const node = await startAnvil(options);
  started.push(node);
  return node;
}
after(async () => {
  await Promise.all(started.map((a) => a.stop()));
});

describe("generateHistory", () => {
  let first: HistorySummary;
  let rpcUrl: string;

  before(async () => {
    // Made by generateHistory on a fresh anvil, once, then loaded from its state dump.
    const chain = await startHistoryChain({ ...HISTORY, genesis: GENESIS });
    started.push(chain.anvil);
    first = chain.history;
    rpcUrl = chain.anvil.url;
  });

  test("is deterministic for a seed: the same summary and the same chain on two fresh anvils", async () => {
    const a = await anvil({ timestamp: GENESIS });
    const b = await anvil({ timestamp: GENESIS });
    const c = await anvil({ timestamp: GENESIS });
    const once = await generateHistory({ rpcUrl: a.url, seed: HISTORY.seed, days: 10 });
    const again = await generateHistory({ rpcUrl: b.url, seed: HISTORY.seed, days: 10 });
    assert.deepEqual(again, once);
    const headOf = (url: string) =>
      new JsonRpc(url).call<{ hash: Hex }>("eth_getBlockByNumber", ["latest", false]);
    assert.equal((await headOf(b.url)).hash, (await headOf(a.url)).hash, "the same blocks, to the last hash");

    // The same code path with another seed does produce another chain.
    const other = await generateHistory({ rpcUrl: c.url, seed: 99, days: 10 });
    assert.notDeepEqual(other.counts, once.counts);
  });

  test("deploys every kind of contract, directly and through the factory", async () => {
    const rpc = new JsonRpc(rpcUrl);
    const { contracts } = first;
    assert.equal(contracts.erc721Create2.via, "factory-create2");
    assert.equal(contracts.erc721Create2.creator, contracts.factory.address);
    assert.equal(contracts.erc721Create.via, "factory-create");
    for (const contract of Object.values(contracts)) {
      const code = await rpc.call<Hex>("eth_getCode", [contract.address, "latest"]);
      const runtime = loadArtifact(contract.contractName).deployedBytecode;
      // Seaport's package ships its creation code only; immutables differ from the artifact's zeros.
      if (runtime === null) assert.ok(code.length > 2, contract.key);
      else assert.equal(withoutImmutables(code, runtime), runtime, contract.key);
      const tx = await rpc.call<{ blockNumber: Hex }>("eth_getTransactionByHash", [contract.txHash]);
      assert.equal(hexToNumber(tx.blockNumber), contract.blockNumber, contract.key);
    }
    // Factory-made collections have no receipt address: only traces or the factory's event reveal them.
    const receipt = await rpc.call<{ contractAddress: Address | null }>("eth_getTransactionReceipt", [
      contracts.erc721Create2.txHash,
    ]);
    assert.equal(receipt.contractAddress, null);
  });

  test("spreads block timestamps over months, in order", async () => {
    const rpc = new JsonRpc(rpcUrl);
    const { blocks, timestamps } = first;
    assert.equal(blocks.count, blocks.last - blocks.first + 1);
    const numbers = Array.from({ length: blocks.count }, (_, i) => blocks.first + i);
    const headers = await rpc.batch<{ timestamp: Hex }>(
      numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [`0x${n.toString(16)}`, false] })),
    );
    const times = headers.map((h) => hexToNumber(h.timestamp));
    assert.equal(times[0], timestamps.first);
    assert.equal(times.at(-1), timestamps.last);
    for (let i = 1; i < times.length; i++) assert.ok((times[i] as number) > (times[i - 1] as number));
    assert.ok(timestamps.first > GENESIS);
    const span = timestamps.last - timestamps.first;
    assert.ok(span > (HISTORY.days - 2) * DAY && span < (HISTORY.days + 2) * DAY, `span ${span / DAY} days`);
    // Every 30-day stretch has activity, not just the two ends.
    const months = new Set(times.map((t) => Math.floor((t - timestamps.first) / (30 * DAY))));
    assert.deepEqual([...months].sort(), [0, 1, 2, 3]);
  });

  test("does every kind of activity, and the chain's logs agree with the counts", async () => {
    const { counts, contracts } = first;
    for (const [name, value] of Object.entries(counts)) assert.ok(value > 0, `${name} is 0`);
    const rpc = new JsonRpc(rpcUrl);
    const logs = await rpc.call<Log[]>("eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]);
    assert.equal(logs.length, first.logs);
    const from = (address: Address) => logs.filter((l) => l.address.toLowerCase() === address);

    const punkLogs = from(contracts.punks.address);
    const bought = punkLogs.filter(
      (l) => l.topics[0] === topic("PunkBought(uint256,uint256,address,address)"),
    );
    const viaBid = bought.filter((l) => l.topics[3] && wordToAddress(l.topics[3]) === ZERO_ADDRESS);
    assert.equal(viaBid.length, counts.punkBidSales);
    assert.equal(bought.length - viaBid.length, counts.punkSales);
    // A bid sale's PunkBought has value 0; a buyPunk's carries what was paid.
    for (const log of viaBid) assert.equal(BigInt(log.data), 0n);
    for (const log of bought.filter((l) => !viaBid.includes(l))) assert.ok(BigInt(log.data) > 0n);
    const assigns = punkLogs.filter((l) => l.topics[0] === topic("Assign(address,uint256)"));
    assert.equal(assigns.length, counts.punksAssigned + counts.punksClaimed);

    const transfer = topic("Transfer(address,address,uint256)");
    const legacy = from(contracts.legacyErc721.address).filter((l) => l.topics[0] === transfer);
    assert.ok(legacy.every((l) => l.topics.length === 1 && l.data.length === 2 + 192));
    assert.equal(
      legacy.length,
      counts.legacyMints +
        counts.legacyTransfers +
        counts.legacyApprovedTransfers +
        counts.legacyDeadTransfers,
    );

    const consecutive = from(contracts.erc721Consecutive.address).filter(
      (l) => l.topics[0] === topic("ConsecutiveTransfer(uint256,uint256,address,address)"),
    );
    assert.equal(consecutive.length, 4);
    const dead = "0x000000000000000000000000000000000000dead";
    const mintable = [contracts.erc721, contracts.erc721Create2, contracts.erc721Create].flatMap((c) =>
      from(c.address).filter((l) => l.topics[0] === transfer),
    );
    assert.ok(mintable.every((l) => l.topics.length === 4));
    const toDead = mintable.filter((l) => wordToAddress(l.topics[2] as Hex) === dead).length;
    const toZero = mintable.filter((l) => wordToAddress(l.topics[2] as Hex) === ZERO_ADDRESS).length;
    assert.equal(toDead, counts.erc721DeadTransfers);
    assert.equal(toZero, counts.erc721Burns);
    const ordinary = from(contracts.erc721Consecutive.address).filter((l) => l.topics[0] === transfer);
    // Marketplace sales are counted once for all ERC-721 collections.
    assert.equal(
      mintable.length + ordinary.length,
      counts.erc721Mints +
        counts.erc721BatchMintedTokens +
        counts.erc721Transfers +
        counts.erc721Burns +
        counts.erc721DeadTransfers +
        counts.consecutiveMints +
        counts.consecutiveTransfers +
        counts.consecutiveBurns +
        counts.consecutiveDeadTransfers +
        counts.erc721Sales +
        counts.nftTradeTransfers,
    );
    const batches = from(contracts.erc1155.address).filter(
      (l) => l.topics[0] === topic("TransferBatch(address,address,address,uint256[],uint256[])"),
    );
    assert.equal(
      batches.length,
      counts.erc1155BatchMints + counts.erc1155BatchTransfers + counts.erc1155BatchBurns,
    );
  });

  test("runLiveActivity continues that history from chain state, and stops when aborted", async () => {
    const rpc = new JsonRpc(rpcUrl);
    const headBefore = hexToNumber(await rpc.call<Hex>("eth_blockNumber"));
    const startedAt = Math.floor(Date.now() / 1000);
    const controller = new AbortController();
    const summary = await runLiveActivity({
      rpcUrl,
      seed: 5,
      intervalMs: 10,
      signal: controller.signal,
      contracts: first.contracts,
      onTick: ({ tick }) => {
        if (tick === 15) controller.abort();
      },
    });
    assert.equal(summary.ticks, 15);
    assert.ok(summary.transactions >= 15 * 3);
    assert.deepEqual(summary.contracts, first.contracts);
    const head = await rpc.call<{ number: Hex; timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    // The history left automine on, so the transactions went into new blocks at once (anvil may
    // put two that arrive together into one block): the blocks since hold exactly them.
    const counts = await Promise.all(
      Array.from({ length: hexToNumber(head.number) - headBefore }, (_, i) =>
        rpc.call<Hex>("eth_getBlockTransactionCountByNumber", [`0x${(headBefore + 1 + i).toString(16)}`]),
      ),
    );
    assert.equal(
      counts.reduce((sum, n) => sum + hexToNumber(n), 0),
      summary.transactions,
    );
    // Live blocks carry the present time, not the history's, which ended long before: a floor,
    // so that however long the ticks took, the answer is the same.
    assert.ok(first.timestamps.last < startedAt);
    assert.ok(hexToNumber(head.timestamp) >= startedAt, `head time ${hexToNumber(head.timestamp)}`);
  });
});

describe("runLiveActivity", () => {
  test("deploys its own contracts when given none, and mines a block per tick when anvil does not", async () => {
    const node = await anvil({ args: ["--no-mining"] });
    const rpc = new JsonRpc(node.url);
    const controller = new AbortController();
    const summary = await runLiveActivity({
      rpcUrl: node.url,
      seed: "live",
      intervalMs: 5,
      actionsPerTick: 4,
      signal: controller.signal,
      onTick: ({ tick }) => {
        if (tick === 10) controller.abort();
      },
    });
    assert.equal(summary.ticks, 10);
    assert.ok(summary.counts.deployments >= 10);
    const code = await rpc.call<Hex>("eth_getCode", [summary.contracts.punks.address, "latest"]);
    assert.equal(code, loadArtifact("CryptoPunksMarket").deployedBytecode);
    assert.equal(await rpc.call<boolean>("anvil_getAutomine"), false);
  });
});

test("runLiveActivity works with an anvil that mines on an interval", async () => {
  const node = await anvil({ blockTime: 1 });
  const controller = new AbortController();
  const summary = await runLiveActivity({
    rpcUrl: node.url,
    seed: "interval",
    intervalMs: 100,
    signal: controller.signal,
    onTick: ({ tick }) => {
      if (tick === 3) controller.abort();
    },
  });
  assert.equal(summary.ticks, 3);
  assert.ok(summary.transactions >= 9);
});

describe("generateBulkTransfers", () => {
  test("produces at least the requested NFT transfer events, as the chain's logs confirm", async () => {
    const node = await anvil({ args: ["--disable-block-gas-limit"] });
    const result = await generateBulkTransfers({ rpcUrl: node.url, events: 5000, mintBatchSize: 200 });
    assert.ok(result.events >= 5000);
    const rpc = new JsonRpc(node.url);
    const logs = await rpc.call<Log[]>("eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]);
    const transfer = topic("Transfer(address,address,uint256)");
    const batch = topic("TransferBatch(address,address,address,uint256[],uint256[])");
    const erc721 = logs.filter((l) => l.topics[0] === transfer && l.topics.length === 4);
    const erc1155 = logs.filter((l) => l.topics[0] === batch);
    assert.equal(erc721.length + erc1155.length, result.events);
    assert.equal(erc721.length, result.erc721Mints + result.erc721Transfers);
    assert.equal(erc1155.length, result.erc1155Batches);
    assert.ok(result.erc721Transfers > 0 && result.erc1155Batches > 40);
    const blocks = new Set(logs.map((l) => l.blockNumber));
    assert.ok(blocks.size <= result.blocks);
    assert.equal(result.lastBlock - result.firstBlock + 1, result.blocks);
  });
});
