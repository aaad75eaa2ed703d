import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import { saleClass } from "../../src/core/sale-classes.ts";
import { formatScaled } from "../../src/core/usd.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import { connectDevChain, deployArtifact, devAddress, sendContractTx } from "../../src/devchain/deploy.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";
import { type ExpectedTrade, playSaleScenarios, type SaleScenarioWorld } from "../support/sale-scenarios.ts";

/**
 * The sale scenarios indexed by the real indexer: every trade stored exactly as the scenario says,
 * with its payments, flags and buckets. Attribution alone is checked in sales-scenarios.test.ts.
 */

const CHAIN_ID = 31337;
let anvil: Anvil;
let world: SaleScenarioWorld;
let db: TestDatabase;
let feed: Address;
/** 2,500 USDC per ETH: 5,000,000 USDC against 2,000 WETH. */
const USDC_RESERVE = 5_000_000n * 10n ** 6n;
const WETH_RESERVE = 2_000n * 10n ** 18n;

interface StoredSale {
  kind: string;
  contract: string;
  token_id: string;
  seller: string;
  buyer: string;
  quantity: string;
  native_paid: string;
  fungible_paid: string;
  total_native: string;
  attributed_by: string;
  flags: string[];
  market: string;
  payments: { token: string; amount: string; native_value: string | null }[] | null;
}

async function storedSalesOf(txHash: string): Promise<StoredSale[]> {
  return db.sql<StoredSale[]>`
    SELECT s.kind, '0x' || encode(s.contract, 'hex') AS contract, s.token_id, '0x' || encode(s.seller, 'hex') AS seller,
           '0x' || encode(s.buyer, 'hex') AS buyer, s.quantity, s.native_paid, s.fungible_paid, s.total_native,
           s.attributed_by, s.flags, s.market,
           (SELECT json_agg(json_build_object('token', '0x' || encode(p.token, 'hex'), 'amount', p.amount::text,
                                              'native_value', p.native_value::text) ORDER BY p.token)
            FROM sale_payments p
            WHERE p.chain_id = s.chain_id AND p.contract = s.contract AND p.block_number = s.block_number
              AND p.log_index = s.log_index AND p.seq = s.seq AND p.seller = s.seller) AS payments
    FROM sales s WHERE s.chain_id = ${CHAIN_ID} AND s.tx_hash = decode(${txHash.slice(2)}, 'hex')
    ORDER BY s.log_index, s.seq, s.seller`;
}

function asStored(e: ExpectedTrade) {
  return {
    kind: e.kind,
    contract: e.contract,
    token_id: e.tokenId.toString(),
    seller: e.seller,
    buyer: e.buyer,
    quantity: e.quantity.toString(),
    native_paid: e.native.toString(),
    attributed_by: e.attributedBy,
    payments:
      e.fungible.length === 0
        ? null
        : e.fungible.map((f) => ({ token: f.token, amount: f.amount.toString() })),
  };
}

describe("sales stored by the indexer", () => {
  before(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    const chain = connectDevChain(anvil.url);
    // A price feed logging a USDC/WETH pair's reserves before any sale, from an account the
    // scenarios do not use: which token is which is the indexer's configuration, given below.
    const feeder = devAddress(9);
    feed = (await deployArtifact(chain, "TestPriceFeedPair", [], { from: feeder })).address;
    await sendContractTx(chain, {
      address: feed,
      abi: loadArtifact("TestPriceFeedPair").abi,
      functionName: "sync",
      args: [USDC_RESERVE, WETH_RESERVE],
      from: feeder,
    });
    world = await playSaleScenarios(chain);
    db = await createTestDatabase();
    const response = await fetch(anvil.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
    });
    const head = Number(((await response.json()) as { result: string }).result);
    await indexUntil({
      sql: db.sql,
      rpcUrl: anvil.url,
      chainId: CHAIN_ID,
      untilBlock: head,
      nativePegged: [world.contracts.weth, world.contracts.pool],
      pricing: {
        pools: [
          {
            address: feed,
            kind: "v2",
            token0: world.contracts.usdc,
            token1: world.contracts.weth,
            decimals0: 6,
            decimals1: 18,
          },
        ],
        usdTokens: [{ address: world.contracts.usdc, symbol: "USDC", decimals: 6 }],
      },
    });
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("every scenario's trades are stored as the scenario says, to the wei", async () => {
    const checked: string[] = [];
    for (const scenario of world.scenarios) {
      const stored = await storedSalesOf(scenario.txHash);
      const sorted = [...scenario.expected].sort((a, b) =>
        a.tokenId === b.tokenId ? a.contract.localeCompare(b.contract) : a.tokenId < b.tokenId ? -1 : 1,
      );
      const actual = stored
        .map(
          ({ kind, contract, token_id, seller, buyer, quantity, native_paid, attributed_by, payments }) => ({
            kind,
            contract,
            token_id,
            seller,
            buyer,
            quantity,
            native_paid,
            attributed_by,
            payments: payments?.map(({ token, amount }) => ({ token, amount })) ?? null,
          }),
        )
        .sort((a, b) =>
          a.token_id === b.token_id
            ? a.contract.localeCompare(b.contract)
            : BigInt(a.token_id) < BigInt(b.token_id)
              ? -1
              : 1,
        );
      assert.deepEqual(actual, sorted.map(asStored), scenario.name);
      checked.push(scenario.name);
    }
    assert.ok(checked.length >= 18, `the scenarios were checked (${checked.length})`);
  });

  test("a stablecoin payment is converted at its pool's reserves, and every sale carries its USD value", async () => {
    const { usdc } = world.contracts;
    const rows = await db.sql<{ amount: string; native_value: string | null; flags: string[] }[]>`
      SELECT p.amount::text, p.native_value::text, s.flags
      FROM sale_payments p JOIN sales s USING (chain_id, contract, block_number, log_index, seq, seller)
      WHERE p.token = decode(${usdc.slice(2)}, 'hex')`;
    assert.ok(rows.length > 0, "a sale was paid in the stablecoin");
    for (const r of rows) {
      assert.equal(
        BigInt(r.native_value ?? -1),
        (BigInt(r.amount) * WETH_RESERVE) / USDC_RESERVE,
        "wei, rounded down",
      );
      assert.ok(!r.flags.includes("unpriced"));
    }
    const sales = await db.sql<{ total_native: string; total_usd: string | null }[]>`
      SELECT total_native::text, total_usd::text FROM sales WHERE kind = 'sale'`;
    assert.ok(sales.length > 10);
    for (const s of sales) {
      // USD = wei × 2,500 / 10^18, exact to 10^-18 USD, rounded down.
      const scaled = (BigInt(s.total_native) * USDC_RESERVE * 10n ** 18n) / (WETH_RESERVE * 10n ** 6n);
      assert.equal(s.total_usd, formatScaled(scaled, 18n), `USD of ${s.total_native} wei`);
    }
    const [stored] = await db.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM pool_states WHERE pool = decode(${feed.slice(2)}, 'hex') AND reserve0 = ${USDC_RESERVE.toString()}`;
    assert.equal(stored?.n, "1", "the pool's state is stored");
  });

  test("payments in the wrapped coin and the pegged pool count 1:1", async () => {
    const { weth, pool } = world.contracts;
    const rows = await db.sql<
      { token: string; amount: string; native_value: string | null; flags: string[] }[]
    >`
      SELECT '0x' || encode(p.token, 'hex') AS token, p.amount::text, p.native_value::text, s.flags
      FROM sale_payments p JOIN sales s USING (chain_id, contract, block_number, log_index, seq, seller)`;
    const byToken = (token: Address) => rows.filter((r) => r.token === token);
    assert.ok(byToken(weth).length > 0 && byToken(pool).length > 0);
    for (const r of [...byToken(weth), ...byToken(pool)]) {
      assert.equal(r.native_value, r.amount);
      assert.ok(!r.flags.includes("unpriced"));
    }
    const [totals] = await db.sql<{ bad: string }[]>`
      SELECT count(*) AS bad FROM sales WHERE total_native <> native_paid + fungible_paid`;
    assert.equal(totals?.bad, "0", "every total is its native part plus its converted part");
  });

  test("both legs of a wash pair are flagged: the second as it is seen, the first by a verdict after it", async () => {
    const first = world.scenarios.find((s) => s.name === "9 wash pair, first leg");
    const second = world.scenarios.find((s) => s.name === "9 wash pair, second leg");
    assert.ok(first && second);
    const [a] = await storedSalesOf(first.txHash);
    const [b] = await storedSalesOf(second.txHash);
    assert.deepEqual(a?.flags, ["wash_cycle"]);
    assert.deepEqual(b?.flags, ["wash_cycle"]);
    const verdicts = await db.sql<{ rule: string; by: string }[]>`
      SELECT v.rule, '0x' || encode(t.tx_hash, 'hex') AS by
      FROM sale_verdicts v JOIN sales s USING (chain_id, block_number, log_index, seq, seller)
      JOIN sales t ON t.chain_id = v.chain_id AND t.block_number = v.verdict_block AND t.contract = s.contract
        AND t.token_id = s.token_id
      WHERE s.tx_hash = decode(${first.txHash.slice(2)}, 'hex')`;
    assert.deepEqual(
      [...verdicts],
      [{ rule: "wash_cycle", by: second.txHash }],
      "given by the second leg's block",
    );
  });

  test("the store's sale classes are the indexer's, for every combination of flags", async () => {
    const FLAGS = ["wash_cycle", "wash_self", "wash", "rate_outlier", "unpriced", "tx_value"];
    // Every subset of the flags: 2^6 combinations, each a bit pattern.
    const combinations = Array.from({ length: 2 ** FLAGS.length }, (_, bits) =>
      FLAGS.filter((_, k) => (bits >> k) & 1),
    );
    const rows = await db.sql<{ i: number; class: string }[]>`
      SELECT u.i::int AS i, mintlens_sale_class(string_to_array(u.f, ',')) AS class
      FROM unnest(${combinations.map((c) => c.join(","))}::text[]) WITH ORDINALITY AS u(f, i)`;
    assert.equal(rows.length, 64);
    for (const r of rows) {
      const flags = combinations[r.i - 1] as string[];
      assert.equal(r.class, saleClass(flags), flags.join(","));
    }
  });

  test("every leg of a rotation through three wallets is flagged; a sale without a rate is unpriced", async () => {
    const flagsOf = async (name: string) => {
      const played = world.scenarios.find((s) => s.name === name);
      assert.ok(played, name);
      return (await storedSalesOf(played.txHash)).map((s) => s.flags);
    };
    const legs = ["first", "second", "third"].map((leg) => `21 rotation through three wallets, ${leg} leg`);
    assert.deepEqual(await Promise.all(legs.map(flagsOf)), [
      [["wash_cycle"]],
      [["wash_cycle"]],
      [["wash_cycle"]],
    ]);
    assert.deepEqual(await flagsOf("20 sale paid in a token without a rate"), [["unpriced"]]);
  });

  test("funding shortly before a sale flags it, from the seller or a common funder, but not from an exchange", async () => {
    const flagsOf = async (name: string) => {
      const played = world.scenarios.find((s) => s.name === name);
      assert.ok(played, name);
      return (await storedSalesOf(played.txHash)).map((s) => s.flags);
    };
    assert.deepEqual(await flagsOf("22 buyer and seller funded by one account shortly before"), [
      ["wash_funder"],
    ]);
    assert.deepEqual(await flagsOf("23 the seller sends the buyer WETH before the sale"), [["wash_funder"]]);
    assert.deepEqual(await flagsOf("24 an exchange pays out to twelve accounts, two of which trade"), [[]]);
  });

  test("proceeds handed back to the buyer's funder flag the sale, later or in its own transaction", async () => {
    const verdictsOf = async (name: string) => {
      const played = world.scenarios.find((s) => s.name === name);
      assert.ok(played, name);
      const rows = await db.sql<{ flags: string[]; rules: string[]; given_after: boolean }[]>`
        SELECT s.flags, array(SELECT v.rule FROM sale_verdicts v
                              WHERE v.chain_id = s.chain_id AND v.block_number = s.block_number
                                AND v.log_index = s.log_index AND v.seq = s.seq AND v.seller = s.seller) AS rules,
               coalesce((SELECT bool_and(v.verdict_block > s.block_number) FROM sale_verdicts v
                         WHERE v.chain_id = s.chain_id AND v.block_number = s.block_number
                           AND v.log_index = s.log_index AND v.seq = s.seq AND v.seller = s.seller), false) AS given_after
        FROM sales s WHERE s.tx_hash = decode(${played.txHash.slice(2)}, 'hex')`;
      return [...rows];
    };
    assert.deepEqual(await verdictsOf("25 the seller hands the proceeds back to the buyer's funder"), [
      { flags: ["wash_returned"], rules: ["wash_returned"], given_after: true },
    ]);
    assert.deepEqual(
      await verdictsOf(
        "26 a seller's Safe forwards the proceeds to the buyer's funder in the sale's transaction",
      ),
      [{ flags: ["wash_returned"], rules: ["wash_returned"], given_after: false }],
    );
    // The exchange's customer deposits its proceeds back at the exchange that paid the buyer out.
    assert.deepEqual(await verdictsOf("24 an exchange pays out to twelve accounts, two of which trade"), [
      { flags: [], rules: [], given_after: false },
    ]);
  });

  test("false positives and misses counted: every wash case flagged, no honest case", async (t) => {
    // The cases that are wash trades; every other sale of the scenarios is between independent
    // parties (plain sales, bundles, sweeps, swaps, smart accounts, loans, an exchange's customers,
    // a buyback a month later).
    const WASH = new Set([
      "9 wash pair, first leg",
      "9 wash pair, second leg",
      "21 rotation through three wallets, first leg",
      "21 rotation through three wallets, second leg",
      "21 rotation through three wallets, third leg",
      "22 buyer and seller funded by one account shortly before",
      "23 the seller sends the buyer WETH before the sale",
      "25 the seller hands the proceeds back to the buyer's funder",
      "26 a seller's Safe forwards the proceeds to the buyer's funder in the sale's transaction",
    ]);
    const falsePositives: string[] = [];
    const missed: string[] = [];
    let [wash, honest] = [0, 0];
    for (const played of world.scenarios) {
      for (const sale of await storedSalesOf(played.txHash)) {
        if (sale.kind !== "sale") continue;
        const flagged = sale.flags.some((f) => f.startsWith("wash"));
        if (WASH.has(played.name)) {
          wash++;
          if (!flagged) missed.push(played.name);
        } else {
          honest++;
          if (flagged) falsePositives.push(`${played.name}: ${sale.flags.join(",")}`);
        }
      }
    }
    t.diagnostic(
      `wash rules: ${wash} wash sales, ${missed.length} missed; ${honest} honest sales, ${falsePositives.length} flagged`,
    );
    assert.ok(wash >= WASH.size && honest >= 20, `${wash} wash and ${honest} honest sales`);
    assert.deepEqual(falsePositives, [], "honest sales flagged");
    assert.deepEqual(missed, [], "wash sales not flagged");
  });

  test("the buckets hold every sale by class: count, units, volume and the extreme unit prices", async () => {
    // The class of each stored sale, worked out here from its flags: a wash rule or a rate outlier
    // makes it flagged, a payment without a rate unpriced, anything else organic.
    const sales = await db.sql<{ contract: string; bucket: string; flags: string[]; q: string; v: string }[]>`
      SELECT encode(contract, 'hex') AS contract,
             extract(epoch FROM date_bin('15 minutes', block_time, TIMESTAMPTZ 'epoch'))::bigint::text AS bucket,
             flags, quantity::text AS q, total_native::text AS v
      FROM sales WHERE chain_id = ${CHAIN_ID} AND kind = 'sale'`;
    type Figures = { n: bigint; u: bigint; v: bigint; lo: bigint | null; hi: bigint | null };
    const none = (): Figures => ({ n: 0n, u: 0n, v: 0n, lo: null, hi: null });
    const expected = new Map<string, { organic: Figures; flagged: Figures; unpriced: Figures }>();
    for (const sale of sales) {
      const key = `${sale.contract}:${sale.bucket}`;
      const bucket = expected.get(key) ?? { organic: none(), flagged: none(), unpriced: none() };
      expected.set(key, bucket);
      const f = bucket[saleClass(sale.flags)];
      const [q, v] = [BigInt(sale.q), BigInt(sale.v)];
      f.n += 1n;
      f.u += q;
      f.v += v;
      if (f.lo === null || v / q < f.lo) f.lo = v / q;
      if (f.hi === null || v / q > f.hi) f.hi = v / q;
    }
    const stored = await db.sql<{ contract: string; bucket: string; figures: string[] }[]>`
      SELECT encode(contract, 'hex') AS contract, extract(epoch FROM bucket_start)::bigint::text AS bucket,
             ARRAY[sales::text, sold_units::text, volume::text, coalesce(min_unit_price::text, ''),
                   coalesce(max_unit_price::text, ''), flagged_sales::text, flagged_units::text, flagged_volume::text,
                   coalesce(flagged_min_unit_price::text, ''), coalesce(flagged_max_unit_price::text, ''),
                   unpriced_sales::text, unpriced_units::text] AS figures
      FROM collection_buckets
      WHERE chain_id = ${CHAIN_ID} AND sales + flagged_sales + unpriced_sales > 0`;
    // An array element that is NULL comes back as '': no sale of the class in the bucket.
    const text = (v: bigint | null) => (v === null ? "" : v.toString());
    assert.deepEqual(
      new Map(stored.map((r) => [`${r.contract}:${r.bucket}`, r.figures])),
      new Map(
        [...expected].map(([key, { organic: o, flagged: f, unpriced: p }]) => [
          key,
          [o.n, o.u, o.v, o.lo, o.hi, f.n, f.u, f.v, f.lo, f.hi, p.n, p.u].map(text),
        ]),
      ),
    );
    const classes = new Set(sales.map((s) => saleClass(s.flags)));
    assert.deepEqual(
      [...classes].sort(),
      ["flagged", "organic", "unpriced"],
      "the scenarios have sales of every class",
    );
    const [unsold] = await db.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM collection_buckets b WHERE sales > 0 AND NOT EXISTS (
        SELECT 1 FROM sales s WHERE s.kind = 'sale' AND s.contract = b.contract
          AND date_bin('15 minutes', s.block_time, TIMESTAMPTZ 'epoch') = b.bucket_start)`;
    assert.equal(unsold?.n, "0");
  });
});
