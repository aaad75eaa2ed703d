import { createRequire } from "node:module";
import { type Abi, encodeFunctionData, getContractAddress } from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ContractCreation } from "../../src/core/types.ts";

/**
 * A small chain built on anvil for the chain-client tests: an emitter of logs, a factory that creates
 * with CREATE2 and CREATE (plus creations that must not count: inside a reverted sub-call, a failed
 * constructor, a whole reverted transaction, a failed deployment). Every expectation is derived
 * independently of src/chain: raw JSON-RPC over fetch and viem's address derivation.
 */

const SOURCE = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Emitter {
  event Ping(uint256 indexed i, address indexed who, uint256 v);
  event Pong(uint256 v);
  function emitMany(uint256 n) external { for (uint256 i; i < n; i++) emit Ping(i, msg.sender, i * 2); }
  function pong(uint256 v) external { emit Pong(v); }
  function value() external pure returns (uint256) { return 42; }
  function fail() external pure { revert("no"); }
  function failWords() external pure { revert("the method eth_call does not exist/is not available; rate limit exceeded"); }
}

contract Child { uint256 public x = 7; }

contract Bad { constructor() { revert("bad"); } }

contract Factory {
  function make(bytes32 salt) external returns (address a, address b) {
    a = address(new Child{salt: salt}());
    b = address(new Child());
    try this.makeAndRevert() {} catch {}
    try new Bad() {} catch {}
  }
  function makeAndRevert() external { new Child(); revert("undo"); }
  function makeThenRevert() external { new Child(); revert("all undone"); }
}
`;

interface Compiled {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

let compiled: Record<string, Compiled> | undefined;

export function compileContracts(): Record<string, Compiled> {
  if (compiled) return compiled;
  const solc = createRequire(import.meta.url)("solc") as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "fixture.sol": { content: SOURCE } },
        settings: {
          outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<
      string,
      Record<
        string,
        { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
      >
    >;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"));
  const result: Record<string, Compiled> = {};
  for (const [name, contract] of Object.entries(output.contracts["fixture.sol"] ?? {})) {
    result[name] = {
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    };
  }
  compiled = result;
  return result;
}

function contract(name: string): Compiled {
  const found = compileContracts()[name];
  if (!found) throw new Error(`no compiled contract ${name}`);
  return found;
}

let rpcId = 1;

/** Plain JSON-RPC, independent of the code under test. */
export async function rawRpc<T = unknown>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: rpcId++, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

interface RawReceipt {
  status: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  contractAddress: Address | null;
  transactionHash: Hex;
  transactionIndex: Hex;
}

export class FixtureChain {
  private constructor(
    readonly url: string,
    readonly sender: Address,
  ) {}

  static async create(url: string): Promise<FixtureChain> {
    const accounts = await rawRpc<Address[]>(url, "eth_accounts", []);
    const sender = accounts[0];
    if (!sender) throw new Error("anvil has no unlocked account");
    return new FixtureChain(url, sender.toLowerCase() as Address);
  }

  async send(tx: { to?: Address; data: Hex; gas?: number }): Promise<RawReceipt> {
    const hash = await rawRpc<Hex>(this.url, "eth_sendTransaction", [
      {
        from: this.sender,
        ...(tx.to ? { to: tx.to } : {}),
        data: tx.data,
        ...(tx.gas ? { gas: `0x${tx.gas.toString(16)}` } : {}),
      },
    ]);
    // anvil may answer before its automined block is sealed: poll, bounded.
    const deadline = Date.now() + 20_000;
    for (let poll = 0; poll < 2000 && Date.now() < deadline; poll++) {
      const receipt = await rawRpc<RawReceipt | null>(this.url, "eth_getTransactionReceipt", [hash]);
      if (receipt) return receipt;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no receipt for ${hash} within 20 s`);
  }

  async deploy(name: string, gas?: number): Promise<{ address: Address; receipt: RawReceipt }> {
    const receipt = await this.send({ data: contract(name).bytecode, ...(gas ? { gas } : {}) });
    if (receipt.status !== "0x1" || !receipt.contractAddress) throw new Error(`deploying ${name} failed`);
    return { address: receipt.contractAddress.toLowerCase() as Address, receipt };
  }

  async invoke(
    to: Address,
    name: string,
    fn: string,
    args: unknown[] = [],
    gas?: number,
  ): Promise<RawReceipt> {
    const data = encodeFunctionData({ abi: contract(name).abi, functionName: fn, args });
    return this.send({ to, data, ...(gas ? { gas } : {}) });
  }

  blockNumber(): Promise<number> {
    return rawRpc<Hex>(this.url, "eth_blockNumber", []).then((n) => Number(n));
  }
}

export interface CreationScenario {
  emitter: Address;
  factory: Address;
  /** Every creation that succeeded, as traces must report it, in chain order. */
  traced: ContractCreation[];
  /** Top-level deployments that succeeded, as receipts must report them. */
  deployments: ContractCreation[];
  /** Addresses created and then undone, or never created: must appear nowhere. */
  undone: Address[];
  /** A transaction sent by `sender`: its hash, block and position. */
  someTx: { hash: Hex; blockHash: Hex; index: number };
  firstBlock: number;
  lastBlock: number;
}

/** Deploys the contracts and runs the creation scenario; returns what must be found. */
export async function buildCreations(chain: FixtureChain): Promise<CreationScenario> {
  const firstBlock = (await chain.blockNumber()) + 1;
  const emitter = await chain.deploy("Emitter");
  const factory = await chain.deploy("Factory");
  const salt = `0x${"11".repeat(32)}` as Hex;
  const nonceBefore = Number(
    await rawRpc<Hex>(chain.url, "eth_getTransactionCount", [factory.address, "latest"]),
  );
  const made = await chain.invoke(factory.address, "Factory", "make", [salt]);
  if (made.status !== "0x1") throw new Error("Factory.make failed");
  const child = contract("Child");
  const create2 = getContractAddress({
    opcode: "CREATE2",
    from: factory.address,
    salt,
    bytecode: child.bytecode,
  }).toLowerCase() as Address;
  // CREATE2 also takes a nonce (EIP-161), so the CREATE after it uses the next one.
  const create = getContractAddress({
    opcode: "CREATE",
    from: factory.address,
    nonce: BigInt(nonceBefore + 1),
  }).toLowerCase() as Address;
  // The CREATE inside makeAndRevert takes the nonce after that; it is reverted with its caller.
  const reverted = getContractAddress({
    opcode: "CREATE",
    from: factory.address,
    nonce: BigInt(nonceBefore + 2),
  }).toLowerCase() as Address;

  const undoneTx = await chain.invoke(factory.address, "Factory", "makeThenRevert", [], 1_000_000);
  if (undoneTx.status !== "0x0") throw new Error("makeThenRevert should have failed");
  const failedDeploy = await chain.send({ data: contract("Bad").bytecode, gas: 1_000_000 });
  if (failedDeploy.status !== "0x0") throw new Error("deploying Bad should have failed");
  const lastBlock = await chain.blockNumber();

  const at = (receipt: RawReceipt) => Number(receipt.blockNumber);
  const deployments: ContractCreation[] = [emitter, factory].map(({ address, receipt }) => ({
    address,
    creator: chain.sender,
    txFrom: chain.sender,
    txHash: receipt.transactionHash,
    blockNumber: at(receipt),
    blockHash: receipt.blockHash,
  }));
  const byFactory = (address: Address): ContractCreation => ({
    address,
    creator: factory.address,
    txFrom: chain.sender,
    txHash: made.transactionHash,
    blockNumber: at(made),
    blockHash: made.blockHash,
  });
  const undone = [reverted];
  if (failedDeploy.contractAddress) undone.push(failedDeploy.contractAddress.toLowerCase() as Address);
  return {
    emitter: emitter.address,
    factory: factory.address,
    traced: [...deployments, byFactory(create2), byFactory(create)],
    deployments,
    undone,
    someTx: {
      hash: made.transactionHash,
      blockHash: made.blockHash,
      index: Number(made.transactionIndex),
    },
    firstBlock,
    lastBlock,
  };
}

/** Emits `perTx` Ping logs in each of `txs` transactions (one block each on an automining anvil). */
export async function emitPings(
  chain: FixtureChain,
  emitter: Address,
  txs: number,
  perTx: number,
): Promise<void> {
  for (let i = 0; i < txs; i++) {
    const receipt = await chain.invoke(emitter, "Emitter", "emitMany", [BigInt(perTx)], 16_000_000);
    if (receipt.status !== "0x1") throw new Error(`emitMany(${perTx}) failed`);
  }
}

export function fixtureAbi(name: string): Abi {
  return contract(name).abi;
}

export function fixtureRuntimeCode(name: string): Hex {
  return contract(name).deployedBytecode;
}
