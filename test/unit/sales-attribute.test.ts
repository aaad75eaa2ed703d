/**
 * Attribution rules that recorded mainnet sales called for: order amounts traced through an
 * exchange, an escrow that passes on what it was paid, and sales seen without call traces.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { NativeTransfer, NftTransfer } from "../../src/core/types.ts";
import { attributeTransaction } from "../../src/sales/attribute.ts";
import type { SaleTransaction, Trade } from "../../src/sales/types.ts";

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
const pay = (from: Address, to: Address, value: bigint): NativeTransfer => ({
  txHash: TX,
  from,
  to,
  value,
  blockNumber: 0,
  txIndex: 0,
});

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

describe("a price is what reached the seller side", () => {
  const ENTRY_POINT: Address = "0x0000000000000000000000000000000000004337";
  const BUNDLER: Address = "0x00000000000000000000000000000000000000bd";
  const ACCOUNT: Address = "0x00000000000000000000000000000000000000ac";
  const ELSEWHERE: Address = "0x00000000000000000000000000000000000000ee";
  const ROYALTY: Address = "0x00000000000000000000000000000000000000f1";
  const USDC: Address = "0x00000000000000000000000000000000000000d5";
  const WETH: Address = "0x00000000000000000000000000000000000000a0";
  const POOL: Address = "0x0000000000000000000000000000000000000090";
  const LENDER: Address = "0x0000000000000000000000000000000000000077";
  const LOANS: Address = "0x0000000000000000000000000000000000000011";
  const erc20 = (token: Address, from: Address, to: Address, amount: bigint, logIndex: number) => ({
    contract: token,
    from,
    to,
    amount,
    blockNumber: 1,
    logIndex,
    txHash: TX,
    txIndex: 0,
  });
  // An exchange that pays the seller 95% of a price, a 2.5% fee and a 2.5% royalty.
  const sold = (price: bigint, seller: Address = S1) => [
    pay(EXCHANGE, seller, (price * 95n) / 100n),
    pay(EXCHANGE, FEES, (price * 25n) / 1000n),
    pay(EXCHANGE, ROYALTY, (price * 25n) / 1000n),
  ];
  const brief = (trades: readonly Trade[]) =>
    trades.map((t) => [t.kind, t.seller, t.buyer, t.native, t.fungible, t.attributedBy]);

  test("an ERC-4337 account's gas prepayment and its other calls are not part of the price", () => {
    const trades = attributeTransaction(
      tx({
        from: BUNDLER,
        to: ENTRY_POINT,
        nft: [nft(1n, S1, ACCOUNT, 3)],
        native: [
          pay(ACCOUNT, ENTRY_POINT, 7n * 10n ** 15n),
          pay(ACCOUNT, EXCHANGE, 10n ** 18n),
          ...sold(10n ** 18n),
          pay(ACCOUNT, ELSEWHERE, 50n * 10n ** 18n),
          pay(ENTRY_POINT, BUNDLER, 4n * 10n ** 15n),
        ],
      }),
    );
    assert.deepEqual(brief(trades), [["sale", S1, ACCOUNT, 10n ** 18n, [], "ATTRIBUTED_BY_SINGLE_TRANSFER"]]);
  });

  test("a swap and a buy in one call: the swapped coin that reached the seller side", () => {
    // The buyer's USDC goes to a pool, which pays WETH to the router; the router unwraps it (no
    // transfer log) and buys with the coin, and sends the change back.
    const trades = attributeTransaction(
      tx({
        from: BUYER,
        to: ROUTER,
        nft: [nft(1n, S1, BUYER, 4)],
        fungible: [erc20(USDC, BUYER, POOL, 3_100_000_000n, 1), erc20(WETH, POOL, ROUTER, 10n ** 18n, 2)],
        native: [
          pay(WETH, ROUTER, 10n ** 18n),
          pay(ROUTER, EXCHANGE, 9n * 10n ** 17n),
          ...sold(9n * 10n ** 17n),
          pay(ROUTER, BUYER, 10n ** 17n),
        ],
      }),
    );
    assert.deepEqual(brief(trades), [
      ["sale", S1, BUYER, 9n * 10n ** 17n, [], "ATTRIBUTED_BY_SINGLE_TRANSFER"],
    ]);
  });

  test("a router that takes the NFT and unwraps what a swap paid it keeps nothing of the price", () => {
    const trades = attributeTransaction(
      tx({
        from: BUYER,
        to: ROUTER,
        nft: [nft(1n, S1, ROUTER, 4), nft(1n, ROUTER, BUYER, 5)],
        fungible: [erc20(USDC, BUYER, POOL, 3_100_000_000n, 1), erc20(WETH, POOL, ROUTER, 10n ** 18n, 2)],
        native: [
          pay(WETH, ROUTER, 10n ** 18n),
          pay(ROUTER, EXCHANGE, 9n * 10n ** 17n),
          ...sold(9n * 10n ** 17n),
          pay(ROUTER, BUYER, 10n ** 17n),
        ],
      }),
    );
    assert.deepEqual(brief(trades), [
      ["sale", S1, BUYER, 9n * 10n ** 17n, [], "ATTRIBUTED_BY_SINGLE_TRANSFER"],
    ]);
  });

  test("a multisend that buys one NFT and sends money elsewhere", () => {
    const SAFE: Address = "0x00000000000000000000000000000000000000af";
    const trades = attributeTransaction(
      tx({
        from: BUYER,
        to: SAFE,
        nft: [nft(1n, S1, SAFE, 1)],
        native: [
          pay(SAFE, ELSEWHERE, 50n * 10n ** 18n),
          pay(SAFE, EXCHANGE, 10n ** 18n),
          ...sold(10n ** 18n),
          pay(SAFE, S2, 3n * 10n ** 18n),
        ],
      }),
    );
    assert.deepEqual(brief(trades), [["sale", S1, SAFE, 10n ** 18n, [], "ATTRIBUTED_BY_SINGLE_TRANSFER"]]);
  });

  test("a loan that pays most of the price: the lender co-pays", () => {
    // The borrower sends 2, the lending contract takes the lender's 8 and buys; the NFT stays with
    // the lending contract as collateral.
    const trades = attributeTransaction(
      tx({
        from: BUYER,
        to: LOANS,
        value: 2n * 10n ** 18n,
        nft: [nft(1n, S1, LOANS, 2)],
        fungible: [erc20(WETH, LENDER, LOANS, 8n * 10n ** 18n, 1)],
        native: [
          pay(BUYER, LOANS, 2n * 10n ** 18n),
          pay(WETH, LOANS, 8n * 10n ** 18n),
          pay(LOANS, EXCHANGE, 10n * 10n ** 18n),
          ...sold(10n * 10n ** 18n),
        ],
      }),
    );
    assert.deepEqual(brief(trades), [
      ["sale", S1, LOANS, 10n * 10n ** 18n, [], "ATTRIBUTED_BY_RECIPIENT_NO_PAYMENT"],
    ]);
  });

  test("bought with any token: an aggregator swaps it, keeps a fee and buys", () => {
    const AGGREGATOR: Address = "0x00000000000000000000000000000000000000a6";
    const trades = attributeTransaction(
      tx({
        from: BUYER,
        to: AGGREGATOR,
        nft: [nft(1n, S1, AGGREGATOR, 5), nft(1n, AGGREGATOR, BUYER, 6)],
        fungible: [
          erc20(USDC, BUYER, AGGREGATOR, 3_000_000_000n, 1),
          erc20(USDC, AGGREGATOR, ELSEWHERE, 30_000_000n, 2),
          erc20(USDC, AGGREGATOR, POOL, 2_970_000_000n, 3),
        ],
        native: [
          pay(POOL, AGGREGATOR, 10n ** 18n),
          pay(AGGREGATOR, EXCHANGE, 10n ** 18n),
          ...sold(10n ** 18n),
        ],
      }),
    );
    assert.deepEqual(brief(trades), [["sale", S1, BUYER, 10n ** 18n, [], "ATTRIBUTED_BY_SINGLE_TRANSFER"]]);
  });

  test("a bidder's tokens pulled to the seller, its fee and royalty: the whole bid", () => {
    const trades = attributeTransaction(
      tx({
        from: S1,
        to: EXCHANGE,
        nft: [nft(1n, S1, BUYER, 1)],
        fungible: [
          erc20(WETH, BUYER, S1, 950n, 2),
          erc20(WETH, BUYER, FEES, 25n, 3),
          erc20(WETH, BUYER, ROYALTY, 25n, 4),
        ],
      }),
    );
    assert.deepEqual(brief(trades), [
      ["sale", S1, BUYER, 0n, [{ token: WETH, amount: 1000n }], "ATTRIBUTED_BY_SINGLE_TRANSFER"],
    ]);
  });

  test("two buyers in one bundle: each is priced with its own money", () => {
    const OTHER_ACCOUNT: Address = "0x00000000000000000000000000000000000000ad";
    const trades = attributeTransaction(
      tx({
        from: BUNDLER,
        to: ENTRY_POINT,
        nft: [nft(1n, S1, ACCOUNT, 1), nft(2n, S2, OTHER_ACCOUNT, 2)],
        native: [
          pay(ACCOUNT, ENTRY_POINT, 5n),
          pay(OTHER_ACCOUNT, ENTRY_POINT, 5n),
          pay(ACCOUNT, EXCHANGE, 1000n),
          ...sold(1000n, S1),
          pay(OTHER_ACCOUNT, EXCHANGE, 3000n),
          ...sold(3000n, S2),
          pay(ENTRY_POINT, BUNDLER, 10n),
        ],
      }),
    );
    assert.deepEqual(
      trades.map((t) => [t.buyer, t.native]),
      [
        [ACCOUNT, 1000n],
        [OTHER_ACCOUNT, 3000n],
      ],
    );
  });
});
