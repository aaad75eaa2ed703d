import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Address } from "../../src/core/hex.ts";
import { saleClass } from "../../src/core/sale-classes.ts";
import { TRANSFER_LABELS, type TradeFacts, transferLabels } from "../../src/core/transfer-labels.ts";
import { LabelSchema } from "../../src/gen/mintlens/v1beta2/enums_pb.ts";

const ZERO = `0x${"00".repeat(20)}` as Address;
const DEAD = "0x000000000000000000000000000000000000dead" as Address;
const A = `0x${"aa".repeat(20)}` as Address;
const B = `0x${"bb".repeat(20)}` as Address;
const sale = (trade: Partial<TradeFacts> = {}): TradeFacts => ({
  kind: "sale",
  market: "",
  flags: [],
  bundled: false,
  ...trade,
});

describe("transferLabels", () => {
  test("the labels are the .proto enum's values, in its order", () => {
    assert.deepEqual(
      LabelSchema.values.filter((v) => v.number > 0).map((v) => [v.name, v.number]),
      TRANSFER_LABELS.map((l, i) => [l, i + 1]),
    );
  });

  test("the recorded answer's cases", () => {
    assert.deepEqual(transferLabels({ from: ZERO, to: A, trades: [] }), ["LABEL_MINT"]);
    assert.deepEqual(transferLabels({ from: A, to: B, trades: [] }), ["LABEL_TRANSFER"]);
    assert.deepEqual(transferLabels({ from: A, to: B, trades: [sale({ market: "looksrare" })] }), [
      "LABEL_SALE",
      "LABEL_MARKETPLACE_LOOKSRARE",
      "LABEL_ORGANIC",
    ]);
    assert.deepEqual(transferLabels({ from: A, to: B, trades: [sale({ market: "seaport" })] }), [
      "LABEL_SALE",
      "LABEL_MARKETPLACE_OPENSEA",
      "LABEL_ORGANIC",
    ]);
    assert.deepEqual(transferLabels({ from: A, to: B, trades: [sale({ market: "blur", bundled: true })] }), [
      "LABEL_SALE",
      "LABEL_BUNDLE",
      "LABEL_MARKETPLACE_BLUR",
      "LABEL_ORGANIC",
    ]);
  });

  test("Mintlens's own kinds", () => {
    assert.deepEqual(transferLabels({ from: ZERO, to: A, trades: [{ ...sale(), kind: "mint" }] }), [
      "LABEL_MINT",
      "LABEL_PAID_MINT",
    ]);
    assert.deepEqual(transferLabels({ from: A, to: DEAD, trades: [] }), ["LABEL_BURN"]);
    assert.deepEqual(transferLabels({ from: A, to: B, trades: [{ ...sale(), kind: "return" }] }), [
      "LABEL_TRANSFER",
      "LABEL_RETURN",
    ]);
    assert.deepEqual(
      transferLabels({ from: A, to: B, trades: [sale({ flags: ["wash_cycle", "rate_outlier"] })] }),
      ["LABEL_SALE", "LABEL_WASH", "LABEL_RATE_OUTLIER"],
    );
    assert.deepEqual(
      transferLabels({ from: A, to: B, trades: [sale({ flags: ["unpriced", "tx_value"] })] }),
      ["LABEL_SALE", "LABEL_UNPRICED"],
    );
  });

  test("a sale's class is told by its labels, and a transfer is a mint, a burn, a sale or a transfer", () => {
    const address = fc.constantFrom(ZERO, DEAD, A, B);
    const flags = fc.subarray([
      "wash_cycle",
      "wash_self",
      "wash_funder",
      "wash_returned",
      "rate_outlier",
      "unpriced",
      "tx_value",
    ]);
    const trade = fc.record({
      kind: fc.constantFrom("sale" as const, "mint" as const, "return" as const),
      market: fc.constantFrom("", "seaport", "wyvern", "blur", "looksrare", "x2y2", "cryptopunks", "other"),
      flags,
      bundled: fc.boolean(),
    });
    fc.assert(
      fc.property(address, address, fc.array(trade, { maxLength: 1 }), (from, to, trades) => {
        const labels = transferLabels({ from, to, trades });
        assert.equal(new Set(labels).size, labels.length);
        assert.ok(
          ["LABEL_MINT", "LABEL_BURN", "LABEL_SALE", "LABEL_TRANSFER"].some((l) =>
            labels.includes(l as never),
          ),
        );
        assert.equal(
          labels.includes("LABEL_TRANSFER"),
          !labels.some((l) => ["LABEL_MINT", "LABEL_BURN", "LABEL_SALE"].includes(l)),
        );
        const [t] = trades;
        if (t?.kind !== "sale") {
          assert.ok(!labels.includes("LABEL_SALE"));
          return;
        }
        const cls = saleClass(t.flags);
        assert.equal(labels.includes("LABEL_ORGANIC"), cls === "organic");
        assert.equal(labels.includes("LABEL_UNPRICED"), cls === "unpriced");
        const flagged = !labels.includes("LABEL_ORGANIC") && !labels.includes("LABEL_UNPRICED");
        assert.equal(flagged, cls === "flagged");
        if (flagged) assert.ok(labels.includes("LABEL_WASH") || labels.includes("LABEL_RATE_OUTLIER"));
      }),
    );
  });
});
