import { UserFacingError } from "../core/errors.ts";
import { type Address, type Hex, numberToHex } from "../core/hex.ts";
import type { TransactionCall } from "../core/types.ts";
import { MalformedAnswerError } from "./errors.ts";
import { getHeaders } from "./headers.ts";
import { LogFetcher } from "./logs.ts";
import { address, hash, hexData, object, quantity, uint256 } from "./parse.ts";
import { ReceiptSource } from "./receipts.ts";
import type { ChainClient, RpcOptions } from "./rpc-types.ts";
import { TraceSource } from "./trace-api.ts";
import { type ChainLogger, RpcTransport } from "./transport.ts";

export type { ChainLogger } from "./transport.ts";

export interface ChainClientOptions extends RpcOptions {
  logger?: ChainLogger;
}

export const RPC_DEFAULTS = {
  batchSize: 100,
  timeoutMs: 30_000,
  retries: 6,
  retryBaseMs: 250,
  maxLogRange: 2000,
  maxInFlight: 8,
  logConcurrency: 4,
} as const satisfies Required<Omit<RpcOptions, "url">>;

function positiveInteger(name: string, value: number | undefined, fallback: number, min = 1): number {
  const chosen = value ?? fallback;
  if (!Number.isSafeInteger(chosen) || chosen < min) {
    throw new UserFacingError(`RPC option ${name} must be an integer of at least ${min}, got ${value}`);
  }
  return chosen;
}

function blockTag(block: number | undefined): string {
  if (block === undefined) return "latest";
  if (!Number.isSafeInteger(block) || block < 0) throw new RangeError(`invalid block number ${block}`);
  return numberToHex(block);
}

export function createChainClient(options: ChainClientOptions): ChainClient {
  try {
    new URL(options.url);
  } catch {
    throw new UserFacingError("the JSON-RPC node URL is not a valid URL");
  }
  const retries = positiveInteger("retries", options.retries, RPC_DEFAULTS.retries, 0);
  const retryBaseMs = positiveInteger("retryBaseMs", options.retryBaseMs, RPC_DEFAULTS.retryBaseMs, 0);
  const transport = new RpcTransport({
    url: options.url,
    batchSize: positiveInteger("batchSize", options.batchSize, RPC_DEFAULTS.batchSize),
    timeoutMs: positiveInteger("timeoutMs", options.timeoutMs, RPC_DEFAULTS.timeoutMs),
    retries,
    retryBaseMs,
    maxInFlight: positiveInteger("maxInFlight", options.maxInFlight, RPC_DEFAULTS.maxInFlight),
    logger: options.logger,
  });
  const logs = new LogFetcher(
    transport,
    positiveInteger("maxLogRange", options.maxLogRange, RPC_DEFAULTS.maxLogRange),
    positiveInteger("logConcurrency", options.logConcurrency, RPC_DEFAULTS.logConcurrency),
  );

  const blockNumber = (): Promise<number> =>
    transport.request({
      method: "eth_blockNumber",
      params: [],
      parse: (r) => quantity(r, "eth_blockNumber"),
    });
  const getCode = async (account: Address, block?: number): Promise<Hex> =>
    transport.request({
      method: "eth_getCode",
      params: [account, blockTag(block)],
      parse: (r) => hexData(r, "eth_getCode result"),
    });

  const traces = new TraceSource(transport, { head: blockNumber, logger: options.logger });
  const receipts = new ReceiptSource(transport, getCode, options.logger);

  const client: ChainClient = {
    url: options.url,
    chainId: () =>
      transport.request({ method: "eth_chainId", params: [], parse: (r) => quantity(r, "eth_chainId") }),
    blockNumber,
    getLogs: (from, to, topic0, addresses) => logs.getLogs(from, to, topic0, addresses),
    getBlockLogs: (blockHash, blockNumber, topic0) => logs.getBlockLogs(blockHash, blockNumber, topic0),
    getHeaders: (numbers) => getHeaders(transport, numbers),
    getCode,
    call: async (to, data, block) =>
      transport.request({
        method: "eth_call",
        params: [{ to, data }, blockTag(block)],
        parse: (r) => {
          const result = hexData(r, "eth_call result");
          return result === "0x" ? undefined : result;
        },
        settle: (_error, verdict) => (verdict === "revert" ? { value: undefined } : undefined),
      }),
    getTransactionSender: async (tx) => (await client.getTransaction(tx)).from,
    getTransaction: async ({ blockHash, index, hash: txHash }) => {
      if (!Number.isSafeInteger(index) || index < 0)
        throw new RangeError(`invalid transaction index ${index}`);
      const what = `transaction ${index} of block ${blockHash}`;
      return transport.request({
        method: "eth_getTransactionByBlockHashAndIndex",
        params: [blockHash, numberToHex(index)],
        parse: (r): TransactionCall => {
          // Null for a block the node itself named and whose logs it gave: asked again a few times,
          // but a node that never has it (a system transaction it does not serve, a pruned index)
          // would otherwise be waited on for ever; repeated, it stops the chain with this cause.
          if (r === null) throw new MalformedAnswerError(`the node has no ${what}`);
          const tx = object(r, what);
          const found = hash(tx.hash, `${what} hash`);
          if (found !== txHash.toLowerCase()) {
            throw new MalformedAnswerError(
              `asked for ${what}, expecting ${txHash}, the node answered ${found}`,
            );
          }
          return {
            txHash: found,
            from: address(tx.from, `${what} from`),
            to: tx.to === null || tx.to === undefined ? null : address(tx.to, `${what} to`),
            value: uint256(tx.value, `${what} value`),
          };
        },
      });
    },
    traceApi: (probeBlock) => traces.traceApi(probeBlock),
    getTracedCreations: (from, to) => traces.getTracedCreations(from, to),
    getTraces: (from, to) => traces.getTraces(from, to),
    getReceiptCreations: (from, to) => receipts.getReceiptCreations(from, to),
    close: async () => transport.close(),
  };
  return client;
}
