/**
 * Demo chain generator: deploys a set of NFT contracts on an anvil and fills it with months of
 * seeded, realistic activity (`generateHistory`), then keeps it moving (`runLiveActivity`).
 *
 * The history's block timestamps start at `startTimestamp` (default: an hour after the head) and
 * span `days`. For the history to end around the present, start anvil in the past, e.g.
 * `startAnvil({ timestamp: historyGenesisTimestamp(days) })`.
 */
import { keccak256, maxUint256, parseEther, stringToHex } from "viem";
import type { Address, Hex } from "../core/hex.ts";
import { hexToNumber, numberToHex, wordToAddress } from "../core/hex.ts";
import { devAddress, devAddresses } from "../devchain/deploy.ts";
import { ActivityPlanner } from "./actions.ts";
import { BlockBuilder, type RpcReceipt } from "./block-builder.ts";
import {
  callTx,
  DEMO_CONTRACT_KEYS,
  DEMO_CONTRACT_NAMES,
  DEMO_ERC1155_IDS,
  type DemoContract,
  type DemoContractKey,
  type DemoContracts,
  deployTx,
  GAS,
  MINTABLE_ERC721_KEYS,
  type MintableErc721Key,
  punksAssignGas,
} from "./contracts.ts";
import { type ActivityCounts, emptyCounts } from "./counts.ts";
import { Prng } from "./prng.ts";
import { CREATOR, FEE_RECIPIENT, MARKET_FEE_BPS, PAID_MINT_PRICE, ROYALTY_BPS } from "./trading.ts";
import {
  accountWeights,
  Erc20Model,
  Erc721Model,
  Erc1155Model,
  LegacyModel,
  type PoolModel,
  PunksModel,
  TradingModel,
  World,
} from "./world.ts";
import { loadWorldFromChain } from "./world-from-chain.ts";

export { ACTIVITY_COUNTERS, type ActivityCounts } from "./counts.ts";

const DAY = 86_400;
/** Block interval the history's timestamps are aligned to, as on mainnet. */
const SLOT = 12;
const ACCOUNT_BALANCE = parseEther("1000000");
const ERC20_AIRDROP = parseEther("250000");
/** Punks per setInitialOwners transaction. */
const PUNK_ASSIGN_BATCH = 100;
/** What each account wraps, and the dollars (6 decimals) it is given, to trade with. */
const ACCOUNT_WETH = parseEther("2000");
const ACCOUNT_DOLLARS = 5_000_000n * 10n ** 6n;
/** The pool trader's stock of WETH, and of dollars and tokens (more than it can spend). */
const TRADER_WETH = parseEther("100000");
const TRADER_STOCK = 10n ** 30n;
/** The pairs' first liquidity: 2,500 dollars and 2,000 tokens per ETH. */
const POOL_SEEDS = {
  wethStable: { weth: parseEther("2000"), other: 5_000_000n * 10n ** 6n },
  tokenWeth: { weth: parseEther("1000"), other: parseEther("2000000") },
} as const;

export interface DemoOptions {
  rpcUrl: string;
  seed: number | string;
  /** Accounts trading with each other, derived from anvil's mnemonic after the deployer (index 0). */
  accounts?: number;
  /** CryptoPunks supply; 10000 in the original. */
  punkSupply?: number;
}

export interface HistoryOptions extends DemoOptions {
  /** Days of history. Default 180. */
  days?: number;
  /** Unix seconds of the first block; must be after the head. Default: the head's timestamp plus an hour. */
  startTimestamp?: number;
  /** Average blocks with activity per day. Default 4. */
  blocksPerDay?: number;
  /** Average user actions per block (an action is one to three transactions). Default 3. */
  actionsPerBlock?: number;
  /** Called after each simulated day. */
  onProgress?: (progress: { day: number; days: number; blocks: number; transactions: number }) => void;
  /** Ends the generation between two days, throwing the signal's reason. */
  signal?: AbortSignal;
}

export interface HistorySummary {
  seed: number | string;
  chainId: number;
  deployer: Address;
  accounts: Address[];
  contracts: DemoContracts;
  counts: ActivityCounts;
  transactions: number;
  /** Logs emitted by all the history's transactions. */
  logs: number;
  blocks: { first: number; last: number; count: number };
  timestamps: { first: number; last: number };
}

/** A genesis timestamp that makes a `days`-long history end about now. */
export function historyGenesisTimestamp(days: number, nowSeconds = Math.floor(Date.now() / 1000)): number {
  return nowSeconds - Math.ceil(days * DAY) - 2 * 3600;
}

interface BlockHead {
  number: Hex;
  timestamp: Hex;
}

/**
 * Deploys the demo contracts and generates `days` of activity, mining blocks at chosen times.
 * Automine is turned off meanwhile and restored after; anvil must not be mining on an interval
 * (--block-time), as it would mine the queued transactions at times of its own.
 */
export async function generateHistory(options: HistoryOptions): Promise<HistorySummary> {
  const days = options.days ?? 180;
  if (!(days >= 1)) throw new RangeError("days must be at least 1");
  const blocksPerDay = options.blocksPerDay ?? 4;
  const actionsPerBlock = options.actionsPerBlock ?? 3;
  const prng = new Prng(options.seed);
  const builder = new BlockBuilder(options.rpcUrl);
  const rpc = builder.rpc;

  const head = await rpc.call<BlockHead>("eth_getBlockByNumber", ["latest", false]);
  const headTime = hexToNumber(head.timestamp);
  const start = options.startTimestamp ?? headTime + 3600;
  if (start <= headTime) {
    throw new Error(
      `startTimestamp ${start} is not after the head's ${headTime}; start anvil with an earlier --timestamp`,
    );
  }
  const chainId = hexToNumber(await rpc.call<Hex>("eth_chainId"));
  const world = createWorld(prng, options.accounts ?? 30);
  await fundAndImpersonate(builder, [world.deployer, ...world.accounts]);
  const counts = emptyCounts();
  const contracts: Partial<DemoContracts> = {};

  const automine = await rpc.call<boolean>("anvil_getAutomine");
  await rpc.call("evm_setAutomine", [false]);

  let lastTimestamp = start - SLOT;
  let firstBlock: number | undefined;
  let firstTimestamp: number | undefined;
  let lastBlock = 0;
  let blockCount = 0;
  let transactions = 0;
  let logs = 0;
  let day = 0;
  const slotsToday = new Set<number>();

  /** The next block time on `day`: a random free slot, never before the previous block. */
  const nextTimestamp = (): number => {
    const dayStart = start + day * DAY;
    let t = dayStart + prng.int(0, DAY / SLOT - 1) * SLOT;
    if (t <= lastTimestamp) t = lastTimestamp + SLOT * prng.int(1, 30);
    while (slotsToday.has(t)) t += SLOT;
    slotsToday.add(t);
    return t;
  };
  const commit = async (timestamp: number): Promise<RpcReceipt[]> => {
    transactions += builder.queued.length;
    const block = await builder.mine(timestamp);
    firstBlock ??= block.number;
    firstTimestamp ??= block.timestamp;
    lastBlock = block.number;
    lastTimestamp = block.timestamp;
    blockCount++;
    for (const r of block.receipts) logs += r.logs.length;
    return block.receipts;
  };

  try {
    const deployer = new Deployer(world, builder, counts, contracts, prng, options.punkSupply ?? 500);
    // Setup of the first day happens in its first hours, in order.
    const setupTimes = (): number => {
      const t = Math.max(lastTimestamp + SLOT * prng.int(5, 60), start);
      lastTimestamp = t;
      slotsToday.add(t);
      return t;
    };
    await deployer.deployCore(async () => commit(setupTimes()));
    const schedule: { day: number; deploy: () => Promise<void> }[] = [
      {
        day: Math.floor(days * 0.1),
        deploy: () => deployer.deployConsecutive(async () => commit(nextTimestamp())),
      },
      {
        day: Math.floor(days * 0.2),
        deploy: () => deployer.deployFromFactory("erc721Create2", async () => commit(nextTimestamp())),
      },
      {
        day: Math.floor(days * 0.45),
        deploy: () => deployer.deployFromFactory("erc721Create", async () => commit(nextTimestamp())),
      },
    ];

    const planner = new ActivityPlanner(world, prng, counts);
    for (day = 0; day < days; day++) {
      options.signal?.throwIfAborted();
      if (day > 0) slotsToday.clear();
      // A deployment scheduled for the day comes before that day's trading.
      for (const item of schedule) if (item.day === day) await item.deploy();
      const blocks = blocksOnDay(prng, day, days, blocksPerDay);
      const times = Array.from({ length: blocks }, () => nextTimestamp()).sort((a, b) => a - b);
      for (const timestamp of times) {
        const touched = new Set<string>();
        const actions = Math.max(1, Math.round(actionsPerBlock * (0.3 + 1.4 * prng.next())));
        for (let i = 0; i < actions; i++) await builder.addMany(planner.plan(touched));
        await commit(Math.max(timestamp, lastTimestamp + 1));
      }
      options.onProgress?.({ day: day + 1, days, blocks: blockCount, transactions });
    }
  } finally {
    await rpc.call("evm_setAutomine", [automine]);
  }

  return {
    seed: options.seed,
    chainId,
    deployer: world.deployer,
    accounts: [...world.accounts],
    contracts: completeContracts(contracts),
    counts,
    transactions,
    logs,
    blocks: { first: firstBlock ?? 0, last: lastBlock, count: blockCount },
    timestamps: { first: firstTimestamp ?? start, last: lastTimestamp },
  };
}

export interface LiveActivityOptions extends DemoOptions {
  intervalMs: number;
  signal: AbortSignal;
  /** Contracts to trade on (a history's `contracts`); without them a fresh set is deployed first. */
  contracts?: DemoContracts;
  /** User actions per interval. Default 3. */
  actionsPerTick?: number;
  onTick?: (tick: { tick: number; transactions: number; blockNumber: number }) => void;
}

export interface LiveActivitySummary {
  contracts: DemoContracts;
  ticks: number;
  transactions: number;
  counts: ActivityCounts;
}

/**
 * Sends a few transactions every `intervalMs` until `signal` aborts, then resolves. Works whether
 * anvil automines (each transaction its own block), mines on an interval, or not at all (then a
 * block is mined per tick). Its state is read back from the chain, so it can follow a history
 * generated by another process.
 */
export async function runLiveActivity(options: LiveActivityOptions): Promise<LiveActivitySummary> {
  const prng = new Prng(`${options.seed}:live`);
  const builder = new BlockBuilder(options.rpcUrl);
  const rpc = builder.rpc;
  const accountCount = options.accounts ?? 30;
  const counts = emptyCounts();
  const automine = await rpc.call<boolean>("anvil_getAutomine");
  let transactions = 0;
  let lastBlock = 0;
  const commit = async (): Promise<RpcReceipt[]> => {
    transactions += builder.queued.length;
    // Without automine, mine a block; an interval miner may also have taken some of them already.
    if (!automine) await rpc.call("evm_mine");
    const receipts = await builder.settle();
    for (const r of receipts) lastBlock = Math.max(lastBlock, hexToNumber(r.blockNumber));
    return receipts;
  };

  // A history may have ended in the past; live blocks should carry the present time.
  const head = await rpc.call<BlockHead>("eth_getBlockByNumber", ["latest", false]);
  const now = Math.floor(Date.now() / 1000);
  if (hexToNumber(head.timestamp) < now - 1) await rpc.call("evm_setNextBlockTimestamp", [now]);

  let world: World;
  let contracts: DemoContracts;
  if (options.contracts) {
    world = createWorld(prng, accountCount);
    await fundAndImpersonate(builder, [world.deployer, ...world.accounts]);
    await loadWorldFromChain(rpc, world, options.contracts);
    contracts = options.contracts;
  } else {
    world = createWorld(prng, accountCount);
    await fundAndImpersonate(builder, [world.deployer, ...world.accounts]);
    const deployed: Partial<DemoContracts> = {};
    const deployer = new Deployer(world, builder, counts, deployed, prng, options.punkSupply ?? 500);
    await deployer.deployCore(commit);
    await deployer.deployConsecutive(commit);
    await deployer.deployFromFactory("erc721Create2", commit);
    await deployer.deployFromFactory("erc721Create", commit);
    contracts = completeContracts(deployed);
  }

  const planner = new ActivityPlanner(world, prng, counts);
  const actionsPerTick = options.actionsPerTick ?? 3;
  let ticks = 0;
  while (!options.signal.aborted) {
    const touched = new Set<string>();
    for (let i = 0; i < actionsPerTick; i++) {
      // One at a time: an automining node mines each as it arrives, in this order.
      for (const tx of planner.plan(touched)) await builder.add(tx);
    }
    const sent = builder.queued.length;
    await commit();
    ticks++;
    options.onTick?.({ tick: ticks, transactions: sent, blockNumber: lastBlock });
    await sleep(options.intervalMs, options.signal);
  }
  return { contracts, ticks, transactions, counts };
}

function createWorld(prng: Prng, accountCount: number): World {
  if (!(accountCount >= 2)) throw new RangeError("at least two accounts are needed to trade");
  return new World(devAddress(0), devAddresses(accountCount, 1), accountWeights(prng, accountCount));
}

async function fundAndImpersonate(builder: BlockBuilder, addresses: readonly Address[]): Promise<void> {
  await builder.rpc.batch(
    addresses.flatMap((address) => [
      { method: "anvil_setBalance", params: [address, numberToHex(ACCOUNT_BALANCE)] },
      { method: "anvil_impersonateAccount", params: [address] },
    ]),
  );
}

/** Activity grows over the period, dips at weekends and has the odd busy day. */
function blocksOnDay(prng: Prng, day: number, days: number, perDay: number): number {
  const trend = 0.5 + (day / days) * 1.0;
  const weekend = day % 7 === 5 || day % 7 === 6 ? 0.6 : 1;
  const spike = prng.chance(0.04) ? 3 : 1;
  return Math.round(perDay * trend * weekend * spike * (0.4 + 1.2 * prng.next()));
}

function completeContracts(contracts: Partial<DemoContracts>): DemoContracts {
  for (const key of DEMO_CONTRACT_KEYS) {
    if (!contracts[key]) throw new Error(`demo contract ${key} was not deployed`);
  }
  return Object.fromEntries(DEMO_CONTRACT_KEYS.map((k) => [k, contracts[k]])) as DemoContracts;
}

async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

type Commit = () => Promise<RpcReceipt[]>;

/** Deploys the demo contracts and does their one-off setup, recording each in the world model. */
class Deployer {
  constructor(
    private readonly world: World,
    private readonly builder: BlockBuilder,
    private readonly counts: ActivityCounts,
    private readonly contracts: Partial<DemoContracts>,
    private readonly prng: Prng,
    private readonly punkSupply: number,
  ) {}

  private record(key: DemoContractKey, contract: Omit<DemoContract, "key" | "contractName">): DemoContract {
    const entry: DemoContract = { key, contractName: DEMO_CONTRACT_NAMES[key], ...contract };
    this.contracts[key] = entry;
    this.world.contracts[key] = entry;
    this.counts.deployments++;
    return entry;
  }

  private async deploy(
    key: DemoContractKey,
    args: readonly unknown[],
    gas: bigint,
    commit: Commit,
  ): Promise<DemoContract> {
    const from = this.world.deployer;
    const queued = await this.builder.add(deployTx(from, DEMO_CONTRACT_NAMES[key], args, gas));
    const receipts = await commit();
    const receipt = receipts.find((r) => r.transactionHash === queued.hash);
    if (!receipt?.contractAddress) throw new Error(`deployment of ${key} has no contract address`);
    return this.record(key, {
      address: receipt.contractAddress.toLowerCase() as Address,
      txHash: queued.hash,
      blockNumber: hexToNumber(receipt.blockNumber),
      creator: from,
      via: "deployment",
    });
  }

  /** Factory, the first collections, the market and the currency, then the punks' initial assignment. */
  async deployCore(commit: Commit): Promise<void> {
    const accounts = this.world.accountSet;
    await this.deploy("factory", [], GAS.deployFactory, commit);
    const erc721 = await this.deploy("erc721", ["Mintlens Apes", "MAPE"], GAS.deployErc721, commit);
    this.world.erc721.set("erc721", new Erc721Model("erc721", erc721, 1n));
    const erc20 = await this.deploy("erc20", ["Demo Token", "DEMO"], GAS.deployErc20, commit);
    this.world.erc20 = new Erc20Model(erc20);
    await this.deploy("marketplace", [], GAS.deployMarketplace, commit);
    const legacy = await this.deploy("legacyErc721", ["OldKitties", "OK"], GAS.deployLegacy, commit);
    this.world.legacy = new LegacyModel(legacy, 0n);
    const erc1155 = await this.deploy(
      "erc1155",
      ["https://nft.example/editions/{id}.json"],
      GAS.deployErc1155,
      commit,
    );
    this.world.erc1155 = new Erc1155Model(erc1155, DEMO_ERC1155_IDS);
    const punksContract = await this.deploy("punks", [BigInt(this.punkSupply)], GAS.deployPunks, commit);
    const punks = new PunksModel(punksContract, this.punkSupply);
    this.world.punks = punks;

    // An airdrop of the currency, so buyers can pay in it.
    for (const account of this.world.accounts) {
      this.world.erc20.move(null, account, ERC20_AIRDROP);
      this.counts.erc20Mints++;
      await this.builder.add(
        callTx(
          this.world.deployer,
          erc20.address,
          "TestERC20",
          "mint",
          [account, ERC20_AIRDROP],
          GAS.erc20Mint,
        ),
      );
    }
    await commit();

    // As with the original, most punks are handed out by the owner, the rest claimed later.
    const assigned = this.prng.sample(
      Array.from({ length: this.punkSupply }, (_, i) => i),
      Math.floor(this.punkSupply * 0.6),
    );
    for (let i = 0; i < assigned.length; i += PUNK_ASSIGN_BATCH) {
      const indices = assigned.slice(i, i + PUNK_ASSIGN_BATCH);
      const owners = indices.map(() => this.world.pickAccount(this.prng));
      indices.forEach((index, j) => {
        punks.setOwner(index, owners[j] as Address, accounts);
      });
      this.counts.punksAssigned += indices.length;
      await this.builder.add(
        callTx(
          this.world.deployer,
          punksContract.address,
          "CryptoPunksMarket",
          "setInitialOwners",
          [owners, indices.map(BigInt)],
          punksAssignGas(indices.length),
        ),
      );
      await commit();
    }
    await this.builder.add(
      callTx(
        this.world.deployer,
        punksContract.address,
        "CryptoPunksMarket",
        "allInitialOwnersAssigned",
        [],
        GAS.punksAllAssigned,
      ),
    );
    await commit();
    punks.allAssigned = true;
    await this.deployTrading(commit);
  }

  /** Deployments queued together, mined in one block: each lands where its sender's nonce puts it. */
  private async deployMany(
    items: readonly { key: DemoContractKey; args: readonly unknown[]; gas: bigint }[],
    commit: Commit,
  ): Promise<DemoContract[]> {
    const from = this.world.deployer;
    const queued: { key: DemoContractKey; hash: Hex }[] = [];
    for (const { key, args, gas } of items) {
      const tx = await this.builder.add(deployTx(from, DEMO_CONTRACT_NAMES[key], args, gas));
      queued.push({ key, hash: tx.hash });
    }
    const receipts = await commit();
    return queued.map(({ key, hash }) => {
      const receipt = receipts.find((r) => r.transactionHash === hash);
      if (!receipt?.contractAddress) throw new Error(`deployment of ${key} has no contract address`);
      return this.record(key, {
        address: receipt.contractAddress.toLowerCase() as Address,
        txHash: hash,
        blockNumber: hexToNumber(receipt.blockNumber),
        creator: from,
        via: "deployment",
      });
    });
  }

  /**
   * The trading venues and currencies: WETH, a dollar stablecoin, Seaport 1.6 and its conduit
   * controller, Uniswap V2 with a WETH/dollar and a token/WETH pair seeded with liquidity, the
   * escrow market and its aggregator, the deal desk and a paid-mint collection. Every account
   * wraps some ETH, gets dollars, and approves Seaport and the desk to take its WETH and dollars.
   */
  async deployTrading(commit: Commit): Promise<void> {
    const { deployer } = this.world;
    const erc20 = this.contracts.erc20;
    if (!erc20) throw new Error("the token must be deployed first");
    const [weth, stablecoin, controller, factory] = (await this.deployMany(
      [
        { key: "weth", args: [], gas: GAS.deployErc20 },
        { key: "stablecoin", args: ["Demo Dollar", "DUSD"], gas: GAS.deployErc20 },
        { key: "conduitController", args: [], gas: GAS.deployConduitController },
        { key: "uniswapFactory", args: [deployer], gas: GAS.deployUniswapFactory },
        { key: "escrow", args: [FEE_RECIPIENT, Number(MARKET_FEE_BPS)], gas: GAS.deployMarket },
        { key: "aggregator", args: [], gas: GAS.deployMarket },
        { key: "dealDesk", args: [], gas: GAS.deployMarket },
        { key: "paidMint", args: ["Mintlens Passes", "PASS", PAID_MINT_PRICE], gas: GAS.deployMarket },
      ],
      commit,
    )) as [DemoContract, DemoContract, DemoContract, DemoContract];
    const [seaport] = (await this.deployMany(
      [{ key: "seaport", args: [controller.address], gas: GAS.deploySeaport }],
      commit,
    )) as [DemoContract];

    // The pairs, made by the factory (CREATE2): only its PairCreated events say where.
    const pairTxs = [
      await this.builder.add(
        callTx(
          deployer,
          factory.address,
          "UniswapV2Factory",
          "createPair",
          [weth.address, stablecoin.address],
          GAS.createPair,
        ),
      ),
      await this.builder.add(
        callTx(
          deployer,
          factory.address,
          "UniswapV2Factory",
          "createPair",
          [erc20.address, weth.address],
          GAS.createPair,
        ),
      ),
    ];
    const receipts = await commit();
    const seeds: Record<Address, bigint> = {
      [weth.address]: 0n,
      [stablecoin.address]: 0n,
      [erc20.address]: 0n,
    };
    const pools: PoolModel[] = [];
    for (const [i, key] of (["wethStablePool", "tokenWethPool"] as const).entries()) {
      const tx = pairTxs[i] as { hash: Hex };
      const receipt = receipts.find((r) => r.transactionHash === tx.hash);
      const log = receipt?.logs.find(
        (l) => l.address.toLowerCase() === factory.address && l.topics.length === 3,
      );
      const [, topic0, topic1] = log?.topics ?? [];
      if (!receipt || !log || !topic0 || !topic1)
        throw new Error(`createPair for ${key} logged no PairCreated`);
      const contract = this.record(key, {
        address: wordToAddress(log.data.slice(0, 66)),
        txHash: tx.hash,
        blockNumber: hexToNumber(receipt.blockNumber),
        creator: factory.address,
        via: "factory-create2",
      });
      const [token0, token1] = [wordToAddress(topic0), wordToAddress(topic1)];
      const reserves = key === "wethStablePool" ? POOL_SEEDS.wethStable : POOL_SEEDS.tokenWeth;
      const amountOf = (token: Address) => reserves[token === weth.address ? "weth" : "other"];
      pools.push({ contract, token0, token1, reserve0: amountOf(token0), reserve1: amountOf(token1) });
      seeds[token0] = (seeds[token0] ?? 0n) + amountOf(token0);
      seeds[token1] = (seeds[token1] ?? 0n) + amountOf(token1);
    }

    const wethModel = new Erc20Model(weth);
    const stableModel = new Erc20Model(stablecoin);
    const trading = new TradingModel(wethModel, stableModel, FEE_RECIPIENT, CREATOR);
    trading.pools.push(...pools);
    this.world.trading = trading;
    const txs = [
      // The trader's stock: WETH, dollars and tokens to seed the pairs and swap with for months.
      callTx(deployer, weth.address, "CanonicalWETH9", "deposit", [], GAS.wethDeposit, {
        value: TRADER_WETH,
      }),
      callTx(deployer, stablecoin.address, "TestStablecoin", "mint", [deployer, TRADER_STOCK], GAS.erc20Mint),
      callTx(deployer, erc20.address, "TestERC20", "mint", [deployer, TRADER_STOCK], GAS.erc20Mint),
      ...pools.flatMap((pool) => [
        callTx(
          deployer,
          pool.token0,
          "TestERC20",
          "transfer",
          [pool.contract.address, pool.reserve0],
          GAS.erc20Transfer,
        ),
        callTx(
          deployer,
          pool.token1,
          "TestERC20",
          "transfer",
          [pool.contract.address, pool.reserve1],
          GAS.erc20Transfer,
        ),
        callTx(deployer, pool.contract.address, "UniswapV2Pair", "mint", [deployer], GAS.poolMint),
      ]),
    ];
    for (const collection of MINTABLE_ERC721_KEYS.filter((k) => this.contracts[k])) {
      txs.push(
        callTx(
          deployer,
          (this.contracts.escrow as DemoContract).address,
          "EscrowMarket",
          "setRoyalty",
          [(this.contracts[collection] as DemoContract).address, CREATOR, Number(ROYALTY_BPS)],
          GAS.setRoyalty,
        ),
      );
    }
    const desk = (this.contracts.dealDesk as DemoContract).address;
    for (const account of this.world.accounts) {
      wethModel.move(null, account, ACCOUNT_WETH);
      stableModel.move(null, account, ACCOUNT_DOLLARS);
      txs.push(
        callTx(account, weth.address, "CanonicalWETH9", "deposit", [], GAS.wethDeposit, {
          value: ACCOUNT_WETH,
        }),
        callTx(
          account,
          stablecoin.address,
          "TestStablecoin",
          "mint",
          [account, ACCOUNT_DOLLARS],
          GAS.erc20Mint,
        ),
        ...[seaport.address, desk].flatMap((spender) => [
          callTx(account, weth.address, "CanonicalWETH9", "approve", [spender, maxUint256], GAS.erc20Approve),
          callTx(
            account,
            stablecoin.address,
            "TestStablecoin",
            "approve",
            [spender, maxUint256],
            GAS.erc20Approve,
          ),
        ]),
      );
    }
    await this.builder.addMany(txs);
    await commit();
  }

  /** The ERC-2309 collection: its constructor mints a few ranges to a few holders. */
  async deployConsecutive(commit: Commit): Promise<void> {
    const receivers = this.prng.sample(this.world.accounts, 4);
    const amounts = receivers.map(() => this.prng.int(20, 250));
    const c = await this.deploy(
      "erc721Consecutive",
      ["Mintlens Consecutive", "MCON", receivers, amounts.map(BigInt)],
      GAS.deployConsecutive + GAS.perConsecutiveRange * BigInt(receivers.length),
      commit,
    );
    const total = amounts.reduce((a, b) => a + b, 0);
    const model = new Erc721Model("erc721Consecutive", c, BigInt(total));
    let id = 0n;
    receivers.forEach((to, i) => {
      for (let j = 0; j < (amounts[i] as number); j++) model.setOwner(id++, to, this.world.accountSet);
    });
    this.world.erc721.set("erc721Consecutive", model);
    this.counts.consecutiveMinted += total;
  }

  /** A collection created by the factory (CREATE2 or CREATE), which only call traces reveal. */
  async deployFromFactory(key: Exclude<MintableErc721Key, "erc721">, commit: Commit): Promise<void> {
    const factory = this.contracts.factory;
    if (!factory) throw new Error("the factory must be deployed first");
    const creator = this.world.pickAccount(this.prng);
    const create2 = key === "erc721Create2";
    const [name, symbol] = create2 ? ["Factory Punks", "FPNK"] : ["Factory Frogs", "FROG"];
    const salt = keccak256(stringToHex(`mintlens-demo:${key}:${this.prng.uint32()}`));
    const queued = await this.builder.add(
      create2
        ? callTx(
            creator,
            factory.address,
            "CollectionFactory",
            "deployERC721",
            [salt, name, symbol],
            GAS.factoryCollection,
          )
        : callTx(
            creator,
            factory.address,
            "CollectionFactory",
            "deployERC721WithCreate",
            [name, symbol],
            GAS.factoryCollection,
          ),
    );
    const receipts = await commit();
    const receipt = receipts.find((r) => r.transactionHash === queued.hash);
    // CollectionCreated(address indexed collection, address indexed creator, ...)
    const log = receipt?.logs.find(
      (l) => l.address.toLowerCase() === factory.address && l.topics.length === 3,
    );
    const topic = log?.topics[1];
    if (!receipt || !topic) throw new Error(`factory deployment of ${key} emitted no CollectionCreated`);
    const contract = this.record(key, {
      address: wordToAddress(topic),
      txHash: queued.hash,
      blockNumber: hexToNumber(receipt.blockNumber),
      creator: factory.address,
      via: create2 ? "factory-create2" : "factory-create",
    });
    this.world.erc721.set(key, new Erc721Model(key, contract, 1n));
  }
}
