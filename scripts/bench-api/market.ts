/**
 * The shape of the synthetic market the API benchmark loads: its collections, wallets, payment
 * tokens and pools, sized from the number of sales. Everything is a pure function of the seed, of
 * the instant the history ends at and of the optional `MarketShape` (the scale benchmark's
 * mainnet-like market: two years, a long tail of collections and airdropped spam).
 */
import type { Address } from "../../src/core/hex.ts";
import { Prng } from "../../src/demo/prng.ts";
import type { PoolDescription, UsdToken } from "../../src/rates/pools.ts";

export const DAY = 86_400;
/** Seconds between blocks, as on Ethereum. */
export const BLOCK_SECONDS = 12;

export interface MarketSize {
  sales: number;
  collections: number;
  tokens: number;
  wallets: number;
}

/** 1,000,000 sales give 2,000 collections, 200,000 tokens and 100,000 wallets; smaller sizes shrink with them. */
export function marketSize(sales: number): MarketSize {
  const collections = Math.max(10, Math.round(sales / 500));
  return {
    sales,
    collections,
    tokens: Math.max(collections * 20, Math.round(sales / 5)),
    wallets: Math.max(200, Math.round(sales / 10)),
  };
}

/**
 * What the scale benchmark sets beyond the number of sales; unset, a market is the API benchmark's
 * (a year, sizes from `marketSize`, a tenth of a plain transfer per sale, no spam).
 */
export interface MarketShape {
  days?: number;
  /** Traded collections. */
  collections?: number;
  /** Tokens of the traded collections. */
  tokens?: number;
  wallets?: number;
  /** Plain transfers (gifts, wallet moves) over the traded collections, spread by `transferSkew`. */
  plainTransfers?: number;
  /** Zipf exponent of plain transfers over the collections' ranks. */
  transferSkew?: number;
  /** Spam collections beyond the traded ones: ERC-1155 tokens airdropped and never traded. */
  spamCollections?: number;
  /** Airdrop transfers over the spam collections. */
  airdrops?: number;
  /**
   * NFTs dropped into the market's first wallet, its busiest trader too: each a new token of a
   * collection of its own ("Collector Vault", ERC-721), never moved again. A wallet that large is
   * what a wallet's NFTs are paged over.
   */
  collectorNfts?: number;
  /**
   * The second most traded collection is also offered on a CryptoPunks-style market: each of its
   * sales comes with a public offer on another of its tokens, and a sale or a move ends the offer
   * on what it moves, so that its floor is read over a history of offers.
   */
  punkOffers?: boolean;
}

/**
 * The API benchmark's market beyond its sales: spam airdropped to wallets across the list (ERC-1155
 * tokens with thousands of owners), a collector holding a tenth as many NFTs as there are sales,
 * and punk offers. Unset, none of these are drawn (the scale benchmark's stores built before them).
 */
export function apiMarketShape(sales: number): MarketShape {
  const { collections } = marketSize(sales);
  return {
    spamCollections: Math.max(2, Math.round(collections / 10)),
    airdrops: Math.round(sales / 4),
    collectorNfts: Math.round(sales / 10),
    punkOffers: true,
  };
}

export interface Collection {
  /** 0 is the most traded; spam collections come after every traded one. */
  rank: number;
  address: Address;
  name: string;
  symbol: string;
  standard: "erc721" | "erc1155";
  /** Token ids: 0.. for ERC-721, 1.. for ERC-1155. */
  supply: number;
  /** Index of its first token among all tokens of the market. */
  firstToken: number;
  sales: number;
  /** Gifts and wallet moves over its trading period. */
  plainTransfers: number;
  /** Spam: its tokens are airdropped (`airdrops` transfers) and never traded or moved. */
  spam: boolean;
  airdrops: number;
  /**
   * A collector's vault: its `airdrops` each mint a new token to this wallet (an index into
   * `wallets`), never traded or moved.
   */
  heldBy?: number;
  /** Its tokens are offered on a CryptoPunks-style market as it trades (ERC-721 only). */
  punkOffers?: boolean;
  /** Unix seconds of its deployment; its tokens are minted in the `mintSeconds` after it. */
  deployedAt: number;
  mintSeconds: number;
  /** Its deployer, paid its royalty on every sale. */
  creator: Address;
  royaltyBps: bigint;
  /** Typical price of one unit, in ether. */
  floorEth: number;
}

export interface PaymentToken {
  address: Address;
  name: string;
  symbol: string;
  decimals: number;
}

export interface Market {
  size: MarketSize;
  seed: string;
  /** Days of history. */
  days: number;
  /** Unix seconds of block 0, an hour before the history starts. */
  genesisTime: number;
  /** Unix seconds the history ends at: the head block's time is at most this. */
  now: number;
  collections: Collection[];
  wallets: Address[];
  weth: PaymentToken;
  /** An ERC-20 sales are paid in, priced through its pool against WETH. */
  ape: PaymentToken;
  usdc: PaymentToken;
  pools: { wethUsdc: PoolDescription; apeWeth: PoolDescription };
  usdTokens: UsdToken[];
  marketplaces: { seaport: Address; blur: Address; desk: Address; feeRecipient: Address };
}

const ADJECTIVES = [
  "Bored",
  "Lazy",
  "Cosmic",
  "Pixel",
  "Lucky",
  "Neon",
  "Silent",
  "Golden",
  "Wild",
  "Tiny",
  "Grumpy",
  "Brave",
  "Sleepy",
  "Mutant",
  "Rare",
  "Clever",
  "Frozen",
  "Hidden",
  "Electric",
  "Ancient",
  "Happy",
  "Rusty",
  "Velvet",
  "Crystal",
  "Shadow",
  "Solar",
  "Lunar",
  "Misty",
  "Chunky",
  "Spicy",
  "Jolly",
  "Noble",
  "Funky",
  "Cyber",
  "Retro",
  "Savage",
  "Gentle",
  "Astro",
  "Doodle",
  "Wobbly",
];
const NOUNS = [
  "Apes",
  "Otters",
  "Punks",
  "Cats",
  "Owls",
  "Foxes",
  "Pandas",
  "Robots",
  "Wizards",
  "Ghosts",
  "Penguins",
  "Frogs",
  "Dragons",
  "Whales",
  "Bears",
  "Kittens",
  "Llamas",
  "Sharks",
  "Toads",
  "Monkeys",
  "Lions",
  "Wolves",
  "Koalas",
  "Goblins",
  "Knights",
  "Aliens",
  "Astronauts",
  "Skulls",
  "Mushrooms",
  "Turtles",
  "Hounds",
  "Birds",
  "Rabbits",
  "Yetis",
  "Ducks",
  "Moles",
  "Bees",
  "Crabs",
  "Snails",
  "Dinos",
  "Badgers",
  "Gnomes",
  "Elves",
  "Pirates",
  "Ninjas",
  "Samurai",
  "Vikings",
  "Clowns",
  "Cubes",
  "Blobs",
];

/** Plain transfers per sale when the shape does not set them. */
const TRANSFERS_PER_SALE = 0.1;

export function planMarket(sales: number, seed: string, now: number, shape: MarketShape = {}): Market {
  const sized = marketSize(sales);
  const regular = {
    sales,
    collections: shape.collections ?? sized.collections,
    tokens: shape.tokens ?? sized.tokens,
    wallets: shape.wallets ?? sized.wallets,
  };
  const days = shape.days ?? 365;
  const random = new Prng(`${seed}:market`);
  const address = (): Address => {
    let hex = "";
    for (let i = 0; i < 5; i++) hex += random.uint32().toString(16).padStart(8, "0");
    return `0x${hex}`;
  };
  const start = now - days * DAY;
  const genesisTime = start - 3600;

  // Sales follow a Zipf law over the collections (the top ten hold about half of them); supply
  // is skewed less, as it is in real markets, where the most traded collections are not much larger.
  const salesShares = shares(regular.sales, regular.collections, (r) => (r + 1) ** -1.1, 0);
  const supplyShares = shares(regular.tokens, regular.collections, (r) => (r + 1) ** -0.7, 10);
  const transferShares =
    shape.plainTransfers === undefined
      ? salesShares.map((n) => Math.round(n * TRANSFERS_PER_SALE))
      : shares(shape.plainTransfers, regular.collections, (r) => (r + 1) ** -(shape.transferSkew ?? 1), 0);
  // The top 1% launched in the first two weeks; the rest at any time until a month before the end.
  const early = Math.max(3, Math.round(regular.collections / 100));
  let firstToken = 0;
  const collections: Collection[] = [];
  for (let rank = 0; rank < regular.collections; rank++) {
    const supply = supplyShares[rank] as number;
    const adjective = ADJECTIVES[rank % ADJECTIVES.length] as string;
    // Every (adjective, noun) pair once, neighbouring ranks with different nouns.
    const noun = NOUNS[(rank + Math.floor(rank / ADJECTIVES.length)) % NOUNS.length] as string;
    const round = Math.floor(rank / (ADJECTIVES.length * NOUNS.length));
    const name = `${adjective} ${noun}${round > 0 ? ` ${round + 1}` : ""}`;
    const launchWindow = rank < early ? 14 * DAY : (days - 30) * DAY;
    const popularity = rank < early ? 20 : rank < regular.collections / 20 ? 4 : 1;
    collections.push({
      rank,
      address: address(),
      name,
      symbol: `${adjective.slice(0, 2)}${noun.slice(0, 2)}${rank}`.toUpperCase(),
      standard: rank % 8 === 5 ? "erc1155" : "erc721",
      supply,
      firstToken,
      sales: salesShares[rank] as number,
      plainTransfers: transferShares[rank] as number,
      spam: false,
      airdrops: 0,
      ...(shape.punkOffers && rank === 1 ? { punkOffers: true } : {}),
      deployedAt: Math.floor(start + random.next() * launchWindow),
      mintSeconds: rank < early ? 3 * DAY : DAY,
      creator: address(),
      royaltyBps: BigInt(random.pick([0, 250, 500, 750])),
      floorEth: random.logUniform(0.002, 0.5, 0.0001) * popularity,
    });
    firstToken += supply;
  }
  const wallets = Array.from({ length: regular.wallets }, address);

  const weth: PaymentToken = { address: address(), name: "Wrapped Ether", symbol: "WETH", decimals: 18 };
  const ape: PaymentToken = { address: address(), name: "ApeCoin", symbol: "APE", decimals: 18 };
  const usdc: PaymentToken = { address: address(), name: "USD Coin", symbol: "USDC", decimals: 6 };
  const pools = { wethUsdc: v2Pool(address(), weth, usdc), apeWeth: v2Pool(address(), ape, weth) };
  const marketplaces = { seaport: address(), blur: address(), desk: address(), feeRecipient: address() };
  const spam = shape.spamCollections ?? 0;
  const airdropShares = shares(shape.airdrops ?? 0, spam, (r) => (r + 1) ** -0.8, 0);
  for (let i = 0; i < spam; i++) {
    // A handful of token ids each, airdropped over a few days after a deployment at any time.
    const supply = random.int(1, 8);
    collections.push({
      rank: regular.collections + i,
      address: address(),
      name: `Free Mint Voucher ${i + 1}`,
      symbol: `FREE${i + 1}`,
      standard: "erc1155",
      supply,
      firstToken,
      sales: 0,
      plainTransfers: 0,
      spam: true,
      airdrops: airdropShares[i] as number,
      deployedAt: Math.floor(start + random.next() * (days - 3) * DAY),
      mintSeconds: 3 * DAY,
      creator: address(),
      royaltyBps: 0n,
      floorEth: 0,
    });
    firstToken += supply;
  }
  // Drawn after everything else, so that a market without a vault is the one drawn before it existed.
  const vault = shape.collectorNfts ?? 0;
  if (vault > 0) {
    collections.push({
      rank: collections.length,
      address: address(),
      name: "Collector Vault",
      symbol: "VAULT",
      standard: "erc721",
      supply: vault,
      firstToken,
      sales: 0,
      plainTransfers: 0,
      spam: false,
      airdrops: vault,
      heldBy: 0,
      deployedAt: Math.floor(start + random.next() * (days - 30) * DAY),
      mintSeconds: 3 * DAY,
      creator: address(),
      royaltyBps: 0n,
      floorEth: 0,
    });
    firstToken += vault;
  }
  const size: MarketSize = { ...regular, tokens: firstToken };
  return {
    size,
    seed,
    days,
    genesisTime,
    now,
    collections,
    wallets,
    weth,
    ape,
    usdc,
    pools,
    usdTokens: [{ address: usdc.address, symbol: usdc.symbol, decimals: usdc.decimals }],
    marketplaces,
  };
}

/** `total` split over `count` ranks by weight, each given `floor` first; the parts sum to `total` exactly. */
function shares(total: number, count: number, weight: (rank: number) => number, floor: number): number[] {
  const weights = Array.from({ length: count }, (_, r) => weight(r));
  const sum = weights.reduce((a, b) => a + b, 0);
  const spread = Math.max(0, total - floor * count);
  const exact = weights.map((w) => (spread * w) / sum);
  const parts = exact.map((x) => floor + Math.floor(x));
  let left = total - parts.reduce((a, b) => a + b, 0);
  // Largest remainders first, so that rounding never reorders the ranks.
  const byRemainder = exact.map((x, r) => ({ r, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest);
  for (let i = 0; left > 0; i = (i + 1) % count, left--) {
    const r = (byRemainder[i] as { r: number }).r;
    parts[r] = (parts[r] as number) + 1;
  }
  return parts;
}

/** Uniswap orders a pool's tokens by address, and prices token0 in token1. */
function v2Pool(address: Address, a: PaymentToken, b: PaymentToken): PoolDescription {
  const [token0, token1] = a.address < b.address ? [a, b] : [b, a];
  return {
    address,
    kind: "v2",
    token0: token0.address,
    token1: token1.address,
    decimals0: token0.decimals,
    decimals1: token1.decimals,
  };
}
