/**
 * The demo's contracts and their one-off setup: the collections, the currencies, the markets, the
 * Uniswap V2 pairs and their liquidity, the punks' first owners, and the accounts' funds. The
 * history deploys them over its first weeks; live activity on a bare chain deploys them at once.
 */
import { keccak256, maxUint256, parseEther, stringToHex } from "viem";
import type { Address, Hex } from "../core/hex.ts";
import { hexToNumber, numberToHex, wordToAddress } from "../core/hex.ts";
import { devAddress, devAddresses } from "../devchain/deploy.ts";
import type { BlockBuilder, RpcReceipt } from "./block-builder.ts";
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
import type { ActivityCounts } from "./counts.ts";
import { CREATOR, FEE_RECIPIENT, MARKET_FEE_BPS, ROYALTY_BPS } from "./markets/fees.ts";
import { PAID_MINT_PRICE } from "./markets/paid-mint.ts";
import type { Prng } from "./prng.ts";
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

/** Mines what was queued and returns its receipts: the caller chooses the block's time. */
export type Commit = () => Promise<RpcReceipt[]>;

export function createWorld(prng: Prng, accountCount: number): World {
  if (!(accountCount >= 2)) throw new RangeError("at least two accounts are needed to trade");
  return new World(devAddress(0), devAddresses(accountCount, 1), accountWeights(prng, accountCount));
}

export async function fundAndImpersonate(
  builder: BlockBuilder,
  addresses: readonly Address[],
): Promise<void> {
  await builder.rpc.batch(
    addresses.flatMap((address) => [
      { method: "anvil_setBalance", params: [address, numberToHex(ACCOUNT_BALANCE)] },
      { method: "anvil_impersonateAccount", params: [address] },
    ]),
  );
}

export function completeContracts(contracts: Partial<DemoContracts>): DemoContracts {
  for (const key of DEMO_CONTRACT_KEYS) {
    if (!contracts[key]) throw new Error(`demo contract ${key} was not deployed`);
  }
  return Object.fromEntries(DEMO_CONTRACT_KEYS.map((k) => [k, contracts[k]])) as DemoContracts;
}

/** Deploys the demo contracts and does their one-off setup, recording each in the world model. */
export class Deployer {
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
