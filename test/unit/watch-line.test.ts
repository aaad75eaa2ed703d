/**
 * `mintlens watch`'s line per event, from the events' wire form: what a reader of the terminal
 * needs of each kind, a verdict saying which sale it names, a retraction marked.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatCoins, watchLine } from "../../src/cli/watch-command.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { SaleEvent, StreamEvent } from "../../src/core/stream-events.ts";
import { streamEventJson } from "../../src/stream/wire.ts";

const SELLER = `0x${"a1".repeat(20)}` as Address;
const BUYER = `0x${"b2".repeat(20)}` as Address;
const place = {
  blockNumber: 100,
  logIndex: 3,
  seq: 0,
  txHash: `0x${"11".repeat(32)}` as Hex,
  blockTime: new Date("2026-11-27T10:00:00Z"),
  contract: `0x${"0c".repeat(20)}` as Address,
  tokenId: 42n,
};
const sale: SaleEvent = {
  ...place,
  cursor: 40n,
  kind: "sale",
  trade: "sale",
  seller: SELLER,
  buyer: BUYER,
  quantity: 1n,
  nativePaid: 1_500_000_000_000_000_000n,
  fungiblePaid: 0n,
  totalNative: 1_500_000_000_000_000_000n,
  totalUsd: "4500.5",
  attributedBy: "ATTRIBUTED_BY_MARKET_EVENT",
  market: "seaport",
  flags: [],
  bundled: false,
  payments: [],
  labels: ["LABEL_SALE", "LABEL_ORGANIC"],
};

const line = (event: StreamEvent) => watchLine(JSON.parse(JSON.stringify(streamEventJson(event))), "ETH");

test("a sale's line gives its price in coins and dollars and its market", () => {
  assert.equal(
    line(sale),
    "2026-11-27T10:00:00Z  #100  sale      0x0c0c…0c0c/42  0xa1a1…a1a1 → 0xb2b2…b2b2  1.5 ETH ($4500.50) on seaport",
  );
});

test("a verdict's line names its rule and the sale it changes, at the verdict's block", () => {
  const { cursor: _, ...content } = sale;
  const verdict: StreamEvent = {
    kind: "verdict",
    cursor: 90n,
    blockNumber: 130,
    blockTime: new Date("2026-11-27T10:06:00Z"),
    rule: "wash_cycle",
    sale: { ...content, flags: ["wash_cycle"], labels: ["LABEL_SALE", "LABEL_WASH"] },
  };
  assert.equal(
    line(verdict),
    "2026-11-27T10:06:00Z  #130  verdict   0x0c0c…0c0c/42  wash_cycle on the sale of #100: 0xa1a1…a1a1 → 0xb2b2…b2b2  1.5 ETH",
  );
  assert.equal(line({ kind: "retraction", cursor: 95n, retracted: verdict }), `RETRACTED ${line(verdict)}`);
});

test("coins are shown to at most six decimals, without trailing zeros", () => {
  assert.equal(formatCoins("0", "ETH"), "0 ETH");
  assert.equal(formatCoins("1000000000000000000", "POL"), "1 POL");
  assert.equal(formatCoins("1234567890000000000", "ETH"), "1.234567 ETH");
  assert.equal(formatCoins("10000000000000", "ETH"), "0.00001 ETH");
});
