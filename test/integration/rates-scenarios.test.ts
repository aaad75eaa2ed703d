import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Abi, encodeFunctionData, type TransactionReceipt } from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { type ContractName, loadArtifact, runtimeCode } from "../../src/devchain/artifacts.ts";
import {
  connectDevChain,
  type DevChain,
  deployArtifact,
  devAddress,
  sendContractTx,
  waitForReceipt,
} from "../../src/devchain/deploy.ts";
import { createProcessMetrics } from "../../src/metrics/process-metrics.ts";
import { defaultNativePegged, defaultPools, defaultUsdTokens } from "../../src/rates/pools.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";
import { capturingLogger } from "../support/logs.ts";

/**
 * Exchange rates against a pool moved on purpose, on a real Uniswap V2 pair: a price pushed at
 * the end of a block around a sale and pushed back in the next, and a move that lasts. And a
 * chain of id 1 under another name, priced with mainnet's presets as far as its node has them.
 */

const E18 = 10n ** 18n;
const WINDOW = 600;
const GAS = 1_000_000n;
const OWNER = devAddress(0);
const SELLER = devAddress(1);
const BUYER = devAddress(2);

interface Call {
  address: Address;
  contract: ContractName;
  functionName: string;
  args?: readonly unknown[];
  value?: bigint;
  from?: Address;
}

function send(chain: DevChain, call: Call) {
  return sendContractTx(chain, {
    address: call.address,
    abi: loadArtifact(call.contract).abi,
    functionName: call.functionName as never,
    args: call.args ?? [],
    ...(call.value !== undefined ? { value: call.value } : {}),
    ...(call.from ? { from: call.from } : {}),
  });
}

/** The buyer holds TKN and lets the desk spend it; the seller holds the NFTs `ids`. */
async function readyToTrade(
  chain: DevChain,
  { tkn, desk, nft }: { tkn: Address; desk: Address; nft: Address },
  ids: readonly bigint[],
): Promise<void> {
  await send(chain, {
    address: tkn,
    contract: "TestERC20",
    functionName: "mint",
    args: [BUYER, 10n ** 6n * E18],
  });
  await send(chain, {
    address: tkn,
    contract: "TestERC20",
    functionName: "approve",
    args: [desk, 2n ** 255n],
    from: BUYER,
  });
  for (const id of ids) {
    await send(chain, { address: nft, contract: "TestERC721", functionName: "mint", args: [SELLER, id] });
  }
}

/** Mines `calls` in one block, in this order (one sender, so nonces keep it), at `timestamp`. */
async function oneBlock(chain: DevChain, timestamp: number, calls: Call[]): Promise<TransactionReceipt[]> {
  await chain.testClient.setAutomine(false);
  const hashes: Hex[] = [];
  try {
    for (const call of calls) {
      hashes.push(
        await chain.walletClient.sendTransaction({
          account: call.from ?? OWNER,
          chain: null,
          to: call.address,
          data: encodeFunctionData({
            abi: loadArtifact(call.contract).abi as Abi,
            functionName: call.functionName,
            args: call.args ?? [],
          }),
          gas: GAS,
          ...(call.value !== undefined ? { value: call.value } : {}),
        }),
      );
    }
    await chain.testClient.setNextBlockTimestamp({ timestamp: BigInt(timestamp) });
    await chain.testClient.mine({ blocks: 1 });
  } finally {
    await chain.testClient.setAutomine(true);
  }
  const receipts = await Promise.all(hashes.map((h) => waitForReceipt(chain, h)));
  receipts.forEach((r, i) => {
    assert.equal(r.status, "success", `${calls[i]?.functionName} on ${calls[i]?.contract} at ${timestamp}`);
  });
  assert.equal(new Set(receipts.map((r) => r.blockNumber)).size, 1, "one block");
  return receipts;
}

/** Uniswap V2's output for an input, after its 0.3% fee. */
const amountOut = (amountIn: bigint, reserveIn: bigint, reserveOut: bigint) =>
  (amountIn * 997n * reserveOut) / (reserveIn * 1000n + amountIn * 997n);

describe("rates against a pushed pool", () => {
  let anvil: Anvil;
  let chain: DevChain;
  let db: TestDatabase;
  let weth: Address;
  let tkn: Address;
  let pair: Address;
  let nft: Address;
  let desk: Address;
  let t0 = 0;
  const sales = new Map<string, { tx: Hex; block: number; time: number }>();
  const PRICE = 20_000n * E18; // TKN paid per sale: 10 ETH at the fair price

  async function reserves(block: bigint): Promise<{ weth: bigint; tkn: bigint }> {
    const [r0, r1] = (await chain.publicClient.readContract({
      address: pair,
      abi: loadArtifact("UniswapV2Pair").abi,
      functionName: "getReserves",
      blockNumber: block,
    })) as [bigint, bigint, number];
    return weth < tkn ? { weth: r0, tkn: r1 } : { weth: r1, tkn: r0 };
  }

  const swapIn = (token: Address, amount: bigint, out: bigint): Call[] => {
    const wethOut = token === tkn ? out : 0n;
    const tknOut = token === weth ? out : 0n;
    const [out0, out1] = weth < tkn ? [wethOut, tknOut] : [tknOut, wethOut];
    return [
      {
        address: token,
        contract: token === weth ? "WETH9" : "TestERC20",
        functionName: "transfer",
        args: [pair, amount],
      },
      { address: pair, contract: "UniswapV2Pair", functionName: "swap", args: [out0, out1, OWNER, "0x"] },
    ];
  };
  const sale = (tokenId: bigint): Call => ({
    address: desk,
    contract: "DealDesk",
    functionName: "settle",
    args: [[{ nft, tokenId, seller: SELLER, buyer: BUYER, currency: tkn, price: PRICE }]],
  });

  before(async () => {
    anvil = await startAnvil({ chainId: 31337 });
    chain = connectDevChain(anvil.url);
    weth = (await deployArtifact(chain, "WETH9")).address;
    tkn = (await deployArtifact(chain, "TestERC20", ["Token", "TKN"])).address;
    const factory = (await deployArtifact(chain, "UniswapV2Factory", [OWNER])).address;
    await send(chain, {
      address: factory,
      contract: "UniswapV2Factory",
      functionName: "createPair",
      args: [weth, tkn],
    });
    pair = (
      (await chain.publicClient.readContract({
        address: factory,
        abi: loadArtifact("UniswapV2Factory").abi,
        functionName: "getPair",
        args: [weth, tkn],
      })) as Address
    ).toLowerCase() as Address;
    nft = (await deployArtifact(chain, "TestERC721", ["Art", "ART"])).address;
    desk = (await deployArtifact(chain, "DealDesk")).address;
    await send(chain, { address: weth, contract: "WETH9", functionName: "deposit", value: 5_000n * E18 });
    await send(chain, {
      address: tkn,
      contract: "TestERC20",
      functionName: "mint",
      args: [OWNER, 10n ** 8n * E18],
    });
    await readyToTrade(chain, { tkn, desk, nft }, [1n, 2n, 3n, 4n]);
    await send(chain, {
      address: nft,
      contract: "TestERC721",
      functionName: "setApprovalForAll",
      args: [desk, true],
      from: SELLER,
    });
    const latest = await chain.publicClient.getBlock();
    t0 = Number(latest.timestamp) + 100;

    // Fair: 1,000 WETH against 2,000,000 TKN, 2,000 TKN per ETH.
    await oneBlock(chain, t0, [
      { address: weth, contract: "WETH9", functionName: "transfer", args: [pair, 1_000n * E18] },
      { address: tkn, contract: "TestERC20", functionName: "transfer", args: [pair, 2_000_000n * E18] },
      { address: pair, contract: "UniswapV2Pair", functionName: "mint", args: [OWNER] },
    ]);
    /** Mines a block ending with a sale; the pair's reserves after it. */
    const record = async (name: string, time: number, calls: Call[]) => {
      const receipts = await oneBlock(chain, time, calls);
      const last = receipts.at(-1) as TransactionReceipt;
      sales.set(name, { tx: last.transactionHash, block: Number(last.blockNumber), time });
      return reserves(last.blockNumber);
    };
    const fair = await record("fair", t0 + 1_200, [sale(1n)]);
    // Block N: TKN pushed about 4× dearer at the end of the block, around a sale paid in TKN.
    const bought = amountOut(fair.weth, fair.weth, fair.tkn);
    const pushed = await record("pushed block", t0 + 1_800, [...swapIn(weth, fair.weth, bought), sale(2n)]);
    // Block N+1, 12 s later: pushed back first, then a sale.
    const back = await record("next block", t0 + 1_812, [
      ...swapIn(tkn, bought, amountOut(bought, pushed.tkn, pushed.weth)),
      sale(3n),
    ]);
    // A move that lasts: about 4× again, and a sale a window after it.
    await oneBlock(chain, t0 + 1_900, swapIn(weth, back.weth, amountOut(back.weth, back.weth, back.tkn)));
    await record("a window after a lasting move", t0 + 1_900 + WINDOW + 12, [sale(4n)]);

    db = await createTestDatabase();
    const head = (sales.get("a window after a lasting move") as { block: number }).block;
    const indexing = {
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: 31337,
      nativePegged: [weth],
      ratePools: [{ kind: "v2" as const, address: pair }],
      usdTokens: [],
      chain: { rateWindowSeconds: WINDOW },
    };
    // In two runs, the second resuming from the store after the pushed block.
    await indexUntil({ ...indexing, untilBlock: (sales.get("pushed block") as { block: number }).block });
    await indexUntil({ ...indexing, untilBlock: head });
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  async function stored(name: string) {
    const { tx } = sales.get(name) as { tx: Hex };
    const [row] = await db.sql<{ native_value: string; flags: string[] }[]>`
      SELECT p.native_value::text, s.flags
      FROM sales s JOIN sale_payments p USING (chain_id, contract, block_number, log_index, seq, seller)
      WHERE s.tx_hash = decode(${tx.slice(2)}, 'hex')`;
    assert.ok(row, `the ${name} sale is stored`);
    return { value: BigInt(row.native_value), flags: row.flags };
  }

  /**
   * What a sale's TKN was worth over the window ending at its block, from the pair's reserves
   * block by block (each block's state holds until the next block's time), in fixed point with
   * 2^128 fraction bits: rounding far below a wei at these prices.
   */
  async function expectedValue(name: string): Promise<bigint> {
    const { block, time } = sales.get(name) as { block: number; time: number };
    let num = 0n;
    let held = 0n;
    for (let b = block - 1; b >= 0; b--) {
      const start = Number((await chain.publicClient.getBlock({ blockNumber: BigInt(b) })).timestamp);
      const end =
        b + 1 === block
          ? time
          : Number((await chain.publicClient.getBlock({ blockNumber: BigInt(b + 1) })).timestamp);
      const seconds = BigInt(end - Math.max(start, time - WINDOW));
      const r = await reserves(BigInt(b));
      if (seconds > 0n && r.tkn > 0n) {
        num += ((r.weth << 128n) / r.tkn) * seconds;
        held += seconds;
      }
      if (start <= time - WINDOW) break;
    }
    return (PRICE * num) / (held << 128n);
  }

  test("a price pushed at the end of a block prices nothing in that block", async () => {
    const fair = await stored("fair");
    const pushed = await stored("pushed block");
    const block = (sales.get("pushed block") as { block: number }).block;
    const r0 = await reserves(BigInt(block - 1));
    const r1 = await reserves(BigInt(block));
    assert.equal(fair.value, (PRICE * r0.weth) / r0.tkn, "the fair sale at the pair's reserves");
    assert.equal(pushed.value, fair.value, "the sale in the pushed block, at the fair price exactly");
    // What the block's last state says, and what the sale was not priced at.
    const spot = (PRICE * r1.weth) / r1.tkn;
    assert.ok(spot > fair.value * 3n, `the push moved the spot price ${spot} from ${fair.value}`);
    assert.deepEqual([fair.flags, pushed.flags], [[], []]);
  });

  test("in the next block the push weighs its 12 s: within (push - 1) × 12 / 600 of the fair price", async () => {
    const next = await stored("next block");
    const fair = (await stored("fair")).value;
    // The mean over the window, as the reserves give it, to the wei.
    const expected = await expectedValue("next block");
    assert.ok(next.value <= expected && expected - next.value <= 1n, `${next.value} against ${expected}`);
    // The push lasted 12 s of a 600 s window, so it moves the rate by (push - 1) × 2 % at most;
    // pushing back costs the pair's fee twice, which leaves the price about 0.6 % off fair.
    const block = (sales.get("pushed block") as { block: number }).block;
    const p = await reserves(BigInt(block));
    const factor = (p.weth * 2_000_000n) / p.tkn; // the push, in thousandths of the fair price
    const tolerance = (fair * (factor - 1000n) * 12n) / (1000n * BigInt(WINDOW)) + (fair * 10n) / 1000n;
    const off = next.value > fair ? next.value - fair : fair - next.value;
    assert.ok(off <= tolerance, `${next.value} is within ${tolerance} of ${fair}`);
    assert.ok(next.value < fair * 2n, "far below what the push alone would give");
    assert.deepEqual(next.flags, []);
  });

  test("a move that lasts a window is flagged rate_outlier", async () => {
    const moved = await stored("a window after a lasting move");
    const fair = (await stored("fair")).value;
    assert.ok(moved.value > fair * 3n, `the rate followed the move: ${moved.value} against ${fair}`);
    const expected = await expectedValue("a window after a lasting move");
    assert.ok(moved.value <= expected && expected - moved.value <= 1n, `${moved.value} against ${expected}`);
    assert.deepEqual(moved.flags, ["rate_outlier"]);
  });
});

describe("presets chosen by chain id", () => {
  let anvil: Anvil;
  let db: TestDatabase;
  const WETH = defaultNativePegged(1)[0] as Address;

  before(async () => {
    anvil = await startAnvil({ chainId: 1 });
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("a chain of id 1 under another name gets mainnet's pegged tokens; presets the node lacks are warned, counted and left out", async () => {
    const chain = connectDevChain(anvil.url);
    // The node has WETH at its mainnet address, and nothing else of mainnet.
    await chain.testClient.setCode({ address: WETH, bytecode: runtimeCode("WETH9") });
    const nft = (await deployArtifact(chain, "TestERC721", ["Art", "ART"])).address;
    const desk = (await deployArtifact(chain, "DealDesk")).address;
    await send(chain, { address: nft, contract: "TestERC721", functionName: "mint", args: [SELLER, 1n] });
    await send(chain, {
      address: nft,
      contract: "TestERC721",
      functionName: "setApprovalForAll",
      args: [desk, true],
      from: SELLER,
    });
    await send(chain, {
      address: WETH,
      contract: "WETH9",
      functionName: "deposit",
      value: 3n * E18,
      from: BUYER,
    });
    await send(chain, {
      address: WETH,
      contract: "WETH9",
      functionName: "approve",
      args: [desk, 3n * E18],
      from: BUYER,
    });
    const paid = await send(chain, {
      address: desk,
      contract: "DealDesk",
      functionName: "settle",
      args: [[{ nft, tokenId: 1n, seller: SELLER, buyer: BUYER, currency: WETH, price: 3n * E18 }]],
    });

    const { logger, entries } = capturingLogger();
    const metrics = createProcessMetrics();
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: 1,
      untilBlock: Number(paid.blockNumber),
      logger,
      chain: { name: "mainnet-fork" },
      onRateSourcesLeftOut: metrics.setRateSourcesLeftOut,
    });

    const [row] = await db.sql<{ native_value: string | null; flags: string[]; total_native: string }[]>`
      SELECT p.native_value::text, s.flags, s.total_native::text
      FROM sales s JOIN sale_payments p USING (chain_id, contract, block_number, log_index, seq, seller)
      WHERE s.tx_hash = decode(${paid.transactionHash.slice(2)}, 'hex')`;
    assert.deepEqual(row, {
      native_value: (3n * E18).toString(),
      flags: [],
      total_native: (3n * E18).toString(),
    });

    // Every other preset is missing on this node: each named in a warning, and counted.
    const missing = [
      ...defaultPools(1).map((p) => p.address),
      ...defaultUsdTokens(1).map((t) => t.address),
      ...defaultNativePegged(1).filter((a) => a !== WETH),
    ];
    const warned = entries().map((e) => e.msg);
    for (const address of missing) {
      assert.ok(
        warned.some((m) => m.includes(address) && m.includes("left out")),
        `${address} is warned about`,
      );
    }
    assert.ok(!warned.some((m) => m.includes(WETH)), "WETH is followed");
    const text = await metrics.registry.metrics();
    for (const [kind, count] of [
      ["pool", defaultPools(1).length],
      ["usd_token", defaultUsdTokens(1).length],
      ["pegged_token", defaultNativePegged(1).length - 1],
    ] as const) {
      assert.match(
        text,
        new RegExp(`mintlens_rate_sources_left_out\\{chain="mainnet-fork",kind="${kind}"\\} ${count}\\n`),
      );
    }
    const [pools] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM pool_states WHERE chain_id = 1`;
    assert.equal(pools?.n, "0", "no missing pool is followed");
  });

  test("an explicitly configured source that is wrong still stops the start, with the list", async () => {
    const nowhere = "0x00000000000000000000000000000000000000f1" as Address;
    await assert.rejects(
      indexUntil({
        sql: db.sql,
        rpcUrl: anvil.url,
        chainId: 1,
        untilBlock: 1,
        nativePegged: [nowhere],
        ratePools: [{ kind: "v3", address: nowhere }],
      }),
      (error: Error) =>
        error.message.includes(`native-pegged tokens: ${nowhere} is not an ERC-20 token`) &&
        error.message.includes(`rate pools: ${nowhere} is not a Uniswap v3 pool`),
    );
  });
});

describe("the depth floor on the project's V3-compatible test pool", () => {
  let anvil: Anvil;
  let chain: DevChain;
  const dbs: TestDatabase[] = [];
  const Q96 = 1n << 96n;
  const PRICE = 1_000n * E18;
  const DEEP = 10n ** 22n; // 10,000 WETH in range at a price of 1
  let weth: Address;
  let tkn: Address;
  let feed: Address;
  let nft: Address;
  let desk: Address;
  const sales = new Map<string, Hex>();

  before(async () => {
    anvil = await startAnvil({ chainId: 31337 });
    chain = connectDevChain(anvil.url);
    weth = (await deployArtifact(chain, "WETH9")).address;
    tkn = (await deployArtifact(chain, "TestERC20", ["Token", "TKN"])).address;
    feed = (await deployArtifact(chain, "TestPriceFeedPair")).address;
    nft = (await deployArtifact(chain, "TestERC721", ["Art", "ART"])).address;
    desk = (await deployArtifact(chain, "DealDesk")).address;
    await readyToTrade(chain, { tkn, desk, nft }, [1n, 2n]);
    await send(chain, {
      address: nft,
      contract: "TestERC721",
      functionName: "setApprovalForAll",
      args: [desk, true],
      from: SELLER,
    });
    // TKN 16× dearer: √P ×4 when TKN is token0, ÷4 when it is token1.
    const pushed = tkn < weth ? Q96 * 4n : Q96 / 4n;
    const swap = (sqrtPriceX96: bigint, liquidity: bigint): Call => ({
      address: feed,
      contract: "TestPriceFeedPair",
      functionName: "swap",
      args: [sqrtPriceX96, liquidity],
    });
    const sale = (tokenId: bigint): Call => ({
      address: desk,
      contract: "DealDesk",
      functionName: "settle",
      args: [[{ nft, tokenId, seller: SELLER, buyer: BUYER, currency: tkn, price: PRICE }]],
    });
    const t0 = Number((await chain.publicClient.getBlock()).timestamp) + 100;
    await oneBlock(chain, t0, [swap(Q96, DEEP)]);
    // Pushed past every position (nothing left in range) at the end of a block, back in the next.
    const pushedBlock = await oneBlock(chain, t0 + 1_200, [swap(pushed, 0n), sale(1n)]);
    const nextBlock = await oneBlock(chain, t0 + 1_212, [swap(Q96, DEEP), sale(2n)]);
    sales.set("pushed block", (pushedBlock.at(-1) as TransactionReceipt).transactionHash);
    sales.set("next block", (nextBlock.at(-1) as TransactionReceipt).transactionHash);
    const head = Number((nextBlock.at(-1) as TransactionReceipt).blockNumber);
    const [token0, token1] = weth < tkn ? [weth, tkn] : [tkn, weth];
    for (const minDepth of [10n * E18, 0n]) {
      const db = await createTestDatabase();
      dbs.push(db);
      await indexUntil({
        sql: db.sql,
        rpcUrl: anvil.url,
        chainId: 31337,
        untilBlock: head,
        nativePegged: [weth],
        pricing: {
          pools: [{ address: feed, kind: "v3", token0, token1, decimals0: 18, decimals1: 18 }],
          usdTokens: [],
        },
        chain: { rateWindowSeconds: WINDOW, rateMinDepth: minDepth },
      });
    }
  });
  after(async () => {
    for (const db of dbs) await db.close();
    await anvil?.stop();
    await stopTestServer();
  });

  const paidValue = async (db: TestDatabase, name: string) => {
    const tx = sales.get(name) as Hex;
    const [row] = await db.sql<{ v: string }[]>`
      SELECT p.native_value::text AS v
      FROM sales s JOIN sale_payments p USING (chain_id, contract, block_number, log_index, seq, seller)
      WHERE s.tx_hash = decode(${tx.slice(2)}, 'hex')`;
    assert.ok(row, `the ${name} sale is stored`);
    return BigInt(row.v);
  };

  test("a state with nothing in range is left out: the next block's sale is at the fair price exactly", async () => {
    const [floored, open] = dbs as [TestDatabase, TestDatabase];
    // Fair: 1 wei per TKN base unit.
    assert.equal(await paidValue(floored, "pushed block"), PRICE);
    assert.equal(await paidValue(floored, "next block"), PRICE);
    // Without the floor the pushed state weighs its 12 s of 600 at 16 times the price.
    assert.equal(await paidValue(open, "pushed block"), PRICE);
    assert.equal(await paidValue(open, "next block"), (PRICE * (588n + 16n * 12n)) / 600n);
    const [stored] = await floored.sql<{ l: string | null }[]>`
      SELECT liquidity::text AS l FROM pool_states ORDER BY block_number DESC LIMIT 1`;
    assert.equal(stored?.l, DEEP.toString(), "the swap's liquidity is stored");
  });
});
