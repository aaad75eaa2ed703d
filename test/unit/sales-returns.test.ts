import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ValueFlow } from "../../src/core/types.ts";
import { FlowMemory } from "../../src/indexer/flow-memory.ts";
import { ReturnWatch, type WatchedSale } from "../../src/indexer/return-watch.ts";
import { RETURN_LOOKAHEAD } from "../../src/sales/returns.ts";
import { MAX_FANOUT } from "../../src/sales/wash.ts";

const account = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const [SELLER, BUYER, FUNDER, OTHER, NFT] = [1, 2, 3, 4, 0x7f].map(account) as [
  Address,
  Address,
  Address,
  Address,
  Address,
];
const ETH = 10n ** 18n;
const T0 = 1_700_000_000;
/** Blocks twelve seconds apart; the sale is in block 100, transaction 5. */
const timeOf = (block: number) => T0 + block * 12;

function flow(
  from: Address,
  to: Address,
  value: bigint,
  block: number,
  txIndex = 0,
  inTrade = false,
): ValueFlow {
  return {
    from,
    to,
    token: null,
    value,
    blockNumber: block,
    txIndex,
    time: timeOf(block),
    ...(inTrade ? { inTrade: true as const } : {}),
  };
}

function sale(tokenSeq: number, price: bigint, flags: string[] = []): WatchedSale {
  return {
    contract: NFT,
    blockNumber: 100,
    logIndex: tokenSeq,
    seq: 0,
    seller: SELLER,
    buyer: BUYER,
    txHash: `0x${"ab".repeat(32)}` as Hex,
    txIndex: 5,
    time: timeOf(100),
    totalNative: price,
    flags,
  };
}

/** The verdicts of `after` on a deal of `sales`, with `before` as the flows before it. */
function verdictsOf(sales: WatchedSale[], before: ValueFlow[], after: ValueFlow[]) {
  const memory = new FlowMemory();
  memory.add(before);
  const watch = new ReturnWatch();
  watch.add(sales, memory);
  return watch.observe(after).map((v) => `${v.sale.logIndex}@${v.blockNumber}:${v.txIndex}:${v.rule}`);
}

describe("the proceeds-returned rule", () => {
  test("the seller hands half the price or more back to the buyer within the hour", () => {
    assert.deepEqual(verdictsOf([sale(1, 10n * ETH)], [], [flow(SELLER, BUYER, 10n * ETH, 110)]), [
      "1@110:0:wash_returned",
    ]);
    assert.deepEqual(verdictsOf([sale(1, 10n * ETH)], [], [flow(SELLER, BUYER, 5n * ETH, 110)]), [
      "1@110:0:wash_returned",
    ]);
    assert.deepEqual(
      verdictsOf(
        [sale(1, 10n * ETH)],
        [],
        [flow(SELLER, BUYER, 3n * ETH, 110), flow(SELLER, BUYER, 2n * ETH, 120, 3)],
      ),
      ["1@120:3:wash_returned"],
      "given at the payment that makes it half",
    );
  });

  test("a bundle is one deal: each of its sales is flagged, against the bundle's price", () => {
    const bundle = [sale(1, 4n * ETH), sale(2, 6n * ETH)];
    assert.deepEqual(verdictsOf(bundle, [], [flow(SELLER, BUYER, 5n * ETH, 101)]), [
      "1@101:0:wash_returned",
      "2@101:0:wash_returned",
    ]);
    assert.deepEqual(verdictsOf(bundle, [], [flow(SELLER, BUYER, 4n * ETH, 101)]), []);
  });

  test("to the account that funded the buyer shortly before, later or in the sale's own transaction", () => {
    const funded = [flow(FUNDER, BUYER, 10n * ETH, 90)];
    assert.deepEqual(verdictsOf([sale(1, 10n * ETH)], funded, [flow(SELLER, FUNDER, 10n * ETH, 105)]), [
      "1@105:0:wash_returned",
    ]);
    assert.deepEqual(
      verdictsOf([sale(1, 10n * ETH)], funded, [flow(SELLER, FUNDER, 10n * ETH, 100, 5, true)]),
      ["1@100:5:wash_returned"],
    );
  });

  test("honest look-alikes are not flagged", () => {
    const price = 10n * ETH;
    assert.deepEqual(
      verdictsOf([sale(1, price)], [], [flow(SELLER, BUYER, 4n * ETH, 110)]),
      [],
      "a tip back",
    );
    assert.deepEqual(
      verdictsOf([sale(1, price)], [], [flow(SELLER, OTHER, price, 110)]),
      [],
      "paid on elsewhere",
    );
    assert.deepEqual(
      verdictsOf([sale(1, price)], [], [flow(SELLER, BUYER, price, 100 + RETURN_LOOKAHEAD.seconds / 12 + 1)]),
      [],
      "more than an hour later",
    );
    assert.deepEqual(
      verdictsOf([sale(1, price)], [], [flow(SELLER, BUYER, price, 100, 5, true)]),
      [],
      "a swap",
    );
    assert.deepEqual(
      verdictsOf([sale(1, price)], [], [flow(SELLER, BUYER, price, 100, 2)]),
      [],
      "before the sale",
    );
    assert.deepEqual(
      verdictsOf(
        [sale(1, price)],
        [{ ...flow(FUNDER, BUYER, price, 10), time: timeOf(100) - 3_601 }],
        [flow(SELLER, FUNDER, price, 110)],
      ),
      [],
      "to an account that funded the buyer more than an hour before",
    );
    // An exchange paid the buyer out among many; the seller deposits its proceeds there.
    const payouts = Array.from({ length: MAX_FANOUT + 1 }, (_, i) => flow(FUNDER, account(100 + i), ETH, 95));
    assert.deepEqual(
      verdictsOf(
        [sale(1, price)],
        [flow(FUNDER, BUYER, price, 90), ...payouts],
        [flow(SELLER, FUNDER, price, 110)],
      ),
      [],
      "to an exchange that paid the buyer out",
    );
    assert.deepEqual(
      verdictsOf([sale(1, price, ["unpriced"])], [], [flow(SELLER, BUYER, price, 110)]),
      [],
      "no price",
    );
    assert.deepEqual(
      verdictsOf([sale(1, price, ["wash_returned"])], [], [flow(SELLER, BUYER, price, 110)]),
      [],
      "flagged already",
    );
  });

  test("a deal is flagged once, and forgotten once its hour is over", () => {
    const memory = new FlowMemory();
    const watch = new ReturnWatch();
    watch.add([sale(1, 10n * ETH)], memory);
    assert.equal(watch.observe([flow(SELLER, BUYER, 6n * ETH, 101)]).length, 1);
    assert.equal(watch.observe([flow(SELLER, BUYER, 6n * ETH, 102)]).length, 0);
    watch.prune(timeOf(100) + RETURN_LOOKAHEAD.seconds);
    assert.equal(watch.size, 1);
    watch.prune(timeOf(100) + RETURN_LOOKAHEAD.seconds + 1);
    assert.equal(watch.size, 0);
  });

  test("property: flagged exactly when what reached the buyer or its funder later within the hour is half the price", () => {
    const to = fc.constantFrom(BUYER, FUNDER, OTHER);
    const payment = fc.record({
      to,
      value: fc.bigInt({ min: 1n, max: 10n * ETH }),
      blocks: fc.integer({ min: 1, max: 400 }),
    });
    fc.assert(
      fc.property(
        fc.array(payment, { maxLength: 8 }),
        fc.bigInt({ min: 1n, max: 20n * ETH }),
        (payments, price) => {
          let block = 100;
          const flows = payments.map((p) => {
            block += p.blocks;
            return flow(SELLER, p.to, p.value, block);
          });
          let returned = 0n;
          let expected: string | undefined;
          for (const f of flows) {
            if (f.to === OTHER || f.time - timeOf(100) > RETURN_LOOKAHEAD.seconds) continue;
            returned += f.value;
            if (expected === undefined && returned * 2n >= price)
              expected = `1@${f.blockNumber}:0:wash_returned`;
          }
          const got = verdictsOf([sale(1, price)], [flow(FUNDER, BUYER, ETH, 99)], flows);
          assert.deepEqual(got, expected === undefined ? [] : [expected]);
        },
      ),
    );
  });
});
