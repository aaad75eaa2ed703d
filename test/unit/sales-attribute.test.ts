/**
 * Attribution rules that recorded mainnet sales called for: order amounts traced through an
 * exchange, an escrow that passes on what it was paid, and sales seen without call traces.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { NativeTransfer, NftTransfer } from "../../src/core/types.ts";
import { attributeTransaction } from "../../src/sales/attribute.ts";
import type { SaleTransaction } from "../../src/sales/types.ts";

const TX: Hex = `0x${"ab".repeat(32)}`;
const NFT: Address = "0x00000000000000000000000000000000000000c0";
const BUYER: Address = "0x00000000000000000000000000000000000000b0";
const ROUTER: Address = "0x00000000000000000000000000000000000000a9";
const EXCHANGE: Address = "0x00000000000000000000000000000000000000e0";
const FEES: Address = "0x00000000000000000000000000000000000000fe";
const S1: Address = "0x0000000000000000000000000000000000000051";
const S2: Address = "0x0000000000000000000000000000000000000052";

function nft(tokenId: bigint, from: Address, to: Address, logIndex: number): NftTransfer {
  return {
    contract: NFT,
    tokenId,
    from,
    to,
    amount: 1n,
    blockNumber: 1,
    logIndex,
    seq: 0,
    txHash: TX,
    txIndex: 0,
    standard: "erc721",
  };
}
const pay = (from: Address, to: Address, value: bigint): NativeTransfer => ({ txHash: TX, from, to, value });

function tx(parts: Partial<SaleTransaction>): SaleTransaction {
  return {
    txHash: TX,
    txIndex: 0,
    blockNumber: 1,
    from: BUYER,
    to: ROUTER,
    value: 0n,
    nft: [],
    fungible: [],
    native: [],
    markets: [],
    ...parts,
  };
}

describe("several sellers paid through an exchange", () => {
  test("each order's amount, traced through the exchange, prices it even when fees differ", () => {
    const trades = attributeTransaction(
      tx({
        value: 110n,
        nft: [nft(1n, S1, BUYER, 1), nft(2n, S2, BUYER, 2)],
        // 100 with a 10% fee, then 10 with a 50% fee.
        native: [
          pay(BUYER, ROUTER, 110n),
          pay(ROUTER, EXCHANGE, 100n),
          pay(EXCHANGE, FEES, 10n),
          pay(EXCHANGE, S1, 90n),
          pay(ROUTER, EXCHANGE, 10n),
          pay(EXCHANGE, FEES, 5n),
          pay(EXCHANGE, S2, 5n),
        ],
      }),
    );
    assert.deepEqual(
      trades.map((t) => t.native),
      [100n, 10n],
    );
  });

  test("one payment funding both sellers cannot be traced: split by what each netted", () => {
    const trades = attributeTransaction(
      tx({
        value: 110n,
        nft: [nft(1n, S1, BUYER, 1), nft(2n, S2, BUYER, 2)],
        native: [
          pay(BUYER, EXCHANGE, 110n),
          pay(EXCHANGE, S1, 90n),
          pay(EXCHANGE, S2, 5n),
          pay(EXCHANGE, FEES, 15n),
        ],
      }),
    );
    // 110 * 90/95 and 110 * 5/95.
    assert.deepEqual(
      trades.map((t) => t.native),
      [104n, 6n],
    );
  });

  test("an order paid out for more than came in is not traced", () => {
    const trades = attributeTransaction(
      tx({
        value: 110n,
        nft: [nft(1n, S1, BUYER, 1), nft(2n, S2, BUYER, 2)],
        native: [
          pay(BUYER, ROUTER, 110n),
          pay(ROUTER, EXCHANGE, 50n),
          pay(EXCHANGE, S1, 90n),
          pay(ROUTER, EXCHANGE, 60n),
          pay(EXCHANGE, S2, 20n),
        ],
      }),
    );
    assert.deepEqual(
      trades.map((t) => t.native),
      [90n, 20n],
    );
  });
});

describe("whether the seller side was paid", () => {
  test("an escrow holding the NFT is paid and passes it all on: a sale", () => {
    const lender: Address = "0x0000000000000000000000000000000000000077";
    const trades = attributeTransaction(
      tx({
        to: EXCHANGE,
        value: 10n,
        nft: [nft(1n, EXCHANGE, BUYER, 1)],
        native: [pay(BUYER, EXCHANGE, 10n), pay(EXCHANGE, lender, 8n), pay(EXCHANGE, S1, 2n)],
      }),
    );
    assert.deepEqual(
      trades.map((t) => [t.kind, t.seller, t.native]),
      [["sale", EXCHANGE, 10n]],
    );
  });

  test("a seller paid nothing, the money kept by a contract, is no sale", () => {
    const trades = attributeTransaction(
      tx({ to: EXCHANGE, value: 10n, nft: [nft(1n, S1, BUYER, 1)], native: [pay(BUYER, EXCHANGE, 10n)] }),
    );
    assert.deepEqual(trades, []);
  });

  test("without traces the transaction's value is taken as the price", () => {
    const trades = attributeTransaction(
      tx({ to: EXCHANGE, value: 10n, nft: [nft(1n, S1, BUYER, 1)], native: undefined }),
    );
    assert.deepEqual(
      trades.map((t) => [t.kind, t.seller, t.buyer, t.native, t.priceFromTransactionValue]),
      [["sale", S1, BUYER, 10n, true]],
    );
  });

  test("without traces and no value, a transfer is no sale", () => {
    assert.deepEqual(
      attributeTransaction(tx({ to: EXCHANGE, nft: [nft(1n, S1, BUYER, 1)], native: undefined })),
      [],
    );
  });
});
