/**
 * The synthetic chain, batch by batch, in the form the indexer hands its batches to
 * `prepareBatch`: what `fetchBatch` would have read and decoded from a node (headers, NFT and
 * ERC-20 transfers, call-traced native movements, each transaction's call, marketplace events,
 * deployments, pool states). Events of the schedule are played in time order against the market's
 * current holders, so every sale is made by a holder of what it sells. The schedule is one list, or
 * a stream of lists in time order (a large market, a day at a time).
 */
import { type Address, type Hex, ZERO_ADDRESS } from "../../src/core/hex.ts";
import type {
  BlockHeader,
  ContractCreation,
  FungibleTransfer,
  NativeTransfer,
  NftTransfer,
  PoolState,
  TransactionCall,
} from "../../src/core/types.ts";
import { Prng } from "../../src/demo/prng.ts";
import type { FetchedBatch } from "../../src/indexer/batch.ts";
import { BLOCK_SECONDS, type Collection, type Market } from "./market.ts";
import { EventKind, type Schedule } from "./schedule.ts";

const WEI_PER_MICRO_ETHER = 10n ** 12n;
const EMPTY_BLOOM: Hex = `0x${"0".repeat(512)}`;
const ZERO_HASH: Hex = `0x${"0".repeat(64)}`;
const MARKET_FEE_BPS = 250n;
/** Shares of the single purchases paid in WETH and in APE; the rest, and every sweep, in ether. */
const WETH_SHARE = 0.22;
const APE_SHARE = 0.06;
const PAID_MINT_SHARE = 0.3;
/** The owner of a burned ERC-721 token (0 is a token not minted yet). */
const BURNED = -1;

/** What the chain made, beyond what the store counts. */
export interface ChainTotals {
  sales: number;
  sweeps: number;
  mintTransactions: number;
  transfers: number;
  burns: number;
  /** Transfers of airdropped spam, and of the collector's vault. */
  airdrops: number;
  /** Punk offer events: offers made and ended. */
  punkOffers: number;
  blocks: number;
}

type Tx = { hash: Hex; index: number; block: number };

export class SyntheticChain {
  readonly totals: ChainTotals = {
    sales: 0,
    sweeps: 0,
    mintTransactions: 0,
    transfers: 0,
    burns: 0,
    airdrops: 0,
    punkOffers: 0,
    blocks: 0,
  };
  readonly head: number;
  private readonly random: Prng;
  /** Per token of the market: its ERC-721 owner as wallet index + 1, or 0 or BURNED. */
  private readonly owner: Int32Array;
  /** Per ERC-1155 token of the market: units per wallet index. */
  private readonly units = new Map<number, Map<number, number>>();
  private readonly minted: Int32Array;
  /** Tokens with an open public offer, of the collections offered on the punks market. */
  private readonly offered = new Set<number>();
  private cursor = 0;
  private nextBlock = 0;
  private block = -1;
  private txIndex = 0;
  private logIndex = 0;
  private txCounter = 0;
  private readonly hashSalt: string;
  private ethUsd = 2500;
  private apePerEth = 4000;
  private reserves = { wethUsdc: [0n, 0n] as [bigint, bigint], apeWeth: [0n, 0n] as [bigint, bigint] };
  private batch: Omit<FetchedBatch, "from" | "to" | "requestedTo" | "headers"> = emptyBatch();
  private schedule: Schedule;
  private readonly chunks: Iterator<Schedule>;

  /** `until`: Unix seconds of the head block, the market's `now` by default. */
  constructor(
    private readonly market: Market,
    schedule: Schedule | Iterator<Schedule>,
    options: { until?: number } = {},
  ) {
    this.chunks = "order" in schedule ? [schedule][Symbol.iterator]() : schedule;
    this.schedule = {
      count: 0,
      time: new Float64Array(),
      kind: new Uint8Array(),
      subject: new Int32Array(),
      size: new Int32Array(),
      order: new Uint32Array(),
    };
    this.random = new Prng(`${market.seed}:chain`);
    this.owner = new Int32Array(market.size.tokens);
    this.minted = new Int32Array(market.collections.length);
    this.head = Math.floor(((options.until ?? market.now) - market.genesisTime) / BLOCK_SECONDS);
    this.hashSalt = this.random.uint32().toString(16).padStart(8, "0");
    this.movePools();
  }

  /**
   * The next batch, ending after about `rows` NFT transfers on a block boundary, or at block
   * `last` if that comes first; undefined after the head (or after `last`).
   */
  next(rows: number, last = Number.POSITIVE_INFINITY): FetchedBatch | undefined {
    if (this.nextBlock > Math.min(this.head, last)) return undefined;
    this.batch = emptyBatch();
    let ended: "rows" | "last" | "schedule" = "schedule";
    for (let event = this.peek(); event !== undefined; event = this.peek()) {
      const block = this.blockAt(this.schedule.time[event] as number);
      if (block > last) {
        ended = "last";
        break;
      }
      if (this.batch.nft.length >= rows && block !== this.block) {
        ended = "rows";
        break;
      }
      this.play(event, block);
      this.cursor++;
    }
    const from = this.nextBlock;
    const to = ended === "rows" ? this.block : ended === "last" ? Math.min(last, this.head) : this.head;
    this.nextBlock = to + 1;
    this.totals.blocks = to + 1;
    const headers: BlockHeader[] = [];
    for (let n = from; n <= to; n++) {
      headers.push(new Header(n, this.market.genesisTime + n * BLOCK_SECONDS, this.hashSalt));
    }
    return { ...this.batch, from, to, requestedTo: to, headers };
  }

  /** Unix seconds of block `n`. */
  timeOf(n: number): number {
    return this.market.genesisTime + n * BLOCK_SECONDS;
  }

  /** The last block whose time is before `time`. */
  blockBefore(time: number): number {
    return Math.ceil((time - this.market.genesisTime) / BLOCK_SECONDS) - 1;
  }

  /** The next event of the schedule, taking the next list when one is played out. */
  private peek(): number | undefined {
    while (this.cursor >= this.schedule.count) {
      const chunk = this.chunks.next();
      if (chunk.done) return undefined;
      this.schedule = chunk.value;
      this.cursor = 0;
    }
    return this.schedule.order[this.cursor];
  }

  private blockAt(time: number): number {
    return Math.min(this.head, Math.floor((time - this.market.genesisTime) / BLOCK_SECONDS));
  }

  private blockHash(n: number): Hex {
    return blockHash(this.hashSalt, n);
  }

  private play(event: number, block: number): void {
    if (block !== this.block) {
      this.block = block;
      this.txIndex = 0;
      this.logIndex = 0;
    }
    const { schedule, market } = this;
    const subject = schedule.subject[event] as number;
    const size = schedule.size[event] as number;
    const collection = market.collections[subject] as Collection;
    switch (schedule.kind[event]) {
      case EventKind.TokenDeploy: {
        const token = [market.weth, market.ape, market.usdc][subject];
        if (token) this.deploy(token.address, this.randomAddress());
        return;
      }
      case EventKind.Deploy:
        this.deploy(collection.address, collection.creator);
        return;
      case EventKind.Mint:
        this.mint(collection, size);
        return;
      case EventKind.Sale:
        if (collection.standard === "erc721") this.sell721(collection, size, schedule.time[event] as number);
        else this.sell1155(collection, schedule.time[event] as number);
        return;
      case EventKind.Transfer:
        this.give(collection, false);
        return;
      case EventKind.Burn:
        this.give(collection, true);
        return;
      case EventKind.PoolMove:
        this.movePool(subject);
        return;
      case EventKind.Airdrop:
        this.airdrop(collection, size);
        return;
    }
  }

  /** The next transaction of the current block. */
  private nextTx(): Tx {
    const hash: Hex = `0x${this.randomHex(7)}${(this.txCounter++).toString(16).padStart(8, "0")}`;
    return { hash, index: this.txIndex++, block: this.block };
  }

  /** The next transaction, one that moves NFTs: its call is kept, as the traces give it. */
  private nftTx(from: Address, to: Address, value: bigint): Tx {
    const tx = this.nextTx();
    const call: TransactionCall = { txHash: tx.hash, from, to, value };
    this.batch.calls.set(tx.hash, call);
    return tx;
  }

  private deploy(address: Address, deployer: Address): void {
    const tx = this.nextTx();
    const creation: ContractCreation = {
      address,
      creator: deployer,
      txFrom: deployer,
      txHash: tx.hash,
      blockNumber: tx.block,
      blockHash: this.blockHash(tx.block),
    };
    this.batch.creations.push(creation);
  }

  private mint(c: Collection, count: number): void {
    const minter = this.wallet();
    const minterAddress = this.market.wallets[minter] as Address;
    const paid = this.random.chance(PAID_MINT_SHARE);
    const unitPrice = paid ? this.toWei(c.floorEth * 0.3) : 0n;
    const units = c.standard === "erc721" ? [] : Array.from({ length: count }, () => this.random.int(1, 25));
    const value = unitPrice * BigInt(count);
    const tx = this.nftTx(minterAddress, c.address, value);
    if (value > 0n) this.nativeMove(tx, minterAddress, c.address, value);
    for (let i = 0; i < count; i++) {
      const local = this.minted[c.rank] as number;
      this.minted[c.rank] = local + 1;
      const token = c.firstToken + local;
      if (c.standard === "erc721") {
        this.owner[token] = minter + 1;
        this.nftMove(tx, c, token, ZERO_ADDRESS, minterAddress, 1n);
      } else {
        const amount = units[i] as number;
        this.units.set(token, new Map([[minter, amount]]));
        this.nftMove(tx, c, token, ZERO_ADDRESS, minterAddress, BigInt(amount));
      }
    }
    this.totals.mintTransactions++;
  }

  /**
   * Spam: a unit of one of the collection's few tokens minted to each of `count` wallets drawn from
   * the whole list, in one transaction. Nobody moves them afterwards, so their holders are not kept.
   * A vault's drop mints its next `count` tokens to its collector instead.
   */
  private airdrop(c: Collection, count: number): void {
    const { wallets } = this.market;
    const tx = this.nftTx(c.creator, c.address, 0n);
    if (c.heldBy !== undefined) {
      const to = wallets[c.heldBy] as Address;
      const from = this.minted[c.rank] as number;
      const upTo = Math.min(c.supply, from + count);
      for (let local = from; local < upTo; local++) {
        this.nftMove(tx, c, c.firstToken + local, ZERO_ADDRESS, to, 1n);
      }
      this.minted[c.rank] = upTo;
      this.totals.airdrops += upTo - from;
      return;
    }
    for (let i = 0; i < count; i++) {
      const to = wallets[this.random.int(0, wallets.length - 1)] as Address;
      this.nftMove(tx, c, c.firstToken + this.random.int(0, c.supply - 1), ZERO_ADDRESS, to, 1n);
    }
    this.totals.airdrops += count;
  }

  /** A listing bought, or a sweep of several; the buyer is never one of the sellers. */
  private sell721(c: Collection, count: number, time: number): void {
    const tokens: number[] = [];
    const sellers = new Set<number>();
    while (tokens.length < count) {
      const token = this.liveToken(c);
      if (tokens.includes(token)) continue;
      tokens.push(token);
      sellers.add((this.owner[token] as number) - 1);
    }
    let buyer = this.wallet();
    while (sellers.has(buyer)) buyer = this.wallet();
    const items = tokens.map((token) => ({
      token,
      seller: (this.owner[token] as number) - 1,
      quantity: 1n,
      price: this.price(c, time),
    }));
    this.settle(c, buyer, items, count > 1 ? "native" : this.currency());
    for (const token of tokens) this.owner[token] = buyer + 1;
    this.totals.sales += count;
    if (count > 1) this.totals.sweeps++;
    if (c.punkOffers) {
      for (const token of tokens) this.endOffer(c, token);
      this.offer(c, time);
    }
  }

  /**
   * A public offer on a token of the collection by its holder, at a price around the floor; now and
   * then one of the open offers is withdrawn instead.
   */
  private offer(c: Collection, time: number): void {
    if (this.offered.size > 0 && this.random.chance(0.2)) {
      const [token] = this.offered;
      if (token !== undefined) this.endOffer(c, token);
      return;
    }
    const token = this.liveToken(c);
    // Its own transaction, which moves no NFT.
    this.offerEvent(this.nextTx(), c, token, this.price(c, time) + this.toWei(c.floorEth * 0.2));
    this.offered.add(token);
  }

  /** The end of a token's open offer, if it has one: withdrawn, or its token moved. */
  private endOffer(c: Collection, token: number): void {
    if (!this.offered.delete(token)) return;
    this.offerEvent(this.nextTx(), c, token, null);
  }

  private offerEvent(tx: Tx, c: Collection, token: number, minValue: bigint | null): void {
    this.batch.punkOffers.push({
      contract: c.address,
      punkIndex: BigInt(token - c.firstToken),
      minValue,
      blockNumber: tx.block,
      logIndex: this.logIndex++,
    });
    this.batch.logCount++;
    this.totals.punkOffers++;
  }

  /** Some units of one ERC-1155 token, from one of its holders. */
  private sell1155(c: Collection, time: number): void {
    const token = this.liveToken(c);
    const holders = this.units.get(token) as Map<number, number>;
    const [seller, held] = this.someHolder(holders);
    let buyer = this.wallet();
    while (buyer === seller) buyer = this.wallet();
    const quantity = Math.min(held, this.random.chance(0.25) ? this.random.int(2, 3) : 1);
    const price = this.price(c, time) * BigInt(quantity);
    this.settle(c, buyer, [{ token, seller, quantity: BigInt(quantity), price }], this.currency());
    addUnits(holders, seller, -quantity);
    addUnits(holders, buyer, quantity);
    this.totals.sales++;
  }

  /**
   * The transaction of a purchase: the NFTs go from their sellers to the buyer, and the buyer's
   * payment goes to each seller less the market's fee and the collection's royalty, in ether
   * through the marketplace contract or in an ERC-20 straight from the buyer.
   */
  private settle(
    c: Collection,
    buyer: number,
    items: { token: number; seller: number; quantity: bigint; price: bigint }[],
    currency: "native" | "weth" | "ape",
  ): void {
    const { market } = this;
    const venue = this.random.next();
    const [label, exchange] =
      venue < 0.55
        ? ["seaport", market.marketplaces.seaport]
        : venue < 0.85
          ? ["blur", market.marketplaces.blur]
          : ["", market.marketplaces.desk];
    const buyerAddress = market.wallets[buyer] as Address;
    const total = items.reduce((sum, item) => sum + item.price, 0n);
    const tx = this.nftTx(buyerAddress, exchange, currency === "native" ? total : 0n);
    if (currency === "native") this.nativeMove(tx, buyerAddress, exchange, total);
    for (const item of items) {
      const seller = market.wallets[item.seller] as Address;
      const fee = (item.price * MARKET_FEE_BPS) / 10_000n;
      const royalty = (item.price * c.royaltyBps) / 10_000n;
      const parts: [Address, bigint][] = [
        [seller, item.price - fee - royalty],
        [market.marketplaces.feeRecipient, fee],
        [c.creator, royalty],
      ];
      for (const [to, amount] of parts) {
        if (amount === 0n) continue;
        if (currency === "native") this.nativeMove(tx, exchange, to, amount);
        else if (currency === "weth") this.erc20Move(tx, market.weth.address, buyerAddress, to, amount);
        else this.erc20Move(tx, market.ape.address, buyerAddress, to, this.inApe(amount));
      }
      this.nftMove(tx, c, item.token, seller, buyerAddress, item.quantity);
    }
    if (label !== "") {
      this.batch.markets.push({
        market: label,
        contract: exchange,
        logIndex: this.logIndex++,
        txHash: tx.hash,
      });
    }
  }

  /** An NFT given to another wallet, or burned, without payment. */
  private give(c: Collection, burn: boolean): void {
    const { wallets } = this.market;
    const token = this.liveToken(c);
    const holders = this.units.get(token);
    const from = holders ? this.someHolder(holders)[0] : (this.owner[token] as number) - 1;
    const to = burn ? undefined : this.otherWallet(from);
    const tx = this.nftTx(wallets[from] as Address, c.address, 0n);
    this.nftMove(
      tx,
      c,
      token,
      wallets[from] as Address,
      to === undefined ? ZERO_ADDRESS : (wallets[to] as Address),
      1n,
    );
    if (holders) {
      addUnits(holders, from, -1);
      if (to !== undefined) addUnits(holders, to, 1);
    } else {
      if (c.punkOffers) this.endOffer(c, token);
      this.owner[token] = to === undefined ? BURNED : to + 1;
    }
    if (burn) this.totals.burns++;
    else this.totals.transfers++;
  }

  /** A token of the collection that someone holds (every token is minted before trading opens). */
  private liveToken(c: Collection): number {
    for (;;) {
      const token = c.firstToken + this.random.int(0, c.supply - 1);
      if (
        c.standard === "erc721" ? (this.owner[token] as number) > 0 : (this.units.get(token)?.size ?? 0) > 0
      ) {
        return token;
      }
    }
  }

  private someHolder(holders: Map<number, number>): [number, number] {
    let skip = this.random.int(0, holders.size - 1);
    for (const entry of holders) if (skip-- === 0) return entry;
    throw new Error("a token without holders");
  }

  /** A wallet, the first ones far more often: a few whales and a long tail, as real markets have. */
  private wallet(): number {
    return Math.floor(this.market.wallets.length * this.random.next() ** 2);
  }

  private otherWallet(than: number): number {
    let other = this.wallet();
    while (other === than) other = this.wallet();
    return other;
  }

  private currency(): "native" | "weth" | "ape" {
    const r = this.random.next();
    return r < APE_SHARE ? "ape" : r < APE_SHARE + WETH_SHARE ? "weth" : "native";
  }

  /**
   * What one unit sells for: around the collection's floor, moving in a slow cycle of its own,
   * with a rare item now and then far above it.
   */
  private price(c: Collection, time: number): bigint {
    const cycle =
      1 + 0.35 * Math.sin((2 * Math.PI * (time - this.market.genesisTime)) / (120 * 86_400) + c.rank);
    const rare = this.random.chance(0.015) ? this.random.logUniform(3, 40, 0.01) : 1;
    return this.toWei(c.floorEth * cycle * rare * Math.exp(0.45 * this.normal()));
  }

  private toWei(ether: number): bigint {
    return BigInt(Math.max(1, Math.round(ether * 1e6))) * WEI_PER_MICRO_ETHER;
  }

  private normal(): number {
    const u = 1 - this.random.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.random.next());
  }

  /** Wei in APE base units at the APE/WETH pool's current price. */
  private inApe(wei: bigint): bigint {
    const [r0, r1] = this.reserves.apeWeth;
    const apeFirst = this.market.pools.apeWeth.token0 === this.market.ape.address;
    return apeFirst ? (wei * r0) / r1 : (wei * r1) / r0;
  }

  /** Ether's dollar price and APE's ether price take a random step. */
  private movePool(pool: number): void {
    if (pool === 0) this.ethUsd *= Math.exp(0.012 * this.normal());
    else this.apePerEth *= Math.exp(0.02 * this.normal());
    this.movePools();
    const description = pool === 0 ? this.market.pools.wethUsdc : this.market.pools.apeWeth;
    const [reserve0, reserve1] = pool === 0 ? this.reserves.wethUsdc : this.reserves.apeWeth;
    // A swap in a transaction of its own, which moves no NFT.
    const tx = this.nextTx();
    const state: PoolState = {
      pool: description.address,
      blockNumber: tx.block,
      logIndex: this.logIndex++,
      reserve0,
      reserve1,
    };
    this.batch.poolStates.push(state);
  }

  private movePools(): void {
    const { market } = this;
    const ether = 10n ** 18n;
    const wethSide = 20_000n * ether;
    const usdcSide = BigInt(Math.round(this.ethUsd * 20_000)) * 10n ** 6n;
    this.reserves.wethUsdc =
      market.pools.wethUsdc.token0 === market.weth.address ? [wethSide, usdcSide] : [usdcSide, wethSide];
    const wethDepth = 2_000n * ether;
    const apeSide = BigInt(Math.round(this.apePerEth * 2_000)) * ether;
    this.reserves.apeWeth =
      market.pools.apeWeth.token0 === market.ape.address ? [apeSide, wethDepth] : [wethDepth, apeSide];
  }

  private nftMove(tx: Tx, c: Collection, token: number, from: Address, to: Address, amount: bigint): void {
    const local = token - c.firstToken;
    const transfer: NftTransfer = {
      contract: c.address,
      tokenId: BigInt(c.standard === "erc721" ? local : local + 1),
      from,
      to,
      amount,
      blockNumber: tx.block,
      logIndex: this.logIndex++,
      seq: 0,
      txHash: tx.hash,
      txIndex: tx.index,
      standard: c.standard,
    };
    this.batch.nft.push(transfer);
    this.batch.logCount++;
  }

  private erc20Move(tx: Tx, token: Address, from: Address, to: Address, amount: bigint): void {
    const transfer: FungibleTransfer = {
      contract: token,
      from,
      to,
      amount,
      blockNumber: tx.block,
      logIndex: this.logIndex++,
      txHash: tx.hash,
      txIndex: tx.index,
    };
    this.batch.fungible.push(transfer);
    this.batch.logCount++;
  }

  private nativeMove(tx: Tx, from: Address, to: Address, value: bigint): void {
    const move: NativeTransfer = {
      txHash: tx.hash,
      from,
      to,
      value,
      blockNumber: tx.block,
      txIndex: tx.index,
    };
    this.batch.native?.push(move);
  }

  private randomAddress(): Address {
    return `0x${this.randomHex(5)}`;
  }

  /** `words` random 32-bit words in hex. */
  private randomHex(words: number): string {
    let hex = "";
    for (let i = 0; i < words; i++) hex += this.random.uint32().toString(16).padStart(8, "0");
    return hex;
  }
}

/**
 * A block's header. A year of 12-second blocks is 2.6 million headers, and only the last 256 of
 * each batch are stored (for reorg detection): the hashes are worked out when read.
 */
class Header implements BlockHeader {
  readonly logsBloom = EMPTY_BLOOM;

  constructor(
    readonly number: number,
    readonly timestamp: number,
    private readonly salt: string,
  ) {}

  get hash(): Hex {
    return blockHash(this.salt, this.number);
  }

  get parentHash(): Hex {
    return this.number === 0 ? ZERO_HASH : blockHash(this.salt, this.number - 1);
  }
}

function blockHash(salt: string, n: number): Hex {
  return `0x${salt}${n.toString(16).padStart(56, "0")}`;
}

function addUnits(holders: Map<number, number>, wallet: number, delta: number): void {
  const units = (holders.get(wallet) ?? 0) + delta;
  if (units === 0) holders.delete(wallet);
  else holders.set(wallet, units);
}

function emptyBatch(): Omit<FetchedBatch, "from" | "to" | "requestedTo" | "headers"> {
  return {
    nft: [],
    fungible: [],
    creations: [],
    creationSource: "trace",
    contracts: [],
    firstSeen: new Map(),
    logCount: 0,
    skipped: [],
    calls: new Map(),
    native: [],
    markets: [],
    punkBids: [],
    punkOffers: [],
    poolStates: [],
    metadataUpdates: [],
  };
}
