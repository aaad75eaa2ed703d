import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Abi } from "viem";
import type { Hex } from "../core/hex.ts";

/**
 * The contracts `npm run build:contracts` puts in contracts/artifacts: compiled from
 * contracts/src, or copied from npm packages (Seaport, LocalConduitController, CanonicalWETH9,
 * UniswapV2Factory, UniswapV2Pair).
 */
export const CONTRACT_NAMES = [
  "AirdropSprayer",
  "AnyTokenAggregator",
  "BidMarket",
  "CanonicalWETH9",
  "CollectionFactory",
  "CreationFlood",
  "CryptoPunksMarket",
  "DealDesk",
  "EditionShop",
  "EntryPointV07",
  "EscrowMarket",
  "EventForge",
  "FlashLender",
  "LegacyERC721",
  "LoanDesk",
  "LocalConduitController",
  "MevRelay",
  "MultiSendV150",
  "NftSwap",
  "PaidMintERC721",
  "PeggedPool",
  "Purse",
  "SafeProxyFactoryV150",
  "SafeV150",
  "Seaport",
  "SimpleAccountFactoryV07",
  "SwapRouter",
  "SweepAggregator",
  "TestERC1155",
  "TestERC20",
  "TestERC721",
  "TestERC721Consecutive",
  "TestMarketplace",
  "TestPriceFeedPair",
  "TestStablecoin",
  "UniswapV2Factory",
  "UniswapV2Pair",
  "WETH9",
] as const;
export type ContractName = (typeof CONTRACT_NAMES)[number];

export interface ContractArtifact {
  contractName: ContractName;
  abi: Abi;
  /** Creation code, without constructor arguments. */
  bytecode: Hex;
  /**
   * Runtime code, as eth_getCode returns it after deployment (immutables zeroed); null for a
   * contract copied from a package that ships its creation code only.
   */
  deployedBytecode: Hex | null;
}

const ARTIFACTS_URL = new URL("../../contracts/artifacts/", import.meta.url);

export function artifactPath(name: ContractName): string {
  return fileURLToPath(new URL(`${name}.json`, ARTIFACTS_URL));
}

/** The runtime code of a contract whose artifact has it. */
export function runtimeCode(name: ContractName): Hex {
  const code = loadArtifact(name).deployedBytecode;
  if (code === null) throw new Error(`artifact ${name} has no runtime code`);
  return code;
}

const cache = new Map<ContractName, ContractArtifact>();

const HEX_RE = /^0x(?:[0-9a-f]{2})+$/;

/** Reads and checks an artifact once; later calls return the same object. */
export function loadArtifact(name: ContractName): ContractArtifact {
  const cached = cache.get(name);
  if (cached) return cached;
  const path = artifactPath(name);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(
      `cannot read artifact ${path} (run npm run build:contracts): ${(error as Error).message}`,
    );
  }
  const artifact = validate(parsed, name, path);
  cache.set(name, artifact);
  return artifact;
}

function validate(value: unknown, name: ContractName, path: string): ContractArtifact {
  const fail = (what: string): never => {
    throw new Error(`artifact ${path} is malformed: ${what}`);
  };
  if (typeof value !== "object" || value === null) return fail("not an object");
  const record = value as Record<string, unknown>;
  if (record.contractName !== name) return fail(`contractName is ${String(record.contractName)}`);
  if (!Array.isArray(record.abi)) return fail("abi is not an array");
  const { bytecode, deployedBytecode } = record;
  if (typeof bytecode !== "string" || !HEX_RE.test(bytecode)) return fail("bytecode is not hex");
  if (deployedBytecode !== null && (typeof deployedBytecode !== "string" || !HEX_RE.test(deployedBytecode))) {
    return fail("deployedBytecode is not hex");
  }
  return {
    contractName: name,
    abi: record.abi as Abi,
    bytecode: bytecode as Hex,
    deployedBytecode: deployedBytecode as Hex | null,
  };
}
