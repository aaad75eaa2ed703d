import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Address } from "../../src/core/hex.ts";
import { findLure } from "../../src/spam/lure.ts";
import { editDistance, imitates, nameSkeleton } from "../../src/spam/names.ts";
import {
  type ContractFacts,
  judgeContract,
  knownCollection,
  SIGNAL_WEIGHTS,
  SPAM_THRESHOLD,
} from "../../src/spam/score.ts";

const KNOWN = [knownCollection(`0x${"0a".repeat(20)}` as Address, "Bored Ape Yacht Club", 500)];

/** A contract nobody would flag: few holders, some sales, a plain name. */
function facts(overrides: Partial<ContractFacts> = {}): ContractFacts {
  return {
    contract: `0x${"0b".repeat(20)}` as Address,
    name: "Quiet Meadows",
    symbol: "QM",
    holders: 10,
    organicSales: 3,
    paidMints: 0,
    spray: { largest: 1, sprays: 0, sprayed: 0, transfers: 20 },
    topEdition: undefined,
    texts: { tokenNames: [], tokenDescriptions: [] },
    ...overrides,
  };
}

describe("imitated names", () => {
  test("digits, homoglyphs, spacing and punctuation read as the name they imitate", () => {
    for (const name of [
      "B0red Ape Yacht Club",
      "Boredape YachtClub",
      "BORED-APE-YACHT-CLUB",
      "Bоred Аpe Yacht Сlub", // Cyrillic о, А, С
      "Bored Ape Yacht C1ub",
      "Ｂｏｒｅｄ Ａｐｅ Ｙａｃｈｔ Ｃｌｕｂ",
      "Bored Ape Yatch Club",
      "Bored Apes Yacht Club",
    ]) {
      assert.ok(imitates(name, "Bored Ape Yacht Club"), name);
    }
  });

  test("names that share a word, or are short, do not", () => {
    for (const name of [
      "Bored Pixels Club",
      "Yacht Club Sailors",
      "Ape Gang",
      "Bored",
      "Mutant Ape Yacht Club",
    ]) {
      assert.ok(!imitates(name, "Bored Ape Yacht Club"), name);
    }
    assert.ok(!imitates("Apes", "Apez"), "four letters are never compared");
  });

  test("a skeleton is made of letters only, the same for any case and spacing (property)", () => {
    fc.assert(
      fc.property(fc.string(), (name) => {
        const skeleton = nameSkeleton(name);
        assert.match(skeleton, /^[a-z]*$/);
        assert.equal(nameSkeleton(name.toUpperCase().split("").join(" ")), nameSkeleton(name.toUpperCase()));
      }),
    );
  });

  test("the distance is symmetric, zero only for equal strings, and one per single edit (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "b", "c") }),
        fc.string({ unit: fc.constantFrom("a", "b", "c") }),
        (a, b) => {
          const d = editDistance(a, b, 100);
          assert.equal(d, editDistance(b, a, 100));
          assert.equal(d === 0, a === b);
          assert.ok(d <= Math.max(a.length, b.length));
          assert.equal(editDistance(`${a}x`, a, 100), 1);
        },
      ),
    );
  });
});

describe("lures", () => {
  test("a site in a name fires; a link in a description fires only beside a bait word", () => {
    const base = { contractName: "", contractSymbol: "", tokenNames: [], tokenDescriptions: [] };
    assert.equal(findLure({ ...base, contractName: "Claim at eth-gift.xyz" })?.where, "contract name");
    assert.equal(findLure({ ...base, tokenNames: ["Visit https://free.example.com"] })?.where, "token name");
    assert.equal(
      findLure({ ...base, tokenDescriptions: ["You are eligible! Claim your reward at mint-pass.io"] })
        ?.where,
      "token description",
    );
    assert.equal(
      findLure({ ...base, tokenDescriptions: ["A gallery of owls. Visit https://owls.art"] }),
      undefined,
    );
    assert.equal(findLure({ ...base, contractName: "Night Owls", tokenNames: ["Owl #12"] }), undefined);
  });
});

describe("the verdict", () => {
  test("a spray of a look-alike name that nobody buys is spam, with its figures", () => {
    const verdict = judgeContract(
      facts({
        name: "B0red Ape Yacht Club",
        holders: 300,
        organicSales: 0,
        spray: { largest: 150, sprays: 2, sprayed: 300, transfers: 300 },
      }),
      KNOWN,
    );
    assert.equal(verdict.isSpam, true);
    assert.equal(verdict.score, 100);
    assert.deepEqual(
      verdict.signals.map((s) => s.name),
      ["airdrop_spray", "no_organic_demand", "imitation"],
    );
    assert.equal(verdict.signals[0]?.evidence.largestTxRecipients, 150);
    assert.equal(verdict.signals[2]?.evidence.imitates, KNOWN[0]?.contract);
  });

  test("the honest look-alikes stay below the threshold", () => {
    const cases: Partial<ContractFacts>[] = [
      { holders: 5_000, organicSales: 0 }, // a free mint, no sales yet
      { spray: { largest: 120, sprays: 1, sprayed: 120, transfers: 130 }, holders: 130, organicSales: 4 }, // an airdrop to a selling community
      {
        name: "Bored Ape Yacht Club",
        contract: KNOWN[0]?.contract as Address,
        organicSales: 500,
        holders: 6_000,
      }, // the original
      { topEdition: { tokenId: 1n, holders: 2_000, payments: 2_000 }, holders: 2_000, organicSales: 2_000 }, // a sold edition
      { texts: { tokenNames: [], tokenDescriptions: ["Visit https://owls.art for the gallery"] } },
    ];
    for (const c of cases) {
      const verdict = judgeContract(facts(c), KNOWN);
      assert.equal(verdict.isSpam, false, JSON.stringify(verdict));
    }
  });

  test("the score is the capped sum of the fired weights, spam from the threshold, never from one signal (property)", () => {
    const arbitraryFacts = fc.record({
      name: fc.constantFrom(
        "Bored Ape Yacht Club",
        "B0red Ape Yacht Club",
        "Night Owls",
        "gift at claim-now.xyz",
      ),
      holders: fc.nat({ max: 20_000 }),
      organicSales: fc.nat({ max: 200 }),
      paidMints: fc.nat({ max: 200 }),
      largest: fc.nat({ max: 2_000 }),
      sprayed: fc.nat({ max: 20_000 }),
      edition: fc.option(fc.record({ holders: fc.nat({ max: 5_000 }), payments: fc.nat({ max: 3 }) })),
    });
    fc.assert(
      fc.property(arbitraryFacts, (f) => {
        const verdict = judgeContract(
          facts({
            name: f.name,
            holders: f.holders,
            organicSales: f.organicSales,
            paidMints: f.paidMints,
            spray: {
              largest: f.largest,
              sprays: f.largest >= 50 ? 1 : 0,
              sprayed: f.sprayed,
              transfers: f.sprayed,
            },
            topEdition: f.edition === null ? undefined : { tokenId: 1n, ...f.edition },
          }),
          KNOWN,
        );
        const sum = verdict.signals.reduce((total, s) => total + s.weight, 0);
        assert.equal(verdict.score, Math.min(100, sum));
        assert.equal(verdict.isSpam, verdict.score >= SPAM_THRESHOLD);
        for (const s of verdict.signals) assert.equal(s.weight, SIGNAL_WEIGHTS[s.name]);
        if (verdict.signals.length <= 1) assert.equal(verdict.isSpam, false);
        // More organic sales never make a contract more spam.
        const more = judgeContract(
          facts({
            name: f.name,
            holders: f.holders,
            organicSales: f.organicSales + 1_000,
            paidMints: f.paidMints,
            spray: { largest: f.largest, sprays: 0, sprayed: f.sprayed, transfers: f.sprayed },
            topEdition: f.edition === null ? undefined : { tokenId: 1n, ...f.edition },
          }),
          KNOWN,
        );
        assert.ok(more.score <= verdict.score);
      }),
    );
  });
});
