/**
 * The marketplace event table: every hard-coded topic recomputed from its signature, logs of each
 * layout read, and logs whose shape contradicts their declaration refused.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeAbiParameters, pad, toEventSelector, toHex } from "viem";
import { type Address, type Hex, ZERO_ADDRESS as ZERO } from "../../src/core/hex.ts";
import type { ChainLog } from "../../src/core/types.ts";
import * as markets from "../../src/sales/markets.ts";
import { decodeMarketEvent, decodePunkBid, MARKET_TOPICS, PUNK_BID_TOPICS } from "../../src/sales/markets.ts";

const SIGNATURES: Record<string, string> = {
  SEAPORT_ORDER_FULFILLED:
    "OrderFulfilled(bytes32,address,address,address,(uint8,address,uint256,uint256)[],(uint8,address,uint256,uint256,address)[])",
  BLUR_ORDERS_MATCHED:
    "OrdersMatched(address,address,(address,uint8,address,address,uint256,uint256,address,uint256,uint256,uint256,(uint16,address)[],uint256,bytes),bytes32,(address,uint8,address,address,uint256,uint256,address,uint256,uint256,uint256,(uint16,address)[],uint256,bytes),bytes32)",
  BLUR_EXECUTION:
    "Execution((address,uint256,uint256,address,uint8),bytes32,uint256,uint256,(address,uint16),((address,uint16),(address,uint16)),uint8)",
  BLUR_EXECUTION_721_PACKED: "Execution721Packed(bytes32,uint256,uint256)",
  BLUR_EXECUTION_721_TAKER_FEE_PACKED: "Execution721TakerFeePacked(bytes32,uint256,uint256,uint256)",
  BLUR_EXECUTION_721_MAKER_FEE_PACKED: "Execution721MakerFeePacked(bytes32,uint256,uint256,uint256)",
  LOOKSRARE_TAKER_ASK:
    "TakerAsk(bytes32,uint256,address,address,address,address,address,uint256,uint256,uint256)",
  LOOKSRARE_TAKER_BID:
    "TakerBid(bytes32,uint256,address,address,address,address,address,uint256,uint256,uint256)",
  LOOKSRARE_V2_TAKER_ASK:
    "TakerAsk((bytes32,uint256,bool),address,address,uint256,address,address,uint256[],uint256[],address[2],uint256[3])",
  LOOKSRARE_V2_TAKER_BID:
    "TakerBid((bytes32,uint256,bool),address,address,uint256,address,address,uint256[],uint256[],address[2],uint256[3])",
  X2Y2_EV_INVENTORY:
    "EvInventory(bytes32,address,address,uint256,uint256,uint256,uint256,uint256,address,bytes,(uint256,bytes),(uint8,uint256,uint256,uint256,bytes32,address,bytes,uint256,uint256,uint256,(uint256,address)[]))",
  WYVERN_ORDERS_MATCHED: "OrdersMatched(bytes32,bytes32,address,address,uint256,bytes32)",
  PUNK_BOUGHT: "PunkBought(uint256,uint256,address,address)",
  PUNK_BID_ENTERED: "PunkBidEntered(uint256,uint256,address)",
  PUNK_BID_WITHDRAWN: "PunkBidWithdrawn(uint256,uint256,address)",
};

const EXCHANGE: Address = "0x00000000000000adc04c56bf30ac9d3c0aaf14dc";
const ALICE: Address = "0x1111111111111111111111111111111111111111";
const BOB: Address = "0x2222222222222222222222222222222222222222";

function log(topics: Hex[], data: Hex, address: Address = EXCHANGE): ChainLog {
  return {
    address,
    topics,
    data,
    blockNumber: 100,
    blockHash: pad("0x1"),
    logIndex: 7,
    transactionHash: pad("0x2"),
    transactionIndex: 3,
  };
}

const word = (n: bigint | number) => pad(toHex(n)).slice(2);
const words = (n: number) => `0x${"00".repeat(32 * n)}` as Hex;
const topic = (a: Address) => pad(a);

describe("marketplace event topics", () => {
  for (const [name, signature] of Object.entries(SIGNATURES)) {
    test(`${name} is the selector of ${signature.split("(")[0]}`, () => {
      const constant = (markets as unknown as Record<string, Hex>)[name];
      assert.equal(constant, toEventSelector(signature));
    });
  }

  test("every market event is asked for, and only those", () => {
    const bids = [SIGNATURES.PUNK_BID_ENTERED, SIGNATURES.PUNK_BID_WITHDRAWN] as string[];
    const expected = Object.values(SIGNATURES)
      .filter((s) => !bids.includes(s))
      .map((s) => toEventSelector(s));
    assert.deepEqual([...MARKET_TOPICS].sort(), expected.sort());
    assert.deepEqual([...PUNK_BID_TOPICS].sort(), bids.map((s) => toEventSelector(s)).sort());
  });
});

describe("decodeMarketEvent", () => {
  const seaportData = encodeAbiParameters(
    [
      { type: "bytes32" },
      { type: "address" },
      {
        type: "tuple[]",
        components: [{ type: "uint8" }, { type: "address" }, { type: "uint256" }, { type: "uint256" }],
      },
      {
        type: "tuple[]",
        components: [
          { type: "uint8" },
          { type: "address" },
          { type: "uint256" },
          { type: "uint256" },
          { type: "address" },
        ],
      },
    ],
    [pad("0xab"), BOB, [[2, ALICE, 5n, 1n]], [[0, ALICE, 0n, 10n ** 18n, ALICE]]],
  );

  test("labels each layout with its market", () => {
    const cases: [Hex[], Hex, string][] = [
      [[markets.SEAPORT_ORDER_FULFILLED, topic(ALICE), topic(BOB)], seaportData, "seaport"],
      [[markets.BLUR_EXECUTION_721_PACKED], words(3), "blur"],
      [[markets.BLUR_EXECUTION_721_TAKER_FEE_PACKED], words(4), "blur"],
      [[markets.BLUR_EXECUTION_721_MAKER_FEE_PACKED], words(4), "blur"],
      [[markets.BLUR_EXECUTION], words(15), "blur"],
      [[markets.BLUR_ORDERS_MATCHED, topic(ALICE), topic(BOB)], words(40), "blur"],
      [[markets.LOOKSRARE_TAKER_ASK, topic(ALICE), topic(BOB), topic(EXCHANGE)], words(7), "looksrare"],
      [[markets.LOOKSRARE_TAKER_BID, topic(ALICE), topic(BOB), topic(EXCHANGE)], words(7), "looksrare"],
      [[markets.LOOKSRARE_V2_TAKER_ASK], words(19), "looksrare"],
      [[markets.LOOKSRARE_V2_TAKER_BID], words(19), "looksrare"],
      [[markets.X2Y2_EV_INVENTORY, pad("0x99")], words(30), "x2y2"],
      [[markets.WYVERN_ORDERS_MATCHED, topic(ALICE), topic(BOB), pad("0x0")], words(3), "wyvern"],
    ];
    for (const [topics, data, market] of cases) {
      const event = decodeMarketEvent(log(topics, data));
      assert.deepEqual(
        { market: event?.market, contract: event?.contract, logIndex: event?.logIndex },
        { market, contract: EXCHANGE, logIndex: 7 },
        market,
      );
    }
  });

  const seaportOrder = (
    offer: [number, Address, bigint, bigint][],
    consideration: [number, Address, bigint, bigint, Address][],
  ) =>
    encodeAbiParameters(
      [
        { type: "bytes32" },
        { type: "address" },
        {
          type: "tuple[]",
          components: [{ type: "uint8" }, { type: "address" }, { type: "uint256" }, { type: "uint256" }],
        },
        {
          type: "tuple[]",
          components: [
            { type: "uint8" },
            { type: "address" },
            { type: "uint256" },
            { type: "uint256" },
            { type: "address" },
          ],
        },
      ],
      [pad("0xab"), BOB, offer, consideration],
    );
  const listingOf = (topics: Hex[], data: Hex) => decodeMarketEvent(log(topics, data))?.listing;
  const SEAPORT_TOPICS = [markets.SEAPORT_ORDER_FULFILLED, topic(ALICE), topic(BOB)];
  const NFT = "0x00000000000000000000000000000000000000c1" as Address;
  const WETH = "0x00000000000000000000000000000000000000e1" as Address;
  const FEES = "0x00000000000000000000000000000000000000fe" as Address;

  test("a Seaport listing of one NFT is priced at its whole consideration, fees and royalties included", () => {
    const data = seaportOrder(
      [[2, NFT, 5n, 1n]],
      [
        [0, ZERO, 0n, 900n, ALICE],
        [0, ZERO, 0n, 25n, FEES],
        [0, ZERO, 0n, 75n, FEES],
      ],
    );
    assert.deepEqual(listingOf(SEAPORT_TOPICS, data), { contract: NFT, tokenId: 5n, price: 1000n });
  });

  test("a Seaport offer for one NFT is priced at what it offered", () => {
    const data = seaportOrder(
      [[1, WETH, 0n, 2000n]],
      [
        [2, NFT, 9n, 1n, BOB],
        [1, WETH, 0n, 50n, FEES],
      ],
    );
    assert.deepEqual(listingOf(SEAPORT_TOPICS, data), { contract: NFT, tokenId: 9n, price: 2000n });
  });

  test("a Seaport order of several NFTs, several units, or mixed currencies states no one NFT's price", () => {
    const orders = [
      seaportOrder(
        [
          [2, NFT, 5n, 1n],
          [2, NFT, 6n, 1n],
        ],
        [[0, ZERO, 0n, 900n, ALICE]],
      ),
      seaportOrder([[3, NFT, 5n, 2n]], [[0, ZERO, 0n, 900n, ALICE]]),
      seaportOrder(
        [[2, NFT, 5n, 1n]],
        [
          [0, ZERO, 0n, 900n, ALICE],
          [1, WETH, 0n, 100n, FEES],
        ],
      ),
      seaportOrder([[2, NFT, 5n, 1n]], [[2, NFT, 6n, 1n, ALICE]]),
    ];
    for (const data of orders) assert.equal(listingOf(SEAPORT_TOPICS, data), undefined);
  });

  test("Blur's packed executions give the token id and price packed beside the trader and collection", () => {
    const packed = (tokenId: bigint, listingIndex: bigint, price: bigint) =>
      `0x${word(0xabn)}${word((tokenId << 168n) | (listingIndex << 160n) | BigInt(ALICE))}${word((price << 160n) | BigInt(NFT))}` as Hex;
    const price = 95n * 10n ** 15n;
    assert.deepEqual(listingOf([markets.BLUR_EXECUTION_721_PACKED], packed(599n, 3n, price)), {
      contract: NFT,
      tokenId: 599n,
      price,
    });
    const withFee = `${packed(1772n, 0n, price)}${word(0x32n)}` as Hex;
    for (const topic0 of [
      markets.BLUR_EXECUTION_721_MAKER_FEE_PACKED,
      markets.BLUR_EXECUTION_721_TAKER_FEE_PACKED,
    ]) {
      assert.deepEqual(listingOf([topic0], withFee), { contract: NFT, tokenId: 1772n, price });
    }
  });

  test("Blur's full execution and LooksRare's taker events of one unit give its price", () => {
    const blur = (amount: bigint) =>
      `0x${[ALICE, 42n, amount, NFT, 0n, 0xabn, 0n, 7000n, 0n, 0n, 0n, 0n, 0n, 0n, 0n].map((v) => word(BigInt(v))).join("")}` as Hex;
    assert.deepEqual(listingOf([markets.BLUR_EXECUTION], blur(1n)), {
      contract: NFT,
      tokenId: 42n,
      price: 7000n,
    });
    assert.equal(listingOf([markets.BLUR_EXECUTION], blur(2n)), undefined);
    const looks = (amount: bigint) =>
      `0x${[0xabn, 1n, WETH, NFT, 43n, amount, 8000n].map((v) => word(BigInt(v))).join("")}` as Hex;
    const topics = [markets.LOOKSRARE_TAKER_ASK, topic(ALICE), topic(BOB), topic(EXCHANGE)];
    assert.deepEqual(listingOf(topics, looks(1n)), { contract: NFT, tokenId: 43n, price: 8000n });
    assert.equal(listingOf(topics, looks(3n)), undefined);
  });

  test("a PunkBought gives the punk, its stated value and its parties", () => {
    const event = decodeMarketEvent(
      log([markets.PUNK_BOUGHT, pad("0x1a0b"), topic(ALICE), topic(BOB)], `0x${word(66n * 10n ** 18n)}`),
    );
    assert.deepEqual(event, {
      market: "cryptopunks",
      contract: EXCHANGE,
      logIndex: 7,
      punk: { index: 6667n, value: 66n * 10n ** 18n, from: ALICE, to: BOB },
    });
  });

  test("refuses logs whose shape contradicts the event", () => {
    const bad: [Hex[], Hex][] = [
      // A topic too few or too many.
      [[markets.SEAPORT_ORDER_FULFILLED, topic(ALICE)], seaportData],
      [[markets.WYVERN_ORDERS_MATCHED, topic(ALICE), topic(BOB)], words(3)],
      [[markets.BLUR_EXECUTION_721_PACKED, pad("0x1")], words(3)],
      [[markets.PUNK_BOUGHT, pad("0x1"), topic(ALICE)], words(1)],
      // Data of the wrong length: short, long, or not whole words.
      [[markets.BLUR_EXECUTION_721_PACKED], words(4)],
      [[markets.BLUR_EXECUTION_721_TAKER_FEE_PACKED], words(3)],
      [[markets.BLUR_EXECUTION], words(14)],
      [[markets.LOOKSRARE_TAKER_ASK, topic(ALICE), topic(BOB), topic(EXCHANGE)], words(6)],
      [[markets.SEAPORT_ORDER_FULFILLED, topic(ALICE), topic(BOB)], words(5)],
      [[markets.SEAPORT_ORDER_FULFILLED, topic(ALICE), topic(BOB)], `${seaportData}00`],
      [[markets.LOOKSRARE_V2_TAKER_BID], words(16)],
      [[markets.X2Y2_EV_INVENTORY, pad("0x99")], words(10)],
      [[markets.PUNK_BOUGHT, pad("0x1"), topic(ALICE), topic(BOB)], "0x"],
      // Not hex.
      [[markets.WYVERN_ORDERS_MATCHED, topic(ALICE), topic(BOB), pad("0x0")], `0x${"zz".repeat(96)}`],
    ];
    for (const [topics, data] of bad) assert.equal(decodeMarketEvent(log(topics, data)), undefined);
  });

  test("ignores other events and logs with no topic", () => {
    assert.equal(
      decodeMarketEvent(log([toEventSelector("Transfer(address,address,uint256)")], words(3))),
      undefined,
    );
    assert.equal(decodeMarketEvent(log([], "0x")), undefined);
  });
});

describe("decodePunkBid", () => {
  const value = `0x${word(70n * 10n ** 18n)}` as Hex;

  test("an entered bid carries its value", () => {
    assert.deepEqual(decodePunkBid(log([markets.PUNK_BID_ENTERED, pad("0x2a"), topic(BOB)], value)), {
      contract: EXCHANGE,
      punkIndex: 42n,
      bidder: BOB,
      value: 70n * 10n ** 18n,
      blockNumber: 100,
      logIndex: 7,
    });
  });

  test("a withdrawn bid leaves a bid of 0", () => {
    assert.deepEqual(decodePunkBid(log([markets.PUNK_BID_WITHDRAWN, pad("0x2a"), topic(BOB)], value)), {
      contract: EXCHANGE,
      punkIndex: 42n,
      bidder: BOB,
      value: 0n,
      blockNumber: 100,
      logIndex: 7,
    });
  });

  test("refuses malformed bids and other events", () => {
    assert.equal(decodePunkBid(log([markets.PUNK_BID_ENTERED, pad("0x2a")], value)), undefined);
    assert.equal(
      decodePunkBid(log([markets.PUNK_BID_ENTERED, pad("0x2a"), topic(BOB)], words(2))),
      undefined,
    );
    assert.equal(decodePunkBid(log([markets.PUNK_BOUGHT, pad("0x2a"), topic(BOB)], value)), undefined);
  });
});
