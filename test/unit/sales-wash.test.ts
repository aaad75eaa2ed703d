import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Address } from "../../src/core/hex.ts";
import { saleClass } from "../../src/core/sale-classes.ts";
import { CYCLE_LOOKBACK, type PastSale, washRules } from "../../src/sales/wash.ts";

const account = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const [A, B, C, D, E] = [1, 2, 3, 4, 5].map(account) as [Address, Address, Address, Address, Address];
const HOUR = 3_600;
const DAY = 86_400;
const noContracts = () => undefined;

/** The rules for a token's next sale after `legs` ([seller, buyer], an hour apart). */
function rulesAfter(legs: [Address, Address][], next: [Address, Address], gap = HOUR) {
  const history: PastSale[] = legs.map(([seller, buyer], i) => ({ seller, buyer, time: i * HOUR }));
  const time = (legs.length - 1) * HOUR + gap;
  return washRules({ seller: next[0], buyer: next[1], time, history, deployerOf: noContracts });
}

describe("wash rules", () => {
  test("a token coming back to a recent seller closes a cycle, however many wallets it went through", () => {
    assert.deepEqual(rulesAfter([[A, B]], [B, A]), ["wash_cycle"]);
    assert.deepEqual(
      rulesAfter(
        [
          [A, B],
          [B, C],
        ],
        [C, A],
      ),
      ["wash_cycle"],
    );
    assert.deepEqual(
      rulesAfter(
        [
          [A, B],
          [B, C],
          [C, D],
          [D, E],
        ],
        [E, A],
      ),
      ["wash_cycle"],
    );
  });

  test("honest look-alikes: a first trade between friends, a resale onwards, a buyback a year later", () => {
    assert.deepEqual(rulesAfter([], [A, B]), [], "two friends trading once");
    assert.deepEqual(
      rulesAfter(
        [
          [A, B],
          [B, C],
        ],
        [C, D],
      ),
      [],
      "a token sold on to new buyers",
    );
    assert.deepEqual(
      rulesAfter([[A, B]], [B, A], 365 * DAY),
      [],
      "a collector buying a token back a year later",
    );
    assert.deepEqual(rulesAfter([[A, B]], [B, A], CYCLE_LOOKBACK.seconds + 1), []);
    assert.deepEqual(rulesAfter([[A, B]], [B, A], CYCLE_LOOKBACK.seconds), ["wash_cycle"]);
  });

  test("only the last sales of the lookback are read", () => {
    const legs: [Address, Address][] = [[A, B]];
    // B passes it around accounts that never held it before, long enough to push A's sale out.
    for (let i = 0; i < CYCLE_LOOKBACK.sales; i++) legs.push([account(100 + i), account(101 + i)]);
    legs[1] = [B, account(101)];
    assert.deepEqual(rulesAfter(legs, [account(100 + CYCLE_LOOKBACK.sales), A]), []);
  });

  test("a trade with the buyer's own contract, either way, is a self-trade", () => {
    const contract = account(0xc0de);
    const deployerOf = (a: Address) => (a === contract ? A : undefined);
    const rules = (seller: Address, buyer: Address) =>
      washRules({ seller, buyer, time: 0, history: [], deployerOf });
    assert.deepEqual(rules(A, contract), ["wash_self"]);
    assert.deepEqual(rules(contract, A), ["wash_self"]);
    assert.deepEqual(rules(B, contract), [], "a contract of someone else's buying");
    // Two smart accounts deployed by one bundler for two users are not one owner.
    const other = account(0xbeef);
    const byBundler = (a: Address) => (a === contract || a === other ? E : undefined);
    assert.deepEqual(
      washRules({ seller: contract, buyer: other, time: 0, history: [], deployerOf: byBundler }),
      [],
    );
  });

  test("property: a cycle fires exactly when the buyer sold the token within the lookback", () => {
    const parties = fc.integer({ min: 1, max: 4 }).map(account);
    const leg = fc.record({ seller: parties, buyer: parties, gap: fc.integer({ min: 0, max: 40 * DAY }) });
    fc.assert(
      fc.property(
        fc.array(leg, { maxLength: 12 }),
        parties,
        parties,
        fc.integer({ min: 0, max: 40 * DAY }),
        (legs, seller, buyer, gap) => {
          let time = 0;
          const history = legs.map((l) => {
            time += l.gap;
            return { seller: l.seller, buyer: l.buyer, time };
          });
          const now = time + gap;
          const expected = history
            .slice(-CYCLE_LOOKBACK.sales)
            .some((s) => s.seller === buyer && now - s.time <= CYCLE_LOOKBACK.seconds);
          const rules = washRules({ seller, buyer, time: now, history, deployerOf: noContracts });
          assert.equal(rules.includes("wash_cycle"), expected);
        },
      ),
    );
  });
});

describe("sale classes", () => {
  test("unpriced before flagged before organic; every wash rule and a rate outlier flag", () => {
    assert.equal(saleClass([]), "organic");
    assert.equal(saleClass(["tx_value"]), "organic");
    assert.equal(saleClass(["wash_cycle"]), "flagged");
    assert.equal(saleClass(["wash_self", "tx_value"]), "flagged");
    assert.equal(saleClass(["rate_outlier"]), "flagged");
    assert.equal(saleClass(["wash"]), "flagged", "the flag of earlier versions");
    assert.equal(saleClass(["wash_cycle", "unpriced"]), "unpriced");
  });
});
