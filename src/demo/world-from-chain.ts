/**
 * Rebuilds the activity model from an existing demo chain, so live activity can continue a
 * history made by an earlier process (anvil restarted from its --state file, say).
 */
import {
  decodeAbiParameters,
  decodeFunctionResult,
  encodeFunctionData,
  toEventSelector,
  type Hex as ViemHex,
} from "viem";
import { type Address, type Hex, wordToAddress, ZERO_ADDRESS } from "../core/hex.ts";
import { type ContractName, loadArtifact } from "../devchain/artifacts.ts";
import type { RpcLog } from "./block-builder.ts";
import {
  DEMO_CONTRACT_KEYS,
  DEMO_ERC1155_IDS,
  type DemoContracts,
  type Erc721Key,
  MINTABLE_ERC721_KEYS,
} from "./contracts.ts";
import { CREATOR, FEE_RECIPIENT } from "./markets/fees.ts";
import type { JsonRpc, RpcCall } from "./rpc.ts";
import {
  Erc20Model,
  Erc721Model,
  Erc1155Model,
  LegacyModel,
  PunksModel,
  TradingModel,
  type World,
} from "./world.ts";

const TRANSFER = toEventSelector("Transfer(address,address,uint256)");
const APPROVAL = toEventSelector("Approval(address,address,uint256)");
const APPROVAL_FOR_ALL = toEventSelector("ApprovalForAll(address,address,bool)");
const CONSECUTIVE_TRANSFER = toEventSelector("ConsecutiveTransfer(uint256,uint256,address,address)");
const TRANSFER_SINGLE = toEventSelector("TransferSingle(address,address,address,uint256,uint256)");
const TRANSFER_BATCH = toEventSelector("TransferBatch(address,address,address,uint256[],uint256[])");
const LISTED = toEventSelector("Listed(address,uint256,address,address,uint256)");
const ESCROW_LISTED = toEventSelector("Listed(uint256,address,address,uint256)");

/** Calls per JSON-RPC batch when reading state. */
const READ_BATCH = 500;

export async function loadWorldFromChain(
  rpc: JsonRpc,
  world: World,
  contracts: DemoContracts,
): Promise<void> {
  for (const key of DEMO_CONTRACT_KEYS) world.contracts[key] = contracts[key];
  const accounts = world.accountSet;
  const marketplace = contracts.marketplace.address;

  const byAddress = new Map<Address, Erc721Model>();
  for (const key of [...MINTABLE_ERC721_KEYS, "erc721Consecutive"] as Erc721Key[]) {
    const model = new Erc721Model(key, contracts[key], key === "erc721Consecutive" ? 0n : 1n);
    world.erc721.set(key, model);
    byAddress.set(contracts[key].address, model);
  }
  const erc1155 = new Erc1155Model(contracts.erc1155, DEMO_ERC1155_IDS);
  world.erc1155 = erc1155;
  const legacy = new LegacyModel(contracts.legacyErc721, 0n);
  world.legacy = legacy;

  const fromBlock = Math.min(...DEMO_CONTRACT_KEYS.map((k) => contracts[k].blockNumber));
  const logs = await rpc.call<RpcLog[]>("eth_getLogs", [
    {
      fromBlock: `0x${fromBlock.toString(16)}`,
      toBlock: "latest",
      address: [...byAddress.keys(), erc1155.contract.address, legacy.contract.address, marketplace],
    },
  ]);

  // Logs come in chain order, so replaying them leaves each token with its current owner.
  for (const log of logs) {
    const address = log.address.toLowerCase() as Address;
    const [topic0, t1, t2, t3] = log.topics;
    const erc721 = byAddress.get(address);
    if (erc721) {
      if (topic0 === TRANSFER && t3 && t2) {
        const to = wordToAddress(t2);
        erc721.setOwner(BigInt(t3), to === ZERO_ADDRESS ? undefined : to, accounts);
      } else if (topic0 === CONSECUTIVE_TRANSFER && t1 && t3) {
        const [last] = decodeAbiParameters([{ type: "uint256" }], log.data as ViemHex);
        const to = wordToAddress(t3);
        for (let id = BigInt(t1); id <= last; id++) erc721.setOwner(id, to, accounts);
      } else if (topic0 === APPROVAL_FOR_ALL && t1 && t2 && wordToAddress(t2) === marketplace) {
        const owner = wordToAddress(t1);
        if (BigInt(log.data) === 0n) erc721.marketApproved.delete(owner);
        else erc721.marketApproved.add(owner);
      }
    } else if (address === erc1155.contract.address && t2 && t3) {
      const from = wordToAddress(t2);
      const to = wordToAddress(t3);
      let ids: readonly bigint[] = [];
      let values: readonly bigint[] = [];
      if (topic0 === TRANSFER_SINGLE) {
        const [id, value] = decodeAbiParameters(
          [{ type: "uint256" }, { type: "uint256" }],
          log.data as ViemHex,
        );
        ids = [id];
        values = [value];
      } else if (topic0 === TRANSFER_BATCH) {
        [ids, values] = decodeAbiParameters(
          [{ type: "uint256[]" }, { type: "uint256[]" }],
          log.data as ViemHex,
        );
      }
      ids.forEach((id, i) => {
        const value = values[i] ?? 0n;
        if (from !== ZERO_ADDRESS) erc1155.add(id, from, -value, accounts);
        if (to !== ZERO_ADDRESS) erc1155.add(id, to, value, accounts);
      });
    } else if (address === legacy.contract.address && log.topics.length === 1) {
      const [, second, id] = decodeAbiParameters(
        [{ type: "address" }, { type: "address" }, { type: "uint256" }],
        log.data as ViemHex,
      );
      const target = second.toLowerCase() as Address;
      if (topic0 === TRANSFER) {
        legacy.setOwner(id, target, accounts);
        if (id > legacy.totalSupply) legacy.totalSupply = id;
      } else if (topic0 === APPROVAL) {
        legacy.approvals.set(id, target);
      }
    } else if (address === marketplace && topic0 === LISTED && t1 && t2 && t3) {
      const collection = byAddress.get(wordToAddress(t1));
      const id = BigInt(t2);
      const seller = wordToAddress(t3);
      const [currency, price] = decodeAbiParameters(
        [{ type: "address" }, { type: "uint256" }],
        log.data as ViemHex,
      );
      const currencyAddress = currency.toLowerCase() as Address;
      if (collection && collection.owners.get(id) === seller) {
        collection.listings.set(id, {
          seller,
          currency: currencyAddress === ZERO_ADDRESS ? null : currencyAddress,
          price,
        });
      }
    }
  }
  for (const model of byAddress.values()) {
    // A listing can only fill if its seller still lets the market move the token.
    for (const [id, listing] of model.listings) {
      if (!model.marketApproved.has(listing.seller)) model.listings.delete(id);
    }
  }

  await loadPunks(rpc, world, contracts);
  await loadErc20(rpc, world, contracts);
  await loadTrading(rpc, world, contracts);
}

/**
 * Balances of WETH and dollars, the pairs' reserves and the escrow market's listing count. Open
 * orders of the past are left alone (live trading makes new ones), and NFT approvals are given
 * again when first needed.
 */
async function loadTrading(rpc: JsonRpc, world: World, contracts: DemoContracts): Promise<void> {
  const weth = new Erc20Model(contracts.weth);
  const stablecoin = new Erc20Model(contracts.stablecoin);
  for (const model of [weth, stablecoin]) {
    const balances = await readMany<bigint>(
      rpc,
      "TestERC20",
      model.contract.address,
      world.accounts.map((a) => ["balanceOf", [a]]),
    );
    world.accounts.forEach((account, i) => {
      model.balances.set(account, balances[i] ?? 0n);
    });
  }
  const trading = new TradingModel(weth, stablecoin, FEE_RECIPIENT, CREATOR);
  for (const key of ["wethStablePool", "tokenWethPool"] as const) {
    const contract = contracts[key];
    const [token0, token1, reserves] = await readMany<unknown>(rpc, "UniswapV2Pair", contract.address, [
      ["token0", []],
      ["token1", []],
      ["getReserves", []],
    ]);
    const [reserve0, reserve1] = reserves as readonly [bigint, bigint, number];
    trading.pools.push({
      contract,
      token0: (token0 as Address).toLowerCase() as Address,
      token1: (token1 as Address).toLowerCase() as Address,
      reserve0,
      reserve1,
    });
  }
  const listed = await rpc.call<RpcLog[]>("eth_getLogs", [
    {
      fromBlock: `0x${contracts.escrow.blockNumber.toString(16)}`,
      toBlock: "latest",
      address: contracts.escrow.address,
      topics: [ESCROW_LISTED],
    },
  ]);
  trading.nextEscrowListing = BigInt(listed.length);
  world.trading = trading;
}

async function loadPunks(rpc: JsonRpc, world: World, contracts: DemoContracts): Promise<void> {
  const address = contracts.punks.address;
  const [supply, allAssigned] = await readMany<unknown>(rpc, "CryptoPunksMarket", address, [
    ["totalSupply", []],
    ["allPunksAssigned", []],
  ]);
  const punks = new PunksModel(contracts.punks, Number(supply as bigint));
  world.punks = punks;
  punks.allAssigned = allAssigned === true;
  const indices = Array.from({ length: punks.supply }, (_, i) => BigInt(i));
  const owners = await readMany<Address>(
    rpc,
    "CryptoPunksMarket",
    address,
    indices.map((i) => ["punkIndexToAddress", [i]]),
  );
  const offers = await readMany<readonly [boolean, bigint, Address, bigint, Address]>(
    rpc,
    "CryptoPunksMarket",
    address,
    indices.map((i) => ["punksOfferedForSale", [i]]),
  );
  const bids = await readMany<readonly [boolean, bigint, Address, bigint]>(
    rpc,
    "CryptoPunksMarket",
    address,
    indices.map((i) => ["punkBids", [i]]),
  );
  for (let i = 0; i < punks.supply; i++) {
    const owner = (owners[i] as Address).toLowerCase() as Address;
    if (owner === ZERO_ADDRESS) continue;
    punks.setOwner(i, owner, world.accountSet);
    const [isForSale, , seller, minValue, onlySellTo] = offers[i] as readonly [
      boolean,
      bigint,
      Address,
      bigint,
      Address,
    ];
    if (isForSale && seller.toLowerCase() === owner) {
      const only = onlySellTo.toLowerCase() as Address;
      // An offer reserved for an outsider cannot be filled from here; leave it alone.
      if (only === ZERO_ADDRESS || world.accountSet.has(only)) {
        punks.offers.set(i, { seller: owner, minValue, onlySellTo: only === ZERO_ADDRESS ? null : only });
      }
    }
    const [, , bidder, value] = bids[i] as readonly [boolean, bigint, Address, bigint];
    if (value > 0n) punks.bids.set(i, { bidder: bidder.toLowerCase() as Address, value });
  }
  const pending = await readMany<bigint>(
    rpc,
    "CryptoPunksMarket",
    address,
    world.accounts.map((a) => ["pendingWithdrawals", [a]]),
  );
  world.accounts.forEach((account, i) => {
    const amount = pending[i] ?? 0n;
    if (amount > 0n) punks.pendingWithdrawals.set(account, amount);
  });
}

async function loadErc20(rpc: JsonRpc, world: World, contracts: DemoContracts): Promise<void> {
  const erc20 = new Erc20Model(contracts.erc20);
  world.erc20 = erc20;
  const balances = await readMany<bigint>(
    rpc,
    "TestERC20",
    contracts.erc20.address,
    world.accounts.map((a) => ["balanceOf", [a]]),
  );
  const allowances = await readMany<bigint>(
    rpc,
    "TestERC20",
    contracts.erc20.address,
    world.accounts.map((a) => ["allowance", [a, contracts.marketplace.address]]),
  );
  world.accounts.forEach((account, i) => {
    erc20.balances.set(account, balances[i] ?? 0n);
    // Purchases approve the maximum; anything less is re-approved before the next one.
    if ((allowances[i] ?? 0n) >= 2n ** 255n) erc20.marketApproved.add(account);
  });
}

/** eth_call of view functions at the latest block, in batches, decoded. */
async function readMany<T>(
  rpc: JsonRpc,
  contract: ContractName,
  address: Address,
  calls: readonly (readonly [string, readonly unknown[]])[],
): Promise<T[]> {
  const abi = loadArtifact(contract).abi;
  const results: unknown[] = [];
  for (let i = 0; i < calls.length; i += READ_BATCH) {
    const chunk = calls.slice(i, i + READ_BATCH);
    const requests: RpcCall[] = chunk.map(([functionName, args]) => ({
      method: "eth_call",
      params: [{ to: address, data: encodeFunctionData({ abi, functionName, args }) }, "latest"],
    }));
    const replies = await rpc.batch<Hex>(requests);
    replies.forEach((data, j) => {
      const functionName = (chunk[j] as readonly [string, readonly unknown[]])[0];
      results.push(decodeFunctionResult({ abi, functionName, data: data as ViemHex }));
    });
  }
  return results as T[];
}
