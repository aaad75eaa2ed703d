import { encodeDeployData, encodeFunctionData } from "viem";
import type { Address, Hex } from "../core/hex.ts";
import { type ContractName, loadArtifact } from "../devchain/artifacts.ts";
import type { TxRequest } from "./block-builder.ts";

/** The contracts a demo chain holds, by the role they play in it. */
export const DEMO_CONTRACT_KEYS = [
  "factory",
  "erc721",
  "erc721Create2",
  "erc721Create",
  "erc721Consecutive",
  "erc1155",
  "legacyErc721",
  "punks",
  "erc20",
  "marketplace",
  "weth",
  "stablecoin",
  "conduitController",
  "seaport",
  "uniswapFactory",
  "wethStablePool",
  "tokenWethPool",
  "escrow",
  "aggregator",
  "dealDesk",
  "paidMint",
] as const;
export type DemoContractKey = (typeof DEMO_CONTRACT_KEYS)[number];

export const DEMO_CONTRACT_NAMES: Record<DemoContractKey, ContractName> = {
  factory: "CollectionFactory",
  erc721: "TestERC721",
  erc721Create2: "TestERC721",
  erc721Create: "TestERC721",
  erc721Consecutive: "TestERC721Consecutive",
  erc1155: "TestERC1155",
  legacyErc721: "LegacyERC721",
  punks: "CryptoPunksMarket",
  erc20: "TestERC20",
  marketplace: "TestMarketplace",
  weth: "CanonicalWETH9",
  stablecoin: "TestStablecoin",
  conduitController: "LocalConduitController",
  seaport: "Seaport",
  uniswapFactory: "UniswapV2Factory",
  wethStablePool: "UniswapV2Pair",
  tokenWethPool: "UniswapV2Pair",
  escrow: "EscrowMarket",
  aggregator: "SweepAggregator",
  dealDesk: "DealDesk",
  paidMint: "PaidMintERC721",
};

export interface DemoContract {
  key: DemoContractKey;
  contractName: ContractName;
  address: Address;
  /** The transaction that created it: a deployment, or a call into the factory. */
  txHash: Hex;
  blockNumber: number;
  /** The account whose CREATE/CREATE2 made it: the deployer, or the factory. */
  creator: Address;
  via: "deployment" | "factory-create2" | "factory-create";
}

export type DemoContracts = Record<DemoContractKey, DemoContract>;

/** The ERC-721 collections that take ordinary mints, in the order activity prefers them. */
export const MINTABLE_ERC721_KEYS = ["erc721", "erc721Create2", "erc721Create"] as const;
export type MintableErc721Key = (typeof MINTABLE_ERC721_KEYS)[number];
export type Erc721Key = MintableErc721Key | "erc721Consecutive";

/** The ERC-1155's token ids: 1-3 are one-of-ones, 4-8 small editions, the rest open editions. */
export const DEMO_ERC1155_IDS: readonly bigint[] = Array.from({ length: 12 }, (_, i) => BigInt(i + 1));

export const DEAD_ADDRESS: Address = "0x000000000000000000000000000000000000dead";

export function encodeCall(contract: ContractName, functionName: string, args: readonly unknown[] = []): Hex {
  return encodeFunctionData({ abi: loadArtifact(contract).abi, functionName, args });
}

export function encodeDeploy(contract: ContractName, args: readonly unknown[] = []): Hex {
  const artifact = loadArtifact(contract);
  return encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args });
}

export interface CallOptions {
  value?: bigint;
  label?: string;
}

export function callTx(
  from: Address,
  to: Address,
  contract: ContractName,
  functionName: string,
  args: readonly unknown[],
  gas: bigint,
  options: CallOptions = {},
): TxRequest {
  return {
    from,
    to,
    data: encodeCall(contract, functionName, args),
    gas,
    value: options.value,
    label: options.label ?? `${contract}.${functionName}`,
  };
}

export function deployTx(
  from: Address,
  contract: ContractName,
  args: readonly unknown[],
  gas: bigint,
): TxRequest {
  return { from, to: null, data: encodeDeploy(contract, args), gas, label: `deploy ${contract}` };
}

/**
 * Gas limits, about twice what the worst case measured on anvil uses. Transactions are queued
 * before the block they depend on is mined, so estimating is not an option; unused gas is refunded
 * and only counts against the block gas limit.
 */
export const GAS = {
  deployFactory: 6_000_000n,
  deployErc721: 3_500_000n,
  deployErc1155: 3_500_000n,
  deployLegacy: 1_500_000n,
  deployPunks: 4_000_000n,
  deployErc20: 1_500_000n,
  deployMarketplace: 1_000_000n,
  /** Plus `perConsecutiveRange` for each range minted by the constructor. */
  deployConsecutive: 4_000_000n,
  perConsecutiveRange: 150_000n,
  factoryCollection: 4_000_000n,
  erc721Mint: 150_000n,
  /** mintBatch: base plus per token. */
  erc721MintBatchBase: 80_000n,
  erc721MintBatchPerToken: 40_000n,
  erc721Transfer: 150_000n,
  erc721Burn: 120_000n,
  approvalForAll: 100_000n,
  erc1155Mint: 150_000n,
  erc1155BatchBase: 100_000n,
  erc1155BatchPerId: 60_000n,
  erc1155Transfer: 150_000n,
  erc1155Burn: 100_000n,
  legacyMint: 150_000n,
  legacyTransfer: 120_000n,
  legacyApprove: 100_000n,
  punksAssignBase: 80_000n,
  punksAssignPerPunk: 100_000n,
  punksAllAssigned: 100_000n,
  punksClaim: 150_000n,
  punksTransfer: 250_000n,
  punksOffer: 300_000n,
  punksCancel: 200_000n,
  punksBuy: 350_000n,
  punksBid: 250_000n,
  punksAcceptBid: 350_000n,
  punksWithdrawBid: 150_000n,
  punksWithdraw: 100_000n,
  erc20Mint: 150_000n,
  erc20Transfer: 120_000n,
  erc20Approve: 100_000n,
  marketList: 250_000n,
  marketBuy: 400_000n,
  deploySeaport: 12_000_000n,
  deployConduitController: 4_000_000n,
  deployUniswapFactory: 5_000_000n,
  deployMarket: 3_000_000n,
  createPair: 4_000_000n,
  poolMint: 300_000n,
  poolSwap: 200_000n,
  wethDeposit: 100_000n,
  seaportValidate: 200_000n,
  seaportBasic: 400_000n,
  /** fulfillAvailableAdvancedOrders: per order. */
  seaportPerOrder: 300_000n,
  escrowList: 150_000n,
  /** EscrowMarket.list and buy: per item. */
  escrowPerItem: 120_000n,
  escrowBuy: 250_000n,
  /** SweepAggregator.sweep: per listing. */
  sweepPerListing: 400_000n,
  dealSettle: 200_000n,
  paidMint: 150_000n,
  setRoyalty: 100_000n,
} as const;

export function erc721MintBatchGas(count: number): bigint {
  return GAS.erc721MintBatchBase + GAS.erc721MintBatchPerToken * BigInt(count);
}

export function erc1155BatchGas(ids: number): bigint {
  return GAS.erc1155BatchBase + GAS.erc1155BatchPerId * BigInt(ids);
}

export function punksAssignGas(count: number): bigint {
  return GAS.punksAssignBase + GAS.punksAssignPerPunk * BigInt(count);
}
