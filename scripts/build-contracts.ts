/**
 * Compiles contracts/src/*.sol (with the Solidity sources they import from OpenZeppelin, ERC-4337
 * and Safe packages) with solc-js into contracts/artifacts/<ContractName>.json, and
 * copies beside them the contracts whose real bytecode comes from npm packages (Seaport 1.6 and
 * its conduit controller, the canonical WETH9, Uniswap V2's factory and pair).
 *
 * The output is byte-for-byte reproducible: fixed compiler (the pinned `solc` package), fixed
 * settings, source units named by repository-relative paths, and no metadata hash appended to the
 * bytecode (its IPFS hash would change with any comment or path difference); the packages are
 * pinned to exact versions.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** What the artifacts hold; mirrored by the loader in src/devchain/artifacts.ts. */
export interface BuiltArtifact {
  contractName: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  /** null where the package ships creation code only. */
  deployedBytecode: `0x${string}` | null;
}

interface SolcOutputContract {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

interface SolcOutput {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<string, Record<string, SolcOutputContract>>;
}

interface SolcModule {
  version(): string;
  compile(
    input: string,
    callbacks: { import: (path: string) => { contents: string } | { error: string } },
  ): string;
}

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
export const CONTRACTS_SRC_DIR = join(REPO_ROOT, "contracts", "src");
export const ARTIFACTS_DIR = join(REPO_ROOT, "contracts", "artifacts");

/** solc 0.8.28's default target; anvil's default hardfork is later and runs it unchanged. */
export const EVM_VERSION = "cancun";

const require = createRequire(import.meta.url);

function toUnitName(absolutePath: string): string {
  return relative(REPO_ROOT, absolutePath).split(sep).join("/");
}

/** Packages whose Solidity sources contracts/src imports, resolved from node_modules. */
const PACKAGE_SOURCES = ["@openzeppelin/", "@account-abstraction/", "@safe-global/"];

function resolveImport(path: string): { contents: string } | { error: string } {
  try {
    if (PACKAGE_SOURCES.some((scope) => path.startsWith(scope))) {
      return { contents: readFileSync(require.resolve(path), "utf8") };
    }
    // Relative imports arrive already resolved against the importing unit's (repo-relative) name.
    return { contents: readFileSync(join(REPO_ROOT, path), "utf8") };
  } catch (error) {
    return { error: `cannot read ${path}: ${(error as Error).message}` };
  }
}

/** Compiles every source and returns the deployable contracts they define, sorted by name. */
export function compileContracts(): BuiltArtifact[] {
  const solc = require("solc") as SolcModule;
  const files = readdirSync(CONTRACTS_SRC_DIR)
    .filter((f) => f.endsWith(".sol"))
    .sort();
  if (files.length === 0) throw new Error(`no .sol files in ${CONTRACTS_SRC_DIR}`);

  const sources: Record<string, { content: string }> = {};
  for (const file of files) {
    const path = join(CONTRACTS_SRC_DIR, file);
    sources[toUnitName(path)] = { content: readFileSync(path, "utf8") };
  }

  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: EVM_VERSION,
      metadata: { bytecodeHash: "none" },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };

  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: resolveImport })) as SolcOutput;
  const problems = output.errors ?? [];
  const errors = problems.filter((p) => p.severity === "error");
  if (errors.length > 0) {
    throw new Error(`solc ${solc.version()} failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  for (const warning of problems) process.stderr.write(`${warning.formattedMessage}\n`);

  const artifacts: BuiltArtifact[] = [];
  for (const unitName of Object.keys(sources)) {
    const contracts = output.contracts?.[unitName] ?? {};
    for (const [contractName, contract] of Object.entries(contracts)) {
      // Interfaces and abstract contracts have no code to deploy.
      if (contract.evm.bytecode.object.length === 0) continue;
      if (artifacts.some((a) => a.contractName === contractName)) {
        throw new Error(`two contracts are named ${contractName}; artifact names must be unique`);
      }
      artifacts.push({
        contractName,
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
      });
    }
  }
  return artifacts.sort((a, b) => (a.contractName < b.contractName ? -1 : 1));
}

/** A contract copied from an npm package: where its artifact is, and how to read it. */
interface PackagedContract {
  contractName: string;
  /** Resolved with require, from this repository. */
  module: string;
  read: (module: unknown) => { abi: unknown; bytecode: unknown; deployedBytecode?: unknown };
}

interface TypechainFactory {
  abi: unknown;
  bytecode: unknown;
}
interface TruffleArtifact {
  abi: unknown;
  bytecode: unknown;
  deployedBytecode: unknown;
}
interface WaffleArtifact {
  abi: unknown;
  evm: { bytecode: { object: unknown }; deployedBytecode: { object: unknown } };
}

const SEAPORT_FACTORIES = "@opensea/seaport-js/lib/typechain-types/factories/seaport/contracts";

const waffle = (module: unknown) => {
  const artifact = module as WaffleArtifact;
  return {
    abi: artifact.abi,
    bytecode: artifact.evm.bytecode.object,
    deployedBytecode: artifact.evm.deployedBytecode.object,
  };
};

/** The contracts taken from npm packages as they were built and deployed by their authors. */
export const PACKAGED_CONTRACTS: readonly PackagedContract[] = [
  {
    // Seaport 1.6; its constructor takes the conduit controller's address. The typechain factory
    // holds the creation code only.
    contractName: "Seaport",
    module: `${SEAPORT_FACTORIES}/Seaport__factory.js`,
    read: (module) => (module as { Seaport__factory: TypechainFactory }).Seaport__factory,
  },
  {
    contractName: "LocalConduitController",
    module: `${SEAPORT_FACTORIES}/conduit/ConduitController.sol/LocalConduitController__factory.js`,
    read: (module) =>
      (module as { LocalConduitController__factory: TypechainFactory }).LocalConduitController__factory,
  },
  {
    // The WETH9 deployed on Ethereum (solc 0.4); named apart from contracts/src/WETH9.sol.
    contractName: "CanonicalWETH9",
    module: "canonical-weth/build/contracts/WETH9.json",
    read: (module) => module as TruffleArtifact,
  },
  { contractName: "UniswapV2Factory", module: "@uniswap/v2-core/build/UniswapV2Factory.json", read: waffle },
  { contractName: "UniswapV2Pair", module: "@uniswap/v2-core/build/UniswapV2Pair.json", read: waffle },
];

function hexOf(value: unknown, what: string): `0x${string}` {
  if (typeof value !== "string") throw new Error(`${what} is not a string`);
  const hex = (value.startsWith("0x") ? value : `0x${value}`).toLowerCase();
  if (!/^0x(?:[0-9a-f]{2})+$/.test(hex)) throw new Error(`${what} is not hex bytecode`);
  return hex as `0x${string}`;
}

/** Reads the packaged contracts' abi and bytecode, sorted by name. */
export function packagedArtifacts(): BuiltArtifact[] {
  return PACKAGED_CONTRACTS.map(({ contractName, module, read }) => {
    const found = read(require(module));
    if (!Array.isArray(found.abi)) throw new Error(`${module}: no abi`);
    return {
      contractName,
      abi: found.abi,
      bytecode: hexOf(found.bytecode, `${module} bytecode`),
      deployedBytecode:
        found.deployedBytecode === undefined
          ? null
          : hexOf(found.deployedBytecode, `${module} deployed bytecode`),
    };
  }).sort((a, b) => (a.contractName < b.contractName ? -1 : 1));
}

/** Every artifact: the compiled ones and the packaged ones, sorted by name. */
export function buildArtifacts(): BuiltArtifact[] {
  const all = [...compileContracts(), ...packagedArtifacts()];
  const names = new Set(all.map((a) => a.contractName));
  if (names.size !== all.length) throw new Error("a packaged contract has the name of a compiled one");
  return all.sort((a, b) => (a.contractName < b.contractName ? -1 : 1));
}

export function serializeArtifact(artifact: BuiltArtifact): string {
  return `${JSON.stringify(artifact, null, 2)}\n`;
}

/** Writes the artifacts and removes any left over from contracts that no longer exist. */
export function writeArtifacts(artifacts: readonly BuiltArtifact[], dir = ARTIFACTS_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  const written = new Set<string>();
  for (const artifact of artifacts) {
    const file = `${artifact.contractName}.json`;
    writeFileSync(join(dir, file), serializeArtifact(artifact));
    written.add(file);
  }
  for (const file of readdirSync(dir)) {
    if (file.endsWith(".json") && !written.has(file)) rmSync(join(dir, file));
  }
  return [...written].map((f) => join(dir, f));
}

function main(): void {
  const started = performance.now();
  const artifacts = buildArtifacts();
  const files = writeArtifacts(artifacts);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  for (const file of files) process.stdout.write(`wrote ${relative(REPO_ROOT, file)}\n`);
  process.stdout.write(`${files.length} artifacts in ${seconds}s\n`);
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  main();
}
