import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decodeEventLog, keccak256, stringToHex } from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { HistorySummary } from "../../src/demo/activity.ts";
import { PAID_MINT_PRICE } from "../../src/demo/markets/paid-mint.ts";
import { JsonRpc } from "../../src/demo/rpc.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import { resolvePricing } from "../../src/indexer/pricing.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil, testChain } from "../support/indexing.ts";

/**
 * The demo's trading, indexed by the real indexer with the demo's own pricing configuration: every
 * kind of sale it plans is stored, with its market, payments and prices.
 */

const CHAIN_ID = 31337;
const GENESIS = 1_700_000_000;
let anvil: Anvil;
let rpc: JsonRpc;
let db: TestDatabase;
let history: HistorySummary;

interface Sale {
  tx: Hex;
  block: string;
  kind: string;
  contract: Address;
  token_id: string;
  seller: Address;
  buyer: Address;
  native_paid: string;
  total_native: string;
  total_usd: string | null;
  attributed_by: string;
  flags: string[];
  market: string;
  payments: { token: Address; amount: string; native_value: string | null }[] | null;
}
let sales: Sale[];

interface SeaportFulfilled {
  offer: readonly { token: Address; identifier: bigint; amount: bigint }[];
  consideration: readonly { amount: bigint }[];
}

const hex = (column: string) => `'0x' || encode(${column}, 'hex')`;

describe("the demo's trading, indexed", () => {
  before(async () => {
    ({ anvil, history } = await startHistoryChain({
      chainId: CHAIN_ID,
      seed: "trading",
      days: 60,
      genesis: GENESIS,
      // Pool reserves are read at the blocks of the sales.
      historicalStates: true,
    }));
    rpc = new JsonRpc(anvil.url);
    const { contracts } = history;
    db = await createTestDatabase();
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      untilBlock: history.blocks.last,
      // As the demo configures its chain: the pools are described by the node.
      nativePegged: [contracts.weth.address],
      ratePools: [
        { kind: "v2", address: contracts.wethStablePool.address },
        { kind: "v2", address: contracts.tokenWethPool.address },
      ],
      usdTokens: [contracts.stablecoin.address],
    });
    sales = await db.sql.unsafe<Sale[]>(`
      SELECT ${hex("s.tx_hash")} AS tx, s.block_number::text AS block, s.kind, ${hex("s.contract")} AS contract,
             s.token_id::text, ${hex("s.seller")} AS seller, ${hex("s.buyer")} AS buyer, s.native_paid::text, s.total_native::text,
             s.total_usd::text, s.attributed_by, s.flags, s.market,
             (SELECT json_agg(json_build_object('token', ${hex("p.token")}, 'amount', p.amount::text,
                                                'native_value', p.native_value::text))
              FROM sale_payments p
              WHERE p.chain_id = s.chain_id AND p.contract = s.contract AND p.block_number = s.block_number
                AND p.log_index = s.log_index AND p.seq = s.seq AND p.seller = s.seller) AS payments
      FROM sales s WHERE s.chain_id = ${CHAIN_ID}`);
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  const paidIn = (s: Sale, token: Address) => s.payments?.some((p) => p.token === token) ?? false;

  test("the pricing configuration is read from the chain, and an address that is no pool is refused", async () => {
    const { contracts } = history;
    const client = createChainClient({ url: anvil.url, retries: 1 });
    try {
      const pricing = await resolvePricing(
        client,
        testChain(anvil.url, CHAIN_ID, {
          ratePools: [{ kind: "v2", address: contracts.wethStablePool.address }],
          usdTokens: [contracts.stablecoin.address],
        }),
      );
      const [weth, dollar] = [contracts.weth.address, contracts.stablecoin.address];
      const pool = pricing.pools[0];
      assert.deepEqual(new Set([pool?.token0, pool?.token1]), new Set([weth, dollar]));
      assert.equal(pool?.token0 === weth ? pool.decimals1 : pool?.decimals0, 6);
      assert.deepEqual(pricing.usdTokens, [{ address: dollar, symbol: "DUSD", decimals: 6 }]);
      await assert.rejects(
        resolvePricing(
          client,
          testChain(anvil.url, CHAIN_ID, { ratePools: [{ kind: "v2", address: contracts.seaport.address }] }),
        ),
        new RegExp(`rate pools: ${contracts.seaport.address} is not a Uniswap v2 pool`),
      );
    } finally {
      await client.close();
    }
  });

  test("Seaport sales: listings in ETH and dollars, WETH offers accepted by their seller, several orders at once", async () => {
    const { counts, contracts } = history;
    const seaport = sales.filter((s) => s.kind === "sale" && s.market === "seaport");
    assert.ok(counts.seaportSales > 0 && counts.seaportStableSales > 0 && counts.seaportOfferSales > 0);
    assert.ok(counts.seaportSweeps > 0, "a multi-order fill was planned");
    assert.equal(
      seaport.length,
      counts.seaportSales + counts.seaportStableSales + counts.seaportOfferSales + counts.seaportSweptTokens,
    );
    const offers = seaport.filter((s) => paidIn(s, contracts.weth.address));
    assert.equal(offers.length, counts.seaportOfferSales);
    for (const s of offers) {
      // The seller sent the transaction; the WETH counts 1:1.
      const tx = await rpc.call<{ from: Address }>("eth_getTransactionByHash", [s.tx]);
      assert.equal(tx.from.toLowerCase(), s.seller);
      assert.equal(s.total_native, s.payments?.[0]?.amount);
    }
    // A basic ETH listing: the buyer's value, to the wei, is the price stored.
    const single = seaport.filter(
      (s) => s.attributed_by === "ATTRIBUTED_BY_SINGLE_TRANSFER" && s.payments === null,
    );
    assert.ok(single.length > 0);
    for (const s of single) {
      const tx = await rpc.call<{ value: Hex }>("eth_getTransactionByHash", [s.tx]);
      assert.equal(BigInt(tx.value).toString(), s.native_paid);
    }
    // Several orders filled at once: each NFT is priced at its own order's consideration, as the
    // order's OrderFulfilled event (decoded here with Seaport's own ABI) states it.
    const swept = seaport.filter((s) => s.attributed_by === "ATTRIBUTED_BY_MARKET_EVENT");
    assert.equal(swept.length, counts.seaportSweptTokens);
    const { abi } = loadArtifact("Seaport");
    for (const s of swept) {
      const receipt = await rpc.call<{ logs: { address: Address; topics: [Hex, ...Hex[]]; data: Hex }[] }>(
        "eth_getTransactionReceipt",
        [s.tx],
      );
      const orders = receipt.logs
        .filter((log) => log.address.toLowerCase() === contracts.seaport.address)
        .map((log) => decodeEventLog({ abi, data: log.data, topics: log.topics }))
        .filter((event) => event.eventName === "OrderFulfilled")
        .map((event) => event.args as unknown as SeaportFulfilled);
      const order = orders.find((o) =>
        o.offer.some(
          (item) => item.token.toLowerCase() === s.contract && item.identifier.toString() === s.token_id,
        ),
      );
      assert.ok(order, `an order sold ${s.contract} #${s.token_id}`);
      const price = order.consideration.reduce((sum, item) => sum + item.amount, 0n);
      assert.equal(s.native_paid, price.toString(), `${s.contract} #${s.token_id}`);
    }
    assert.ok(new Set(swept.map((s) => s.native_paid)).size > 1, "the swept orders had different prices");
  });

  test("dollar payments are converted through the demo's pair at its reserves of that block", async () => {
    const { contracts } = history;
    const dollar = contracts.stablecoin.address;
    const weth = contracts.weth.address;
    const paid = sales.filter((s) => s.kind === "sale" && paidIn(s, dollar));
    assert.ok(paid.length > 0);
    const [token0] = await rpc
      .call<Hex>("eth_call", [{ to: contracts.wethStablePool.address, data: "0x0dfe1681" }, "latest"])
      .then((w) => [`0x${w.slice(26)}` as Address]);
    for (const s of paid) {
      const reserves = await rpc.call<Hex>("eth_call", [
        { to: contracts.wethStablePool.address, data: "0x0902f1ac" },
        `0x${BigInt(s.block).toString(16)}`,
      ]);
      const r0 = BigInt(`0x${reserves.slice(2, 66)}`);
      const r1 = BigInt(`0x${reserves.slice(66, 130)}`);
      const [reserveWeth, reserveDollar] = token0 === weth ? [r0, r1] : [r1, r0];
      const payment = s.payments?.find((p) => p.token === dollar);
      const amount = BigInt(payment?.amount ?? -1);
      assert.equal(payment?.native_value, ((amount * reserveWeth) / reserveDollar).toString(), s.tx);
      assert.equal(s.total_native, payment?.native_value);
      assert.ok(!s.flags.includes("unpriced"));
      assert.notEqual(s.total_usd, null);
    }
    // The rate moved over the months: the pair's swaps left different reserves behind.
    const blocks = new Set(paid.map((s) => s.block));
    assert.ok(blocks.size > 1);
    // The other token is priced through its pair with WETH.
    const token = contracts.erc20.address;
    const inToken = sales.filter((s) => s.kind === "sale" && paidIn(s, token));
    assert.ok(inToken.length > 0);
    for (const s of inToken) assert.ok(BigInt(s.total_native) > 0n && s.total_usd !== null, s.tx);
  });

  test("escrow-market bundles, aggregator sweeps with different prices, and a refund priced net", async () => {
    const { counts, contracts } = history;
    const bundles = sales.filter(
      (s) =>
        s.attributed_by === "ATTRIBUTED_BY_SAME_CONTRACT_AVERAGE" ||
        s.attributed_by === "ATTRIBUTED_BY_MULTI_CONTRACT_AVERAGE",
    );
    assert.ok(counts.escrowBundles > 0 && bundles.length >= 2);
    const sweeps = new Map<Hex, Sale[]>();
    for (const s of sales.filter(
      (s) => s.attributed_by === "ATTRIBUTED_BY_SELLER_PROCEEDS" && s.market === "",
    )) {
      sweeps.set(s.tx, [...(sweeps.get(s.tx) ?? []), s]);
    }
    assert.ok(counts.escrowSweeps > 0 && sweeps.size === counts.escrowSweeps);
    const priced = [...sweeps.values()].filter((group) => new Set(group.map((s) => s.native_paid)).size > 1);
    assert.ok(priced.length > 0, "a sweep whose NFTs sold at different prices");
    for (const group of sweeps.values()) assert.ok(new Set(group.map((s) => s.seller)).size > 1);

    // Refunds: the buyer sent more than the listing's price and the market sent the change back.
    const bought = keccak256(stringToHex("Bought(uint256,address,uint256)"));
    let refunds = 0;
    for (const s of sales.filter(
      (s) => s.attributed_by === "ATTRIBUTED_BY_SINGLE_TRANSFER" && s.market === "",
    )) {
      const tx = await rpc.call<{ to: Address; value: Hex }>("eth_getTransactionByHash", [s.tx]);
      if (tx.to.toLowerCase() !== contracts.escrow.address) continue;
      const receipt = await rpc.call<{ logs: { topics: Hex[]; data: Hex }[] }>("eth_getTransactionReceipt", [
        s.tx,
      ]);
      const price = BigInt(`0x${receipt.logs.find((l) => l.topics[0] === bought)?.data.slice(2, 66)}`);
      assert.equal(s.native_paid, price.toString(), "the price, net of any change");
      if (BigInt(tx.value) > price) refunds++;
    }
    assert.ok(counts.escrowRefunds > 0 && refunds > 0);
  });

  test("wash pairs, punk sales and accepted punk bids, and paid mints", async () => {
    const { counts, contracts } = history;
    assert.ok(counts.washPairs > 0);
    // The second leg of a pair flags itself, and its first leg by a verdict.
    assert.ok(sales.filter((s) => s.flags.includes("wash_cycle")).length >= counts.washPairs);
    const [verdicts] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM sale_verdicts WHERE rule = 'wash_cycle'`;
    assert.ok((verdicts?.n ?? 0) > 0, "first legs flagged after the fact");
    const punks = sales.filter((s) => s.contract === contracts.punks.address && s.kind === "sale");
    assert.ok(counts.punkSales > 0 && counts.punkBidSales > 0);
    assert.equal(punks.length, counts.punkSales + counts.punkBidSales);
    assert.ok(punks.every((s) => s.market === "cryptopunks" && BigInt(s.native_paid) > 0n));
    const mints = sales.filter((s) => s.contract === contracts.paidMint.address);
    assert.equal(mints.length, counts.paidMints);
    assert.ok(mints.length > 0);
    for (const m of mints) {
      assert.equal(m.kind, "mint");
      assert.equal(m.native_paid, PAID_MINT_PRICE.toString());
    }
    const [sold] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM sales WHERE kind = 'sale'`;
    assert.ok(Number(sold?.n) > 100);
  });
});
