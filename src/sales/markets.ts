import { type Address, type Hex, hexToBigInt, wordToAddress } from "../core/hex.ts";
import type { ChainLog } from "../core/types.ts";
import type { Listing, MarketEvent, PunkBid } from "./types.ts";

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
  const listing = listingOf(topic0.toLowerCase() as Hex, log.data);
  if (listing && listing.price > 0n) event.listing = listing;
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

const MASK_160 = (1n << 160n) - 1n;
const MASK_88 = (1n << 88n) - 1n;

/** Word `i` of a log's data (checked by `fits` to be whole words), as an unsigned integer. */
function wordAt(data: Hex, i: number): bigint | undefined {
  const start = 2 + i * 64;
  if (data.length < start + 64) return undefined;
  return BigInt(`0x${data.slice(start, start + 64)}`);
}

function addressOf(word: bigint): Address {
  return `0x${(word & MASK_160).toString(16).padStart(40, "0")}` as Address;
}

/**
 * The NFT and full price an order event states, for the events that state them for one NFT:
 * Blur v2's packed executions (token id in the top 11 bytes of the second word, above the listing
 * index and the trader; the price in the 11 bytes above the collection in the third), Blur v2's
 * `Execution` of one unit, LooksRare v1's `TakerAsk`/`TakerBid` of one unit, and a Seaport order
 * that traded one NFT for payments in one currency.
 */
function listingOf(topic0: Hex, data: Hex): Listing | undefined {
  switch (topic0) {
    case BLUR_EXECUTION_721_PACKED:
    case BLUR_EXECUTION_721_TAKER_FEE_PACKED:
    case BLUR_EXECUTION_721_MAKER_FEE_PACKED: {
      const trader = wordAt(data, 1);
      const collection = wordAt(data, 2);
      if (trader === undefined || collection === undefined) return undefined;
      return {
        contract: addressOf(collection),
        tokenId: trader >> 168n,
        price: (collection >> 160n) & MASK_88,
      };
    }
    case BLUR_EXECUTION: {
      // Transfer(trader, id, amount, collection, assetType), orderHash, listingIndex, price, ...
      if (wordAt(data, 2) !== 1n) return undefined;
      const [id, collection, price] = [wordAt(data, 1), wordAt(data, 3), wordAt(data, 7)];
      if (id === undefined || collection === undefined || price === undefined) return undefined;
      return { contract: addressOf(collection), tokenId: id, price };
    }
    case LOOKSRARE_TAKER_ASK:
    case LOOKSRARE_TAKER_BID: {
      // orderHash, orderNonce, currency, collection, tokenId, amount, price
      if (wordAt(data, 5) !== 1n) return undefined;
      const [collection, id, price] = [wordAt(data, 3), wordAt(data, 4), wordAt(data, 6)];
      if (id === undefined || collection === undefined || price === undefined) return undefined;
      return { contract: addressOf(collection), tokenId: id, price };
    }
    case SEAPORT_ORDER_FULFILLED:
      return seaportListing(data);
    default:
      return undefined;
  }
}

/** Seaport's item types: 0 native, 1 ERC-20, 2 ERC-721, 3 ERC-1155, 4 and 5 their criteria forms. */
const NATIVE_ITEM = 0n;
const ERC20_ITEM = 1n;
const MAX_ITEMS = 256;

interface SeaportItem {
  itemType: bigint;
  token: Address;
  identifier: bigint;
  amount: bigint;
}

/** An array of `width`-word items at the byte offset stored in word `at`, or undefined if it does not fit. */
function seaportItems(data: Hex, at: number, width: number): SeaportItem[] | undefined {
  const offset = wordAt(data, at);
  if (offset === undefined || offset % 32n !== 0n || offset > BigInt(data.length)) return undefined;
  const head = Number(offset / 32n);
  const length = wordAt(data, head);
  if (length === undefined || length > BigInt(MAX_ITEMS)) return undefined;
  const items: SeaportItem[] = [];
  for (let i = 0; i < Number(length); i++) {
    const base = head + 1 + i * width;
    const [itemType, token, identifier, amount] = [0, 1, 2, 3].map((k) => wordAt(data, base + k));
    if (itemType === undefined || token === undefined || identifier === undefined || amount === undefined) {
      return undefined;
    }
    if (token > MASK_160 || itemType > 5n) return undefined;
    items.push({ itemType, token: addressOf(token), identifier, amount });
  }
  return items;
}

/**
 * A Seaport order of one NFT (one unit) against payments in one currency: a listing, whose
 * consideration (seller, fees, royalties) is its price, or an offer, whose offered amount is.
 */
function seaportListing(data: Hex): Listing | undefined {
  // orderHash, recipient, offer (SpentItem: 4 words), consideration (ReceivedItem: 5 words)
  const offer = seaportItems(data, 2, 4);
  const consideration = seaportItems(data, 3, 5);
  if (!offer || !consideration) return undefined;
  const isPayment = (item: SeaportItem) => item.itemType === NATIVE_ITEM || item.itemType === ERC20_ITEM;
  // One unit of one NFT, and nothing else.
  const single = (items: SeaportItem[]) =>
    items.length === 1 && items[0] && !isPayment(items[0]) && items[0].amount === 1n ? items[0] : undefined;
  // Every item a payment, all in one currency: their sum.
  const priceOf = (items: SeaportItem[]) => {
    const currency = items[0]?.token;
    if (items.length === 0 || items.some((item) => !isPayment(item) || item.token !== currency))
      return undefined;
    return items.reduce((sum, item) => sum + item.amount, 0n);
  };
  const listed = single(offer);
  if (listed) {
    const price = priceOf(consideration);
    return price ? { contract: listed.token, tokenId: listed.identifier, price } : undefined;
  }
  const wanted = consideration.filter((item) => !isPayment(item));
  const bought = wanted.length === 1 && wanted[0]?.amount === 1n ? wanted[0] : undefined;
  if (!bought) return undefined;
  const price = priceOf(offer);
  return price ? { contract: bought.token, tokenId: bought.identifier, price } : undefined;
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
