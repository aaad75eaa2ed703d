import { type Address, type Hex, hexToBigInt, wordToAddress } from "../core/hex.ts";
import type { ChainLog } from "../core/types.ts";
import type { MarketEvent, PunkBid } from "./types.ts";

/*
 * Topic0 of the marketplace events a sale is labelled from. Spelled out so that reading them needs
 * no hashing library; a test recomputes each from its signature.
 */

/** Seaport 1.1 to 1.6 `OrderFulfilled(bytes32,address indexed,address indexed,address,SpentItem[],ReceivedItem[])`. */
export const SEAPORT_ORDER_FULFILLED: Hex =
  "0x9d9af8e38d66c62e2c12f0225249fd9d721c54b83f48d9352c97c6cacdcb6f31";
/** Blur v1 `OrdersMatched(address indexed maker, address indexed taker, Order sell, bytes32, Order buy, bytes32)`. */
export const BLUR_ORDERS_MATCHED: Hex = "0x61cbb2a3dee0b6064c2e681aadd61677fb4ef319f0b547508d495626f5a62f64";
/** Blur v2 `Execution(Transfer,bytes32,uint256,uint256,FeeRate,Fees,OrderType)`, all static. */
export const BLUR_EXECUTION: Hex = "0xf2f66294df6fae7ac681cbe2f6d91c6904485929679dce263e8f6539b7d5c559";
/** Blur v2 `Execution721Packed(bytes32,uint256,uint256)`. */
export const BLUR_EXECUTION_721_PACKED: Hex =
  "0x1d5e12b51dee5e4d34434576c3fb99714a85f57b0fd546ada4b0bddd736d12b2";
/** Blur v2 `Execution721TakerFeePacked(bytes32,uint256,uint256,uint256)`. */
export const BLUR_EXECUTION_721_TAKER_FEE_PACKED: Hex =
  "0x0fcf17fac114131b10f37b183c6a60f905911e52802caeeb3e6ea210398b81ab";
/** Blur v2 `Execution721MakerFeePacked(bytes32,uint256,uint256,uint256)`. */
export const BLUR_EXECUTION_721_MAKER_FEE_PACKED: Hex =
  "0x7dc5c0699ac8dd5250cbe368a2fc3b4a2daadb120ad07f6cccea29f83482686e";
/** LooksRare v1 `TakerAsk(bytes32,uint256,address indexed,address indexed,address indexed,address,address,uint256,uint256,uint256)`. */
export const LOOKSRARE_TAKER_ASK: Hex = "0x68cd251d4d267c6e2034ff0088b990352b97b2002c0476587d0c4da889c11330";
/** LooksRare v1 `TakerBid`, the same fields. */
export const LOOKSRARE_TAKER_BID: Hex = "0x95fb6205e23ff6bda16a2d1dba56b9ad7c783f67c96fa149785052f47696f2be";
/** LooksRare v2 `TakerAsk((bytes32,uint256,bool),address,address,uint256,address,address,uint256[],uint256[],address[2],uint256[3])`. */
export const LOOKSRARE_V2_TAKER_ASK: Hex =
  "0x9aaa45d6db2ef74ead0751ea9113263d1dec1b50cea05f0ca2002cb8063564a4";
/** LooksRare v2 `TakerBid`, the same layout. */
export const LOOKSRARE_V2_TAKER_BID: Hex =
  "0x3ee3de4684413690dee6fff1a0a4f92916a1b97d1c5a83cdf24671844306b2e3";
/** X2Y2 `EvInventory(bytes32 indexed itemHash, …, OrderItem item, SettleDetail detail)`. */
export const X2Y2_EV_INVENTORY: Hex = "0x3cbb63f144840e5b1b0a38a7c19211d2e89de4d7c5faf8b2d3c1776c302d1d33";
/** Wyvern (OpenSea v1/v2) `OrdersMatched(bytes32,bytes32,address indexed,address indexed,uint256,bytes32 indexed)`. */
export const WYVERN_ORDERS_MATCHED: Hex =
  "0xc4109843e0b7d514e4c093114b863f8e7d8d9a458c372cd51bfe526b588006c9";
/** CryptoPunks `PunkBought(uint256 indexed,uint256,address indexed,address indexed)`. */
export const PUNK_BOUGHT: Hex = "0x58e5d5a525e3b40bc15abaa38b5882678db1ee68befd2f60bafe3a7fd06db9e3";
/** CryptoPunks `PunkBidEntered(uint256 indexed,uint256,address indexed)`. */
export const PUNK_BID_ENTERED: Hex = "0x5b859394fabae0c1ba88baffe67e751ab5248d2e879028b8c8d6897b0519f56a";
/** CryptoPunks `PunkBidWithdrawn(uint256 indexed,uint256,address indexed)`. */
export const PUNK_BID_WITHDRAWN: Hex = "0x6f30e1ee4d81dcc7a8a478577f65d2ed2edb120565960ac45fe7c50551c87932";

/**
 * How each event is laid out: its topic count and its data length in bytes, exact for static
 * events, a minimum (the head and empty arrays) for those with dynamic fields.
 */
interface Layout {
  market: string;
  topics: number;
  bytes: number;
  dynamic?: true;
}

const WORD = 32;

const LAYOUTS: ReadonlyMap<Hex, Layout> = new Map<Hex, Layout>([
  // orderHash, recipient, two offsets, two array lengths.
  [SEAPORT_ORDER_FULFILLED, { market: "seaport", topics: 3, bytes: 6 * WORD, dynamic: true }],
  // Two order offsets and two hashes.
  [BLUR_ORDERS_MATCHED, { market: "blur", topics: 3, bytes: 4 * WORD, dynamic: true }],
  [BLUR_EXECUTION, { market: "blur", topics: 1, bytes: 15 * WORD }],
  [BLUR_EXECUTION_721_PACKED, { market: "blur", topics: 1, bytes: 3 * WORD }],
  [BLUR_EXECUTION_721_TAKER_FEE_PACKED, { market: "blur", topics: 1, bytes: 4 * WORD }],
  [BLUR_EXECUTION_721_MAKER_FEE_PACKED, { market: "blur", topics: 1, bytes: 4 * WORD }],
  [LOOKSRARE_TAKER_ASK, { market: "looksrare", topics: 4, bytes: 7 * WORD }],
  [LOOKSRARE_TAKER_BID, { market: "looksrare", topics: 4, bytes: 7 * WORD }],
  // A 15-word head (the nonce tuple and fixed arrays inline) and two array lengths.
  [LOOKSRARE_V2_TAKER_ASK, { market: "looksrare", topics: 1, bytes: 17 * WORD, dynamic: true }],
  [LOOKSRARE_V2_TAKER_BID, { market: "looksrare", topics: 1, bytes: 17 * WORD, dynamic: true }],
  // An 11-word head; the tails are at least a length word each.
  [X2Y2_EV_INVENTORY, { market: "x2y2", topics: 2, bytes: 11 * WORD, dynamic: true }],
  [WYVERN_ORDERS_MATCHED, { market: "wyvern", topics: 4, bytes: 3 * WORD }],
  [PUNK_BOUGHT, { market: "cryptopunks", topics: 4, bytes: WORD }],
]);

/** Topic0 of every marketplace event decodeMarketEvent reads. */
export const MARKET_TOPICS: readonly Hex[] = [...LAYOUTS.keys()];

/** Topic0 of the CryptoPunks bid events decodePunkBid reads. */
export const PUNK_BID_TOPICS: readonly Hex[] = [PUNK_BID_ENTERED, PUNK_BID_WITHDRAWN];

const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const TOPIC = /^0x[0-9a-fA-F]{64}$/;

/** Whether the log has exactly `topics` well-formed topics and `bytes` of data (at least, for dynamic events). */
function fits(log: ChainLog, topics: number, bytes: number, dynamic = false): boolean {
  if (log.topics.length !== topics || !log.topics.every((t) => TOPIC.test(t))) return false;
  if (!HEX_DATA.test(log.data)) return false;
  const length = (log.data.length - 2) / 2;
  return dynamic ? length >= bytes && length % WORD === 0 : length === bytes;
}

/**
 * The marketplace a log says traded, or undefined for any other log, or one whose layout does not
 * match its event's declaration (another contract's event of the same name, or a forged one).
 */
export function decodeMarketEvent(log: ChainLog): MarketEvent | undefined {
  const topic0 = log.topics[0];
  if (topic0 === undefined) return undefined;
  const layout = LAYOUTS.get(topic0.toLowerCase() as Hex);
  if (!layout || !fits(log, layout.topics, layout.bytes, layout.dynamic)) return undefined;
  const event: MarketEvent = { market: layout.market, contract: log.address, logIndex: log.logIndex };
  if (layout.market === "cryptopunks") {
    const [, index, from, to] = log.topics as [Hex, Hex, Hex, Hex];
    event.punk = {
      index: hexToBigInt(index),
      value: hexToBigInt(log.data),
      from: wordToAddress(from),
      to: wordToAddress(to),
    };
  }
  return event;
}

/** A CryptoPunks bid event: an entered bid with its value, or a withdrawn one (value 0). */
export interface PunkBidEvent extends PunkBid {
  blockNumber: number;
  logIndex: number;
}

/** A `PunkBidEntered` or `PunkBidWithdrawn`, or undefined for any other or malformed log. */
export function decodePunkBid(log: ChainLog): PunkBidEvent | undefined {
  const topic0 = log.topics[0]?.toLowerCase();
  if (topic0 !== PUNK_BID_ENTERED && topic0 !== PUNK_BID_WITHDRAWN) return undefined;
  if (!fits(log, 3, WORD)) return undefined;
  const [, index, bidder] = log.topics as [Hex, Hex, Hex];
  return {
    contract: log.address,
    punkIndex: hexToBigInt(index),
    bidder: wordToAddress(bidder) as Address,
    // A withdrawal logs the withdrawn amount, but what it leaves open is no bid.
    value: topic0 === PUNK_BID_ENTERED ? hexToBigInt(log.data) : 0n,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
  };
}
