import { getContractAddress } from "viem";
import type { Address, Hex } from "../core/hex.ts";
import { hexToNumber, numberToHex } from "../core/hex.ts";
import { JsonRpc, type RpcCall } from "./rpc.ts";

/** A transaction for anvil to sign (a dev account) or to accept unsigned (an impersonated one). */
export interface TxRequest {
  from: Address;
  /** null deploys `data` as creation code. */
  to: Address | null;
  data: Hex;
  value?: bigint;
  /**
   * Always explicit: estimating against the latest block would be wrong for a transaction that
   * depends on one queued before it in the same block.
   */
  gas: bigint;
  /** Names the transaction in errors. */
  label: string;
}

export interface QueuedTx {
  hash: Hex;
  from: Address;
  nonce: number;
  label: string;
  gas: bigint;
}

export interface RpcLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  logIndex: Hex;
  transactionHash: Hex;
}

export interface RpcReceipt {
  transactionHash: Hex;
  transactionIndex: Hex;
  blockNumber: Hex;
  status: Hex;
  from: Address;
  to: Address | null;
  contractAddress: Address | null;
  gasUsed: Hex;
  logs: RpcLog[];
}

export interface MinedBlock {
  number: number;
  timestamp: number;
  receipts: RpcReceipt[];
}

interface RpcBlock {
  number: Hex;
  timestamp: Hex;
  gasLimit: Hex;
  transactions: Hex[];
}

/**
 * Queues transactions on an anvil whose automine is off and mines them as one block at a chosen
 * time. Nonces are tracked here so that any number of transactions per sender can wait in the
 * pool, and every queued transaction is checked to have been included and to have succeeded.
 */
export class BlockBuilder {
  readonly rpc: JsonRpc;
  private readonly nonces = new Map<Address, number>();
  private queue: QueuedTx[] = [];
  private queuedGasTotal = 0n;

  constructor(rpcUrl: string) {
    this.rpc = new JsonRpc(rpcUrl);
  }

  get queued(): readonly QueuedTx[] {
    return this.queue;
  }

  /** Sum of the gas limits of the queued transactions. */
  get queuedGas(): bigint {
    return this.queuedGasTotal;
  }

  /** The nonce the next transaction from `address` will use. */
  async nonceOf(address: Address): Promise<number> {
    const known = this.nonces.get(address);
    if (known !== undefined) return known;
    const count = hexToNumber(await this.rpc.call<Hex>("eth_getTransactionCount", [address, "pending"]));
    this.nonces.set(address, count);
    return count;
  }

  /** Where a deployment sent now by `from` will land. */
  async nextContractAddress(from: Address): Promise<Address> {
    const nonce = await this.nonceOf(from);
    return getContractAddress({ from, nonce: BigInt(nonce) }).toLowerCase() as Address;
  }

  async add(tx: TxRequest): Promise<QueuedTx> {
    const [queued] = await this.addMany([tx]);
    return queued as QueuedTx;
  }

  /** Sends the transactions in one JSON-RPC batch; their order within a sender is kept by the nonces. */
  async addMany(txs: readonly TxRequest[]): Promise<QueuedTx[]> {
    const calls: RpcCall[] = [];
    const pending: Omit<QueuedTx, "hash">[] = [];
    for (const tx of txs) {
      const nonce = await this.nonceOf(tx.from);
      this.nonces.set(tx.from, nonce + 1);
      pending.push({ from: tx.from, nonce, label: tx.label, gas: tx.gas });
      const request: Record<string, string> = {
        from: tx.from,
        data: tx.data,
        gas: numberToHex(tx.gas),
        nonce: numberToHex(nonce),
      };
      if (tx.to !== null) request.to = tx.to;
      if (tx.value !== undefined && tx.value > 0n) request.value = numberToHex(tx.value);
      calls.push({ method: "eth_sendTransaction", params: [request] });
    }
    let hashes: Hex[];
    try {
      hashes = await this.rpc.batch<Hex>(calls);
    } catch (error) {
      // Some of the batch may have been accepted; the nonces are no longer known.
      this.nonces.clear();
      throw error;
    }
    const queued = pending.map((p, i) => ({ ...p, hash: hashes[i] as Hex }));
    this.queue.push(...queued);
    for (const tx of txs) this.queuedGasTotal += tx.gas;
    return queued;
  }

  /**
   * Mines the queued transactions into one block, at `timestamp` (Unix seconds) if given, and
   * checks that every one of them is in it and succeeded.
   *
   * With `receipts: false` only inclusion is checked and the caller must confirm success some
   * other way: anvil builds each receipt of a block in time proportional to the block's size, so
   * for blocks of hundreds of transactions fetching them costs more than mining.
   */
  async mine(timestamp?: number, options: { receipts?: boolean } = {}): Promise<MinedBlock> {
    await this.rpc.call("evm_mine", timestamp === undefined ? [] : [timestamp]);
    const block = await this.rpc.call<RpcBlock>("eth_getBlockByNumber", ["latest", false]);
    const receipts =
      options.receipts === false
        ? []
        : await this.rpc.call<RpcReceipt[]>("eth_getBlockReceipts", [block.number]);
    const included = new Set(block.transactions);
    const missing = this.queue.filter((q) => !included.has(q.hash));
    if (missing.length > 0) {
      this.reset();
      throw new Error(
        `block ${hexToNumber(block.number)} (gas limit ${BigInt(block.gasLimit)}) left ${missing.length} queued ` +
          `transactions out, first ${missing[0]?.label}; is anvil running with a large enough --gas-limit?`,
      );
    }
    this.checkReceipts(receipts);
    this.reset();
    return { number: hexToNumber(block.number), timestamp: hexToNumber(block.timestamp), receipts };
  }

  /** For a node that mines by itself: waits until every queued transaction has a receipt. */
  async settle(timeoutMs = 60_000): Promise<RpcReceipt[]> {
    const deadline = Date.now() + timeoutMs;
    const hashes = this.queue.map((q) => q.hash);
    const receipts = new Map<Hex, RpcReceipt>();
    for (let delay = 10; receipts.size < hashes.length; delay = Math.min(delay * 2, 500)) {
      const waiting = hashes.filter((h) => !receipts.has(h));
      const found = await this.rpc.batch<RpcReceipt | null>(
        waiting.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] })),
      );
      for (const receipt of found) if (receipt) receipts.set(receipt.transactionHash, receipt);
      if (receipts.size === hashes.length) break;
      if (Date.now() > deadline) {
        this.reset();
        throw new Error(`${waiting.length} transactions still unmined after ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    const ordered = hashes.map((h) => receipts.get(h) as RpcReceipt);
    this.checkReceipts(ordered);
    this.reset();
    return ordered;
  }

  private checkReceipts(receipts: readonly RpcReceipt[]): void {
    const byHash = new Map(this.queue.map((q) => [q.hash, q]));
    for (const receipt of receipts) {
      if (receipt.status === "0x1") continue;
      const tx = byHash.get(receipt.transactionHash);
      if (!tx) continue;
      this.reset();
      throw new Error(
        `${tx.label} from ${tx.from} failed in block ${hexToNumber(receipt.blockNumber)} ` +
          `(${receipt.transactionHash}, gas used ${BigInt(receipt.gasUsed)} of ${tx.gas})`,
      );
    }
  }

  private reset(): void {
    this.queue = [];
    this.queuedGasTotal = 0n;
  }
}
