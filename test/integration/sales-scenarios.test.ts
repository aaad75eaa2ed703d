import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { connectDevChain, type DevChain } from "../../src/devchain/deploy.ts";
import { attributeTransaction } from "../../src/sales/attribute.ts";
import type { SaleTransaction, Trade } from "../../src/sales/types.ts";
import {
  ACTORS,
  AGGREGATOR_FEES,
  bidLookup,
  ELSEWHERE,
  type ExpectedTrade,
  playSaleScenarios,
  type SaleScenario,
  type SaleScenarioWorld,
  saleTransactionOf,
  USER_OP_PREFUND,
} from "../support/sale-scenarios.ts";

/** Every case, in the order it is played. */
const names = [
  "1 plain sale through a market taking fee and royalty",
  "2 accepted WETH bid",
  "3 sale paid in a 6-decimals stablecoin",
  "4 bundle of three tokens of one collection",
  "5 bundle across two collections",
  "6 sweep of three sellers through an aggregator",
  "6b sweep across collections with different royalties",
  "7 overpayment refunded",
  "8 NFT through an arbitrage relay",
  "9 NFT lent and returned in one transaction",
  "9 wash pair, first leg",
  "9 wash pair, second leg",
  "10 five units of one ERC-1155 id",
  "11 paid mint",
  "12 gift",
  "12 NFT-for-NFT swap",
  "12 reverted purchase",
  "13 buyPunk",
  "13 acceptBidForPunk",
  "14 bid paid in a pegged pool token",
  "15 ERC-4337 account buys and sends money elsewhere",
  "16 swap and buy through a router",
  "17 multisend buys one NFT and sends money elsewhere",
  "18 buy now, pay later: a lender pays most of the price",
  "19 bought with any token through an aggregator",
  "20 sale paid in a token without a rate",
  "21 rotation through three wallets, first leg",
  "21 rotation through three wallets, second leg",
  "21 rotation through three wallets, third leg",
  "22 buyer and seller funded by one account shortly before",
  "23 the seller sends the buyer WETH before the sale",
  "24 an exchange pays out to twelve accounts, two of which trade",
  "25 the seller hands the proceeds back to the buyer's funder",
  "26 a seller's Safe forwards the proceeds to the buyer's funder in the sale's transaction",
  "27 a collector buys back, a month later, a token it sold",
];

let anvil: Anvil;
let chain: DevChain;
let world: SaleScenarioWorld;

function project(trade: Trade): ExpectedTrade {
  const { kind, contract, tokenId, seller, buyer, quantity, native, fungible, attributedBy } = trade;
  return { kind, contract, tokenId, seller, buyer, quantity, native, fungible: [...fungible], attributedBy };
}

/**
 * What each case must have put on chain for its expectation to mean anything: a refund that
 * really moved, a hop that really happened, a seller that really got no ETH.
 */
const premises: Record<string, (tx: SaleTransaction | undefined) => void> = {
  "6 sweep of three sellers through an aggregator": (tx) => {
    const { aggregator } = world.contracts;
    assert.ok(
      tx?.native?.some((n) => n.from === aggregator && n.to === tx.from && n.value === 150n * 10n ** 15n),
    );
    assert.equal(tx?.nft.length, 6, "each token goes to the aggregator, then on to the buyer");
  },
  "7 overpayment refunded": (tx) => {
    const { escrow } = world.contracts;
    assert.ok(
      tx?.native?.some((n) => n.from === escrow && n.to === tx.from && n.value === 200n * 10n ** 15n),
    );
  },
  "8 NFT through an arbitrage relay": (tx) => {
    assert.deepEqual(
      tx?.nft.map((n) => [n.from, n.to]),
      [
        [ACTORS.alice, world.contracts.relay],
        [world.contracts.relay, ACTORS.erin],
      ],
    );
  },
  "9 NFT lent and returned in one transaction": (tx) => {
    assert.equal(tx?.nft.length, 2);
  },
  "15 ERC-4337 account buys and sends money elsewhere": (tx) => {
    const { account, entryPoint } = world.contracts;
    const moved = (from: string, to: string, value: bigint) =>
      tx?.native?.some((n) => n.from === from && n.to === to && n.value === value);
    assert.ok(moved(account, entryPoint, USER_OP_PREFUND), "the gas prefund");
    assert.ok(moved(account, ELSEWHERE, 50n * 10n ** 18n), "the money sent elsewhere");
    assert.ok(
      tx?.native?.some((n) => n.from === entryPoint && n.to === ACTORS.bot && n.value > 0n),
      "the bundler's pay",
    );
  },
  "16 swap and buy through a router": (tx) => {
    const { router, usdc, weth } = world.contracts;
    assert.ok(
      tx?.fungible.some((f) => f.contract === usdc && f.from === ACTORS.dave && f.amount === 4_000_000_000n),
    );
    assert.ok(
      tx?.fungible.some((f) => f.contract === weth && f.to === router),
      "the pair paid the router WETH",
    );
    assert.ok(
      tx?.native?.some((n) => n.from === weth && n.to === router),
      "the router unwrapped it",
    );
    assert.deepEqual(
      tx?.nft.map((n) => [n.from, n.to]),
      [
        [ACTORS.alice, router],
        [router, ACTORS.dave],
      ],
    );
  },
  "17 multisend buys one NFT and sends money elsewhere": (tx) => {
    const { safe } = world.contracts;
    assert.ok(tx?.native?.some((n) => n.from === safe && n.to === ELSEWHERE && n.value === 50n * 10n ** 18n));
    assert.ok(tx?.native?.some((n) => n.from === safe && n.to === ACTORS.bob && n.value === 3n * 10n ** 18n));
  },
  "26 a seller's Safe forwards the proceeds to the buyer's funder in the sale's transaction": (tx) => {
    const { sellerSafe, weth } = world.contracts;
    const paid = tx?.fungible.find((f) => f.contract === weth && f.to === sellerSafe);
    assert.ok(paid, "the buyer paid the Safe in WETH");
    assert.ok(
      tx?.fungible.some((f) => f.contract === weth && f.from === sellerSafe && f.amount === paid.amount),
      "the Safe passed all of it on in the same transaction",
    );
  },
  "18 buy now, pay later: a lender pays most of the price": (tx) => {
    const { loans, weth } = world.contracts;
    assert.ok(
      tx?.fungible.some(
        (f) =>
          f.contract === weth && f.from === ACTORS.erin && f.to === loans && f.amount === 8n * 10n ** 18n,
      ),
      "the lender's WETH",
    );
    assert.equal(tx?.value, 2n * 10n ** 18n, "the borrower's part");
    assert.equal(tx?.nft.at(-1)?.to, loans, "the desk keeps the NFT");
  },
  "19 bought with any token through an aggregator": (tx) => {
    const { anyToken, usdc } = world.contracts;
    assert.ok(
      tx?.fungible.some(
        (f) =>
          f.contract === usdc && f.from === anyToken && f.to === AGGREGATOR_FEES && f.amount === 40_000_000n,
      ),
      "the aggregator's fee",
    );
  },
  "13 buyPunk": (tx) => {
    assert.ok(
      tx?.native?.every((n) => n.to === world.contracts.punks),
      "the seller is credited, not paid",
    );
  },
  "13 acceptBidForPunk": (tx) => {
    assert.deepEqual(tx?.native, []);
    assert.equal(tx?.markets[0]?.punk?.value, 0n, "the original contract logs the accepted bid as 0");
  },
};

async function attributed(scenario: SaleScenario): Promise<{ tx?: SaleTransaction; trades: Trade[] }> {
  const tx = await saleTransactionOf(chain, scenario.txHash, world.typesOf, world.contracts.punks);
  return { tx, trades: tx ? attributeTransaction(tx, bidLookup(scenario.bids)) : [] };
}

describe("sale attribution on scenarios played on a dev chain", () => {
  before(async () => {
    anvil = await startAnvil();
    chain = connectDevChain(anvil.url);
    world = await playSaleScenarios(chain);
  });

  after(async () => {
    await anvil?.stop();
  });

  test("the scenarios were all played", () => {
    assert.deepEqual(
      world.scenarios.map((s) => s.name),
      names,
    );
    for (const name of Object.keys(premises)) assert.ok(names.includes(name), name);
  });

  for (const name of names) {
    test(name, async () => {
      const scenario = world.scenarios.find((s) => s.name === name);
      assert.ok(scenario, `no scenario named ${name}`);
      const { tx, trades } = await attributed(scenario);
      premises[name]?.(tx);
      if (scenario.reverted) assert.equal(tx, undefined, "a reverted transaction moved no NFT");
      assert.deepEqual(trades.map(project), scenario.expected);
      for (const trade of trades) {
        assert.equal(trade.txHash, scenario.txHash);
        assert.equal(trade.priceFromTransactionValue, false);
        assert.equal(trade.market, trade.contract === world.contracts.punks ? "cryptopunks" : "");
        // The trade's event is the transfer that delivered the NFT to its buyer.
        const delivery = tx?.nft.find((n) => n.logIndex === trade.logIndex && n.seq === trade.seq);
        assert.equal(delivery?.to, trade.buyer);
      }
    });
  }
});
