/**
 * Compiles contracts/src/*.sol with solc-js into contracts/artifacts/<ContractName>.json.
 *
 * The output is byte-for-byte reproducible: fixed compiler (the pinned `solc` package), fixed
 * settings, source units named by repository-relative paths, and no metadata hash appended to the
 * bytecode (its IPFS hash would change with any comment or path difference).
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
  deployedBytecode: `0x${string}`;
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

function resolveImport(path: string): { contents: string } | { error: string } {
  try {
    if (path.startsWith("@openzeppelin/")) {
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
  const artifacts = compileContracts();
  const files = writeArtifacts(artifacts);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  for (const file of files) process.stdout.write(`wrote ${relative(REPO_ROOT, file)}\n`);
  process.stdout.write(`${files.length} artifacts in ${seconds}s\n`);
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  main();
}
