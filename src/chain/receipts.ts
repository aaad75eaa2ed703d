import { type Hex, numberToHex } from "../core/hex.ts";
import type { ContractCreation } from "../core/types.ts";
import { MalformedAnswerError, NodeRejectedError, NotAvailableYetError } from "./errors.ts";
import { address, array, checkBlockRange, hash, object, optionalAddress, quantity } from "./parse.ts";
import type { ChainLogger, RpcTransport } from "./transport.ts";

/** A block's receipts can run to a megabyte (they carry every log): keep their batches small. */
const RECEIPT_BATCH = 20;

interface Deployment {
  creation: ContractCreation;
  /** Receipts before Byzantium have no status: whether the deployment succeeded must be checked. */
  statusKnown: boolean;
}

/** The deployment a receipt records, if it records a successful or possibly successful one. */
export function parseReceipt(result: unknown, n: number, what: string): Deployment | undefined {
  if (result === null) throw new NotAvailableYetError(`${what} is not available on the node yet`);
  const receipt = object(result, what);
  const block = quantity(receipt.blockNumber, `${what} blockNumber`);
  if (block !== n)
    throw new MalformedAnswerError(`asked for ${what} of block ${n}, got one of block ${block}`);
  const contract = optionalAddress(receipt.contractAddress, `${what} contractAddress`);
  if (!contract) return undefined;
  const status = receipt.status;
  if (status !== undefined && status !== null && quantity(status, `${what} status`) !== 1) return undefined;
  const from = address(receipt.from, `${what} from`);
  return {
    creation: {
      address: contract,
      creator: from,
      txFrom: from,
      txHash: hash(receipt.transactionHash, `${what} transactionHash`),
      blockNumber: n,
      blockHash: hash(receipt.blockHash, `${what} blockHash`),
    },
    statusKnown: status !== undefined && status !== null,
  };
}

export function parseBlockReceipts(result: unknown, n: number): Deployment[] {
  if (result === null)
    throw new NotAvailableYetError(`receipts of block ${n} are not available on the node yet`);
  const deployments: Deployment[] = [];
  const receipts = array(result, `receipts of block ${n}`);
  for (let i = 0; i < receipts.length; i++) {
    const deployment = parseReceipt(receipts[i], n, `receipt ${i} of block ${n}`);
    if (!deployment) continue;
    const first = deployments[0]?.creation.blockHash;
    if (first !== undefined && deployment.creation.blockHash !== first) {
      throw new MalformedAnswerError(
        `receipts of block ${n} are of two blocks, ${first} and ${deployment.creation.blockHash}`,
      );
    }
    deployments.push(deployment);
  }
  return deployments;
}

/**
 * Top-level deployments from receipts: eth_getBlockReceipts where the node has it, else the block's
 * transactions and one eth_getTransactionReceipt per deployment transaction.
 */
export class ReceiptSource {
  /** Unknown until the node first answers or refuses eth_getBlockReceipts. */
  private blockReceipts: boolean | undefined;

  constructor(
    private readonly transport: RpcTransport,
    private readonly getCode: (address: Hex, block: number) => Promise<Hex>,
    private readonly logger?: ChainLogger | undefined,
  ) {}

  async getReceiptCreations(from: number, to: number): Promise<ContractCreation[]> {
    checkBlockRange(from, to);
    const blocks = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const perBlock = await Promise.all(blocks.map((n) => this.block(n)));
    return perBlock.flat();
  }

  private async block(n: number): Promise<ContractCreation[]> {
    let deployments: Deployment[] | undefined;
    if (this.blockReceipts !== false) {
      try {
        deployments = await this.transport.request({
          method: "eth_getBlockReceipts",
          params: [numberToHex(n)],
          maxBatch: RECEIPT_BATCH,
          parse: (result) => parseBlockReceipts(result, n),
        });
        this.blockReceipts = true;
      } catch (error) {
        // Before it ever worked, any refusal (missing method, or an older form that wants a block hash)
        // means this node needs the slower path; after, a refusal is a real failure.
        if (!(error instanceof NodeRejectedError) || this.blockReceipts === true) throw error;
        if (this.blockReceipts === undefined) {
          this.blockReceipts = false;
          this.logger?.info(
            { url: this.transport.displayUrl, reason: error.message },
            "eth_getBlockReceipts unusable; reading receipts one transaction at a time",
          );
        }
      }
    }
    deployments ??= await this.deploymentsFromTransactions(n);
    const confirmed = await Promise.all(
      deployments.map(async (d) => d.statusKnown || (await this.getCode(d.creation.address, n)) !== "0x"),
    );
    return deployments.filter((_, i) => confirmed[i]).map((d) => d.creation);
  }

  private async deploymentsFromTransactions(n: number): Promise<Deployment[]> {
    const hashes = await this.transport.request({
      method: "eth_getBlockByNumber",
      params: [numberToHex(n), true],
      maxBatch: RECEIPT_BATCH,
      parse: (result) => deploymentTransactions(result, n),
    });
    const deployments = await Promise.all(
      hashes.map((txHash) =>
        this.transport.request({
          method: "eth_getTransactionReceipt",
          params: [txHash],
          parse: (result) => parseReceipt(result, n, `receipt of ${txHash}`),
        }),
      ),
    );
    return deployments.filter((d): d is Deployment => d !== undefined);
  }
}

/** Hashes of the block's transactions that deploy a contract (no recipient). */
function deploymentTransactions(result: unknown, n: number): Hex[] {
  if (result === null) throw new NotAvailableYetError(`block ${n} is not available on the node yet`);
  const block = object(result, `block ${n}`);
  const hashes: Hex[] = [];
  const transactions = array(block.transactions, `block ${n} transactions`);
  for (let i = 0; i < transactions.length; i++) {
    const tx = object(transactions[i], `block ${n} transaction ${i}`);
    if (tx.to === null || tx.to === undefined) hashes.push(hash(tx.hash, `block ${n} transaction ${i} hash`));
  }
  return hashes;
}
