import { UserFacingError } from "../core/errors.ts";
import { type Hex, numberToHex } from "../core/hex.ts";
import type { BlockTraces, ContractCreation } from "../core/types.ts";
import { MalformedAnswerError, NodeRejectedError, NotAvailableYetError } from "./errors.ts";
import { array, checkBlockRange, hash, object, quantity } from "./parse.ts";
import type { TraceApi } from "./rpc-types.ts";
import { parseGethBlockTraceData, parseParityBlockTraceData } from "./traces.ts";
import type { ChainLogger, RpcTransport } from "./transport.ts";

/** Block traces run to megabytes on mainnet; keep their batches small so one answer stays manageable. */
const TRACE_BATCH = 10;

export interface TraceSourceOptions {
  head(): Promise<number>;
  logger?: ChainLogger | undefined;
}

/** Finds which trace API the node offers (once) and reads contract creations from it. */
export class TraceSource {
  private detected: Promise<TraceApi> | undefined;

  constructor(
    private readonly transport: RpcTransport,
    private readonly options: TraceSourceOptions,
  ) {}

  traceApi(probeBlock?: number): Promise<TraceApi> {
    if (!this.detected) {
      const detecting = this.detect(probeBlock);
      this.detected = detecting;
      // A probe that could not reach a verdict (the node was down) is not remembered.
      detecting.catch(() => {
        if (this.detected === detecting) this.detected = undefined;
      });
    }
    return this.detected;
  }

  async getTracedCreations(from: number, to: number): Promise<ContractCreation[]> {
    return (await this.getTraces(from, to)).creations;
  }

  /** Creations and native movements of blocks [from, to], in block and execution order. */
  async getTraces(from: number, to: number): Promise<BlockTraces> {
    checkBlockRange(from, to);
    const api = await this.traceApi();
    if (api === "none") {
      throw new UserFacingError(
        `${this.transport.displayUrl} offers neither trace_block nor debug_traceBlockByHash (callTracer); ` +
          "enable the trace or debug API, or find contracts from receipts instead",
      );
    }
    const blocks = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const perBlock = await Promise.all(
      blocks.map((n) => (api === "parity" ? this.parityBlock(n) : this.gethBlock(n))),
    );
    return {
      creations: perBlock.flatMap((b) => b.creations),
      native: perBlock.flatMap((b) => b.native),
      calls: perBlock.flatMap((b) => b.calls),
      tracedBlocks: perBlock.flatMap((b) => b.tracedBlocks),
    };
  }

  private async detect(probeBlock: number | undefined): Promise<TraceApi> {
    const number = probeBlock ?? (await this.options.head());
    const block = numberToHex(number);
    let api: TraceApi = "none";
    if (await this.offers("trace_block", [block])) api = "parity";
    else if (
      await this.offers("debug_traceBlockByHash", [await this.hashOf(number), { tracer: "callTracer" }])
    )
      // Probed with the method the blocks are then traced with.
      api = "geth";
    this.options.logger?.info(
      { url: this.transport.displayUrl, traceApi: api, probeBlock: Number(block) },
      "trace API detected",
    );
    return api;
  }

  private async hashOf(n: number): Promise<Hex> {
    const block = await this.transport.request({
      method: "eth_getBlockByNumber",
      params: [numberToHex(n), false],
      parse: (result) => blockTransactionHashes(result, n),
    });
    return block.hash;
  }

  private async offers(method: string, params: readonly unknown[]): Promise<boolean> {
    try {
      await this.transport.request({ method, params, maxBatch: 1, parse: (result) => result });
      return true;
    } catch (error) {
      // Any refusal of the probe (method missing, namespace disabled, not on this plan) means it is not usable.
      if (error instanceof NodeRejectedError) return false;
      throw error;
    }
  }

  private parityBlock(n: number): Promise<BlockTraces> {
    return this.transport.request({
      method: "trace_block",
      params: [numberToHex(n)],
      maxBatch: TRACE_BATCH,
      parse: (result) => parseParityBlockTraceData(result, n),
    });
  }

  private async gethBlock(n: number): Promise<BlockTraces> {
    // Traced by hash, so the creations are known to be of the block whose hash they carry: tracing by
    // number could trace another fork's block than the header the batch holds. The block's transaction
    // list, read with its hash, names the transactions for nodes whose traces do not.
    const block = await this.transport.request({
      method: "eth_getBlockByNumber",
      params: [numberToHex(n), false],
      parse: (result) => blockTransactionHashes(result, n),
    });
    return this.transport.request({
      method: "debug_traceBlockByHash",
      params: [block.hash, { tracer: "callTracer" }],
      maxBatch: TRACE_BATCH,
      parse: (result) => parseGethBlockTraceData(result, n, block.hash, block.transactions),
    });
  }
}

function blockTransactionHashes(result: unknown, n: number): { hash: Hex; transactions: Hex[] } {
  if (result === null) throw new NotAvailableYetError(`block ${n} is not available on the node yet`);
  const block = object(result, `block ${n}`);
  if (quantity(block.number, `block ${n} number`) !== n) {
    throw new MalformedAnswerError(`asked for block ${n}, the node answered block ${String(block.number)}`);
  }
  return {
    hash: hash(block.hash, `block ${n} hash`),
    transactions: array(block.transactions, `block ${n} transactions`).map((tx, i) =>
      hash(tx, `block ${n} transaction ${i}`),
    ),
  };
}
