import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  classifyAttribute,
  informationScores,
  rankScores,
  type TokenTraits,
  traitPercentage,
} from "../../src/core/traits.ts";

const attr = (traitType: string, value: string, displayType = "") => ({ traitType, value, displayType });

describe("what an attribute counts as", () => {
  test("OpenSea's numeric display types with a number are numeric traits, under the original's names", () => {
    assert.deepEqual(classifyAttribute(attr("Level", "7", "number")), {
      kind: "numeric",
      name: "Level",
      displayType: "DISPLAY_TYPE_STAT",
      value: 7,
    });
    assert.equal(classifyAttribute(attr("Speed", "-2.5", "boost_number")).kind, "numeric");
    assert.deepEqual(classifyAttribute(attr("Born", "1.5e9", "DATE")), {
      kind: "numeric",
      name: "Born",
      displayType: "DISPLAY_TYPE_DATE",
      value: 1_500_000_000,
    });
    assert.equal(
      (classifyAttribute(attr("Boost", "10", "Boost_Percentage")) as { displayType: string }).displayType,
      "DISPLAY_TYPE_BOOST_PERCENTAGE",
    );
  });

  test("anything else is a string trait: no display type, another one, or a value that is no bounded number", () => {
    for (const a of [
      attr("Generation", "2"),
      attr("Fur", "Gold", "string"),
      attr("Level", "ten", "number"),
      attr("Level", "1e400", "number"),
      attr("Level", "0x10", "number"),
      attr("Level", " 5", "number"),
      attr("Level", "5", "constructor"),
      attr("Level", "5", "__proto__"),
      attr("Level", "5", "NUMBER\u212A"),
    ]) {
      assert.deepEqual(
        classifyAttribute(a),
        { kind: "string", name: a.traitType, value: a.value },
        JSON.stringify(a),
      );
    }
  });

  test("every numeric trait's value is a finite double of what the text says", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom("number", "date", "boost_number", "x", ""),
        (value, display) => {
          const trait = classifyAttribute(attr("t", value, display));
          if (trait.kind === "numeric") {
            assert.ok(Number.isFinite(trait.value));
            assert.equal(trait.value, Number(value));
          }
        },
      ),
    );
    fc.assert(
      // Below 1e20 in size: 1e20 itself is written with 21 digits, one more than a value may have.
      fc.property(
        fc.double({ noNaN: true, min: -1e20, max: 1e20, minExcluded: true, maxExcluded: true }),
        (x) => {
          const text = String(x);
          const trait = classifyAttribute(attr("t", text, "number"));
          // JavaScript's own form of a double in this range is taken as a number, unless it has more
          // fractional digits (up to 22, between 1e-6 and 1) or exponent digits than a value may.
          if (!/e-\d{3}/.test(text) && !/\.\d{21}/.test(text)) assert.equal(trait.kind, "numeric", text);
          else assert.equal(trait.kind, "string", text);
        },
      ),
    );
  });

  test("a percentage is the share of the documents, unrounded as the original gave it", () => {
    assert.equal(traitPercentage(283n, 9_999n), 2.8302830283028304);
    assert.equal(traitPercentage(1636n, 10_000n), 16.36);
    assert.equal(traitPercentage(3n, 0n), 0);
  });
});

describe("rarity by information content", () => {
  test("each trait name counts, 'absent' as a value of it, so that lacking a common trait is not rare", () => {
    // Four tokens: a hat on one only, a coat on three.
    const tokens: TokenTraits[] = [
      { id: "a", traits: [{ name: "Hat", value: "Crown" }] },
      { id: "b", traits: [{ name: "Coat", value: "Red" }] },
      { id: "c", traits: [{ name: "Coat", value: "Red" }] },
      { id: "d", traits: [{ name: "Coat", value: "Blue" }] },
    ];
    const scores = informationScores(tokens);
    // a: Hat Crown 1/4 (2 bits) + Coat absent 1/4 (2 bits); b: Hat absent 3/4 + Coat Red 2/4.
    const bits = (p: number) => -Math.log2(p);
    assert.equal(scores.get("a"), Math.round((bits(1 / 4) + bits(1 / 4)) * 1e9) / 1e9);
    assert.equal(scores.get("b"), Math.round((bits(3 / 4) + bits(2 / 4)) * 1e9) / 1e9);
    assert.equal(scores.get("d"), Math.round((bits(3 / 4) + bits(1 / 4)) * 1e9) / 1e9);
    assert.deepEqual([...rankScores(scores)].sort(), [
      ["a", 1],
      ["b", 3],
      ["c", 3],
      ["d", 2],
    ]);
  });

  test("a repeated attribute counts once; a collection where all tokens are alike ties them all at rank 1", () => {
    const same = informationScores([
      {
        id: "1",
        traits: [
          { name: "A", value: "x" },
          { name: "A", value: "x" },
        ],
      },
      { id: "2", traits: [{ name: "A", value: "x" }] },
    ]);
    assert.deepEqual([...same.values()], [0, 0]);
    assert.deepEqual([...rankScores(same).values()], [1, 1]);
  });

  test("tokens with the same traits tie, ranks start at 1 and skip after ties, and rarer never ranks below", () => {
    const token = fc.array(
      fc.record({ name: fc.constantFrom("A", "B", "C"), value: fc.constantFrom("x", "y", "z", "w") }),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 30 }), (traitLists) => {
        const tokens = traitLists.map((traits, i) => ({ id: String(i), traits }));
        const scores = informationScores(tokens);
        const ranks = rankScores(scores);
        const key = (t: TokenTraits) =>
          JSON.stringify([...new Set(t.traits.map((x) => `${x.name}=${x.value}`))].sort());
        for (const a of tokens) {
          const ra = ranks.get(a.id) ?? 0;
          const sa = scores.get(a.id) ?? 0;
          assert.ok(sa >= 0);
          // A rank is one more than the number of tokens strictly rarer.
          assert.equal(ra, 1 + [...scores.values()].filter((s) => s > sa).length);
          for (const b of tokens) {
            if (key(a) === key(b)) assert.equal(ra, ranks.get(b.id));
          }
        }
        assert.ok([...ranks.values()].includes(1));
      }),
    );
  });
});
