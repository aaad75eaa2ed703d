/**
 * What the activity generator believes the chain holds. Transactions are planned against this
 * model and applied to it as they are queued, so a whole block can be planned before it is mined.
 */
import type { Address } from "../core/hex.ts";
import type { DemoContract, DemoContractKey, Erc721Key } from "./contracts.ts";
import type { SeaportOrder } from "./markets/seaport-orders.ts";
import type { Prng } from "./prng.ts";

/** A set with O(1) insert, delete and uniform random pick, iterated in insertion order for determinism. */
export class PickSet<T> {
  private readonly items: T[] = [];
  private readonly index = new Map<T, number>();

  get size(): number {
    return this.items.length;
  }

  has(item: T): boolean {
    return this.index.has(item);
  }

  add(item: T): void {
    if (this.index.has(item)) return;
    this.index.set(item, this.items.length);
    this.items.push(item);
  }

  delete(item: T): void {
    const at = this.index.get(item);
    if (at === undefined) return;
    const last = this.items.pop() as T;
    this.index.delete(item);
    if (at < this.items.length) {
      this.items[at] = last;
      this.index.set(last, at);
    }
  }

  /** A random member for which `accept` holds, trying a bounded number of times. */
  pick(prng: Prng, accept: (item: T) => boolean = () => true, attempts = 12): T | undefined {
    if (this.items.length === 0) return undefined;
    for (let i = 0; i < attempts; i++) {
      const item = this.items[Math.floor(prng.next() * this.items.length)] as T;
      if (accept(item)) return item;
    }
    return undefined;
  }

  values(): readonly T[] {
    return this.items;
  }
}

export interface Listing {
  seller: Address;
  /** ERC-20 paid in, or null for ETH. */
  currency: Address | null;
  price: bigint;
}

export class Erc721Model {
  readonly owners = new Map<bigint, Address>();
  /** Tokens held by one of the demo accounts: the ones activity can move. */
  readonly held = new PickSet<bigint>();
  readonly listings = new Map<bigint, Listing>();
  /** Holders that approved the marketplace for the whole collection. */
  readonly marketApproved = new Set<Address>();

  constructor(
    readonly key: Erc721Key,
    readonly contract: DemoContract,
    /** The next id an ordinary mint uses. */
    public nextId: bigint,
  ) {}

  setOwner(id: bigint, owner: Address | undefined, accounts: ReadonlySet<Address>): void {
    this.listings.delete(id);
    if (owner === undefined) this.owners.delete(id);
    else this.owners.set(id, owner);
    if (owner !== undefined && accounts.has(owner)) this.held.add(id);
    else this.held.delete(id);
    if (id >= this.nextId) this.nextId = id + 1n;
  }
}

export class Erc1155Model {
  /** balance by `${id}:${holder}` */
  readonly balances = new Map<string, bigint>();
  /** Non-zero `${id}:${holder}` pairs of demo accounts. */
  readonly held = new PickSet<string>();

  constructor(
    readonly contract: DemoContract,
    readonly tokenIds: readonly bigint[],
  ) {}

  balanceOf(id: bigint, holder: Address): bigint {
    return this.balances.get(`${id}:${holder}`) ?? 0n;
  }

  add(id: bigint, holder: Address, delta: bigint, accounts: ReadonlySet<Address>): void {
    const key = `${id}:${holder}`;
    const balance = (this.balances.get(key) ?? 0n) + delta;
    if (balance < 0n) throw new Error(`model error: negative ERC-1155 balance for ${key}`);
    if (balance === 0n) this.balances.delete(key);
    else this.balances.set(key, balance);
    if (balance > 0n && accounts.has(holder)) this.held.add(key);
    else this.held.delete(key);
  }

  /** The ids `holder` has a balance of, in the collection's id order. */
  idsHeldBy(holder: Address): bigint[] {
    return this.tokenIds.filter((id) => this.balanceOf(id, holder) > 0n);
  }
}

export class LegacyModel {
  readonly owners = new Map<bigint, Address>();
  readonly held = new PickSet<bigint>();
  /** The address each token is approved to (draft ERC-721: one per token, cleared on transfer). */
  readonly approvals = new Map<bigint, Address>();

  constructor(
    readonly contract: DemoContract,
    public totalSupply: bigint,
  ) {}

  setOwner(id: bigint, owner: Address, accounts: ReadonlySet<Address>): void {
    this.owners.set(id, owner);
    this.approvals.delete(id);
    if (accounts.has(owner)) this.held.add(id);
    else this.held.delete(id);
  }
}

export interface PunkOffer {
  seller: Address;
  minValue: bigint;
  onlySellTo: Address | null;
}

export interface PunkBid {
  bidder: Address;
  value: bigint;
}

export class PunksModel {
  readonly owners: (Address | undefined)[];
  readonly held = new PickSet<number>();
  readonly unassigned = new PickSet<number>();
  readonly offers = new Map<number, PunkOffer>();
  readonly bids = new Map<number, PunkBid>();
  readonly pendingWithdrawals = new Map<Address, bigint>();
  allAssigned = false;

  constructor(
    readonly contract: DemoContract,
    readonly supply: number,
  ) {
    this.owners = new Array<Address | undefined>(supply).fill(undefined);
    for (let i = 0; i < supply; i++) this.unassigned.add(i);
  }

  /** Mirrors every ownership change of the contract, including what it does to offers and bids. */
  setOwner(index: number, owner: Address, accounts: ReadonlySet<Address>): void {
    this.owners[index] = owner;
    this.unassigned.delete(index);
    this.offers.delete(index);
    if (accounts.has(owner)) this.held.add(index);
    else this.held.delete(index);
    const bid = this.bids.get(index);
    // The contract refunds a bid its new owner had made (transferPunk, buyPunk).
    if (bid && bid.bidder === owner) {
      this.credit(owner, bid.value);
      this.bids.delete(index);
    }
  }

  credit(account: Address, amount: bigint): void {
    this.pendingWithdrawals.set(account, (this.pendingWithdrawals.get(account) ?? 0n) + amount);
  }
}

export class Erc20Model {
  readonly balances = new Map<Address, bigint>();
  readonly marketApproved = new Set<Address>();

  constructor(readonly contract: DemoContract) {}

  balanceOf(account: Address): bigint {
    return this.balances.get(account) ?? 0n;
  }

  move(from: Address | null, to: Address | null, amount: bigint): void {
    if (from) this.balances.set(from, this.balanceOf(from) - amount);
    if (to) this.balances.set(to, this.balanceOf(to) + amount);
  }
}

export class World {
  readonly accountSet: ReadonlySet<Address>;
  readonly contracts: Partial<Record<DemoContractKey, DemoContract>> = {};
  readonly erc721 = new Map<Erc721Key, Erc721Model>();
  erc1155: Erc1155Model | undefined;
  legacy: LegacyModel | undefined;
  punks: PunksModel | undefined;
  erc20: Erc20Model | undefined;
  trading: TradingModel | undefined;

  constructor(
    readonly deployer: Address,
    readonly accounts: readonly Address[],
    /** Relative activity of each account (same order): a few whales, many occasional holders. */
    readonly accountWeights: readonly number[],
  ) {
    this.accountSet = new Set(accounts);
  }

  pickAccount(prng: Prng, not?: Address): Address {
    for (;;) {
      const account = this.accounts[prng.weightedIndex(this.accountWeights)] as Address;
      if (account !== not) return account;
    }
  }
}

/** Zipf-like weights over a seeded shuffle of the accounts. */
export function accountWeights(prng: Prng, count: number): number[] {
  const ranks = prng.sample(
    Array.from({ length: count }, (_, i) => i),
    count,
  );
  const weights = new Array<number>(count).fill(0);
  ranks.forEach((account, rank) => {
    weights[account] = 1 / (rank + 1) ** 0.8;
  });
  return weights;
}

/** A Uniswap V2 pair: its reserves as its last `Sync` logged them. */
export interface PoolModel {
  contract: DemoContract;
  token0: Address;
  token1: Address;
  reserve0: bigint;
  reserve1: bigint;
}

/** An open order on the escrow market: its items must all still be the seller's to fill it. */
export interface EscrowListing {
  id: bigint;
  seller: Address;
  items: { key: Erc721Key; id: bigint }[];
  price: bigint;
}

/** A sale whose buyer will sell the NFT straight back to its seller. */
export interface WashLeg {
  key: Erc721Key;
  id: bigint;
  seller: Address;
  buyer: Address;
  price: bigint;
}

/** What the trading on Seaport, the escrow market, direct deals and the pools needs to know. */
export class TradingModel {
  readonly pools: PoolModel[] = [];
  /** Open Seaport orders, listings and offers, by order salt. */
  readonly seaportOrders = new Map<bigint, SeaportOrder & { key: Erc721Key }>();
  readonly escrowListings = new Map<bigint, EscrowListing>();
  nextEscrowListing = 0n;
  readonly washLegs: WashLeg[] = [];
  /** `${operator}:${collection}:${owner}` of every NFT approval given. */
  readonly approvals = new Set<string>();

  constructor(
    readonly weth: Erc20Model,
    readonly stablecoin: Erc20Model,
    /** Receives the markets' fees. */
    readonly feeRecipient: Address,
    /** Receives the collections' royalties. */
    readonly creator: Address,
  ) {}
}
