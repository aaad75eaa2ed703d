import {
  type Abi,
  type ContractFunctionName,
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeErrorResult,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  http,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
  type WalletClient,
} from "viem";
import { mnemonicToAccount } from "viem/accounts";
import type { Address, Hex } from "../core/hex.ts";
import { type ContractName, loadArtifact } from "./artifacts.ts";

/** The mnemonic anvil derives its funded, unlocked accounts from unless told otherwise. */
export const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";
/** How many of those accounts anvil funds and unlocks by default. */
export const ANVIL_DEV_ACCOUNT_COUNT = 10;

const derived: Address[] = [];

/** The account at m/44'/60'/0'/0/<index> of anvil's mnemonic, lower-case. */
export function devAddress(index: number): Address {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`bad account index ${index}`);
  let address = derived[index];
  if (address === undefined) {
    address = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index }).address.toLowerCase() as Address;
    derived[index] = address;
  }
  return address;
}

export function devAddresses(count: number, first = 0): Address[] {
  return Array.from({ length: count }, (_, i) => devAddress(first + i));
}

/**
 * Where `count` successive CREATEs by `creator` land, from `firstNonce` on, lower-case: a
 * factory's children are nowhere in its receipts, only at these addresses (a contract's nonce
 * starts at 1).
 */
export function createdAddresses(creator: Address, firstNonce: number, count: number): Address[] {
  return Array.from(
    { length: count },
    (_, i) => getContractAddress({ from: creator, nonce: BigInt(firstNonce + i) }).toLowerCase() as Address,
  );
}

export interface DevChain {
  rpcUrl: string;
  publicClient: PublicClient;
  walletClient: WalletClient;
  testClient: TestClient<"anvil">;
}

/** Clients for an anvil at `rpcUrl`. No chain is pinned: anvil may run under any chain id. */
export function connectDevChain(rpcUrl: string): DevChain {
  const transport = http(rpcUrl, { retryCount: 0, timeout: 60_000 });
  return {
    rpcUrl,
    publicClient: createPublicClient({ transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ transport, pollingInterval: 50 }),
    testClient: createTestClient({ mode: "anvil", transport, pollingInterval: 50 }),
  };
}

/**
 * Gives `addresses` a balance and lets anvil sign for them, so accounts beyond the ten it
 * unlocks (or any address at all) can send transactions.
 */
export async function fundAndUnlock(
  chain: DevChain,
  addresses: readonly Address[],
  balance: bigint,
): Promise<void> {
  for (const address of addresses) {
    await chain.testClient.setBalance({ address, value: balance });
    await chain.testClient.impersonateAccount({ address });
  }
}

export interface WaitOptions {
  timeoutMs?: number;
}

/** Polls for a receipt; on an automining anvil it is there at once. */
export async function waitForReceipt(
  chain: DevChain,
  hash: Hex,
  options: WaitOptions = {},
): Promise<TransactionReceipt> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
    const receipt = await chain.publicClient.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if ((error as Error).name === "TransactionReceiptNotFoundError") return undefined;
      throw error;
    });
    if (receipt) return receipt;
    if (Date.now() > deadline)
      throw new Error(`no receipt for ${hash} after ${options.timeoutMs ?? 30_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

export interface TxOptions {
  /** Sender; anvil must be able to sign for it. Defaults to dev account 0. */
  from?: Address;
  value?: bigint;
  gas?: bigint;
}

export interface Deployment {
  contractName: ContractName;
  address: Address;
  txHash: Hex;
  blockNumber: number;
}

/** Deploys a compiled contract and waits for it to be mined. */
export async function deployArtifact(
  chain: DevChain,
  name: ContractName,
  args: readonly unknown[] = [],
  options: TxOptions = {},
): Promise<Deployment> {
  const artifact = loadArtifact(name);
  const data = encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args });
  const receipt = await sendAndConfirm(
    chain,
    { to: null, data, abi: artifact.abi, ...options },
    `deploy ${name}`,
  );
  if (!receipt.contractAddress)
    throw new Error(`deploy ${name}: receipt ${receipt.transactionHash} has no address`);
  return {
    contractName: name,
    address: receipt.contractAddress.toLowerCase() as Address,
    txHash: receipt.transactionHash,
    blockNumber: Number(receipt.blockNumber),
  };
}

export interface ContractCall<TAbi extends Abi = Abi> extends TxOptions {
  address: Address;
  abi: TAbi;
  functionName: ContractFunctionName<TAbi>;
  args?: readonly unknown[];
}

/** Calls a contract function in a transaction and waits for it; throws (with the revert reason) if it failed. */
export async function sendContractTx<TAbi extends Abi>(
  chain: DevChain,
  call: ContractCall<TAbi>,
): Promise<TransactionReceipt> {
  const data = encodeFunctionData({
    abi: call.abi as Abi,
    functionName: call.functionName as string,
    args: call.args ?? [],
  });
  const { address, abi, functionName, args: _args, ...options } = call;
  return sendAndConfirm(
    chain,
    { to: address, data, abi, ...options },
    `${String(functionName)} on ${address}`,
  );
}

interface RawTx extends TxOptions {
  to: Address | null;
  data: Hex;
  /** Used to name custom errors in a revert. */
  abi: Abi;
}

/**
 * A fifth more gas than estimated. An estimate is the least gas the call needed on the state it was
 * estimated on; a call that forwards gas to another (a refund, a marketplace's payout) may need more
 * once each forwarding keeps back its 64th, and a transaction that runs out reverts without a reason.
 */
const GAS_HEADROOM = (estimate: bigint) => (estimate * 6n) / 5n;

async function sendAndConfirm(chain: DevChain, tx: RawTx, what: string): Promise<TransactionReceipt> {
  const from = tx.from ?? devAddress(0);
  // A call that cannot be estimated (it reverts) is sent as before, for the node to estimate, and
  // its receipt says how it failed.
  const gas =
    tx.gas ??
    (await chain.publicClient
      .estimateGas({
        account: from,
        ...(tx.to === null ? {} : { to: tx.to }),
        data: tx.data,
        value: tx.value,
      })
      .then(GAS_HEADROOM, () => undefined));
  const hash = await chain.walletClient.sendTransaction({
    account: from,
    chain: null,
    to: tx.to,
    data: tx.data,
    value: tx.value,
    gas,
  });
  const receipt = await waitForReceipt(chain, hash);
  if (receipt.status !== "success") {
    const reason = await revertReason(chain, tx, from, receipt.blockNumber);
    const outOfGas =
      reason === "" && gas !== undefined && receipt.gasUsed >= gas ? ` (out of gas: all ${gas} used)` : "";
    throw new Error(`${what} reverted in ${hash}${reason}${outOfGas}`);
  }
  return receipt;
}

/** Replays a failed transaction as a call on its block's parent state to recover the revert data. */
async function revertReason(chain: DevChain, tx: RawTx, from: Address, blockNumber: bigint): Promise<string> {
  try {
    await chain.publicClient.call({
      account: from,
      to: tx.to ?? undefined,
      data: tx.data,
      value: tx.value,
      blockNumber: blockNumber - 1n,
    });
    return "";
  } catch (error) {
    const data = findRevertData(error);
    if (data && data.length > 2) {
      try {
        const decoded = decodeErrorResult({ data, abi: tx.abi });
        return `: ${decoded.errorName}(${decoded.args?.map(String).join(", ") ?? ""})`;
      } catch {
        return `: revert data ${data}`;
      }
    }
    return `: ${(error as Error).message.split("\n")[0]}`;
  }
}

function findRevertData(error: unknown): Hex | undefined {
  for (let e: unknown = error; e && typeof e === "object"; e = (e as { cause?: unknown }).cause) {
    const data = (e as { data?: unknown }).data;
    if (typeof data === "string" && data.startsWith("0x")) return data as Hex;
  }
  return undefined;
}
