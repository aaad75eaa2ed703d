import { RequestTooLargeError } from "../core/errors.ts";
import { type Hex, numberToHex } from "../core/hex.ts";
import type { ChainLog } from "../core/types.ts";
import { MalformedAnswerError, oneLine, RefusedAsAskedError } from "./errors.ts";
import { bad, checkBlockRange, isHexOfLength } from "./parse.ts";
import type { RpcTransport } from "./transport.ts";

interface RawLog {
  address?: unknown;
  topics?: unknown;
  data?: unknown;
  blockNumber?: unknown;
  blockHash?: unknown;
  logIndex?: unknown;
  transactionHash?: unknown;
  transactionIndex?: unknown;
  removed?: unknown;
}

function quantityField(value: unknown, what: string, index: number): number {
  // The shape is checked, not every digit: a regex per field costs more than the rest of the parse, and
  // parseInt (which takes the 0x prefix with radix 16) turns anything without a leading hex digit into NaN.
  if (typeof value !== "string" || value.length < 3 || value.length > 16 || value.charCodeAt(1) !== 120) {
    throw bad(`log ${index} ${what}`, value);
  }
  const n = Number.parseInt(value, 16);
  if (!Number.isSafeInteger(n)) throw bad(`log ${index} ${what}`, value);
  return n;
}

function hashField(value: unknown, what: string, index: number): Hex {
  if (typeof value !== "string" || !isHexOfLength(value, 64)) throw bad(`log ${index} ${what}`, value);
  return value.toLowerCase() as Hex;
}

/** Stands for "no raw field seen yet": equal to nothing a JSON answer holds. */
const UNSEEN: unknown = Symbol("unseen");

/**
 * Turns an eth_getLogs answer for [from, to] into ChainLogs, checking what the rest of the indexer relies
 * on: every log inside the range, none `removed`, strictly ordered by (block, logIndex) (so no duplicates),
 * one hash per block, and a first topic that was asked for. This is the hot path of a backfill: plain
 * loops and direct field reads, no formatter layers.
 */
export function parseLogs(
  result: unknown,
  from: number,
  to: number,
  topic0: ReadonlySet<string>,
): ChainLog[] {
  if (!Array.isArray(result)) throw bad("eth_getLogs result", result);
  const logs: ChainLog[] = new Array(result.length);
  let prevBlock = -1;
  let prevIndex = -1;
  let prevHash = "" as Hex;
  let prevTx = "" as Hex;
  // A block's logs repeat its hash, a transaction's logs repeat its hash: a string equal to the one just
  // checked is not checked digit by digit again.
  let prevRawHash: unknown = UNSEEN;
  let prevRawTx: unknown = UNSEEN;
  for (let i = 0; i < result.length; i++) {
    const raw = result[i] as RawLog | null;
    if (raw === null || typeof raw !== "object") throw bad(`log ${i}`, raw);
    if (raw.removed === true) throw bad(`log ${i} removed`, true);

    const blockNumber = quantityField(raw.blockNumber, "blockNumber", i);
    if (blockNumber < from || blockNumber > to) {
      throw bad(`log ${i} blockNumber (asked for [${from}, ${to}])`, blockNumber);
    }
    const logIndex = quantityField(raw.logIndex, "logIndex", i);
    const rawHash = raw.blockHash;
    const blockHash = rawHash === prevRawHash ? prevHash : hashField(rawHash, "blockHash", i);
    if (blockNumber < prevBlock || (blockNumber === prevBlock && logIndex <= prevIndex)) {
      throw bad(
        `log ${i} order (after block ${prevBlock} log ${prevIndex})`,
        `block ${blockNumber} log ${logIndex}`,
      );
    }
    if (blockNumber === prevBlock && blockHash !== prevHash) {
      throw bad(`log ${i} blockHash (differs from the block's other logs)`, blockHash);
    }

    const address = raw.address;
    if (typeof address !== "string" || !isHexOfLength(address, 40)) throw bad(`log ${i} address`, address);
    const rawTopics = raw.topics;
    if (!Array.isArray(rawTopics) || rawTopics.length === 0 || rawTopics.length > 4) {
      throw bad(`log ${i} topics`, rawTopics);
    }
    // The asked topics are well-formed and lower-case: a first topic found among them needs no other check.
    if (!topic0.has(rawTopics[0])) {
      rawTopics[0] = hashField(rawTopics[0], "topic", i);
      if (!topic0.has(rawTopics[0])) throw bad(`log ${i} topic0 (not asked for)`, rawTopics[0]);
    }
    for (let t = 1; t < rawTopics.length; t++) rawTopics[t] = hashField(rawTopics[t], "topic", i);
    const data = raw.data;
    if (typeof data !== "string" || data.charCodeAt(1) !== 120 || data.length % 2 !== 0) {
      throw bad(`log ${i} data`, data);
    }
    const rawTx = raw.transactionHash;
    const transactionHash = rawTx === prevRawTx ? prevTx : hashField(rawTx, "transactionHash", i);

    logs[i] = {
      address: address.toLowerCase() as Hex,
      topics: rawTopics as Hex[],
      data: data as Hex,
      blockNumber,
      blockHash,
      logIndex,
      transactionHash,
      transactionIndex: quantityField(raw.transactionIndex, "transactionIndex", i),
    };
    prevBlock = blockNumber;
    prevIndex = logIndex;
    prevHash = blockHash;
    prevRawHash = rawHash;
    prevTx = transactionHash;
    prevRawTx = rawTx;
  }
  return logs;
}

function reasonOf(error: RequestTooLargeError): string {
  return error instanceof RefusedAsAskedError ? error.reason : oneLine(error.message);
}

/** Successes at the learned range size before trying twice as many blocks again. */
const GROW_AFTER = 4;

/** One block's logs are a range's worth at most: a few of them share an HTTP request. */
const PINNED_BATCH = 10;

/**
 * eth_getLogs over any range: cut into chunks of at most `maxRange` blocks, fetched by a few workers,
 * each chunk halved again (down to one block) when the node refuses it. The size the node last accepted
 * is remembered, so a node with a 10 000-result cap is not asked for refused ranges over and over,
 * and grows back after a few successes since log density varies along the chain.
 */
export class LogFetcher {
  private window: number;
  private successes = 0;

  constructor(
    private readonly transport: RpcTransport,
    private readonly maxRange: number,
    private readonly concurrency: number,
  ) {
    this.window = maxRange;
  }

  async getLogs(
    from: number,
    to: number,
    topic0: readonly Hex[],
    addresses?: readonly Hex[],
  ): Promise<ChainLog[]> {
    checkBlockRange(from, to);
    if (topic0.length === 0 || addresses?.length === 0) return [];
    const topics = [...new Set(topic0.map((t) => t.toLowerCase() as Hex))];
    const topicSet: ReadonlySet<string> = new Set(topics);
    const emitters = addresses && [...new Set(addresses.map((a) => a.toLowerCase() as Hex))];
    const parts: { start: number; logs: ChainLog[] }[] = [];
    let cursor = from;
    let failed = false;

    const worker = async (): Promise<void> => {
      while (!failed && cursor <= to) {
        const start = cursor;
        const end = Math.min(to, start + this.window - 1);
        cursor = end + 1;
        try {
          parts.push({ start, logs: await this.fetchRange(start, end, topics, topicSet, emitters) });
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    const workers = Math.max(1, Math.min(this.concurrency, Math.ceil((to - from + 1) / this.window)));
    await Promise.all(Array.from({ length: workers }, worker));

    if (parts.length === 1) return parts[0]?.logs ?? [];
    parts.sort((a, b) => a.start - b.start);
    const total = parts.reduce((n, part) => n + part.logs.length, 0);
    const logs: ChainLog[] = new Array(total);
    let offset = 0;
    for (const part of parts) {
      for (let i = 0; i < part.logs.length; i++) logs[offset + i] = part.logs[i] as ChainLog;
      offset += part.logs.length;
    }
    return logs;
  }

  /**
   * Logs of the block with this hash (EIP-234), whose first topic is one of `topic0`. Unlike a range, a
   * hash names one block: a node that does not have it errors (a lag, asked again) instead of answering
   * nothing, so an empty answer here means the block has no such log.
   */
  getBlockLogs(blockHash: Hex, blockNumber: number, topic0: readonly Hex[]): Promise<ChainLog[]> {
    checkBlockRange(blockNumber, blockNumber);
    if (topic0.length === 0) return Promise.resolve([]);
    const topics = [...new Set(topic0.map((t) => t.toLowerCase() as Hex))];
    const topicSet: ReadonlySet<string> = new Set(topics);
    const expected = blockHash.toLowerCase();
    return this.transport.request({
      method: "eth_getLogs",
      params: [{ blockHash, topics: [topics] }],
      maxBatch: PINNED_BATCH,
      parse: (result) => {
        const logs = parseLogs(result, blockNumber, blockNumber, topicSet);
        // parseLogs holds a block's logs to one hash: the first log's is every log's.
        const named = logs[0]?.blockHash;
        if (named !== undefined && named !== expected) {
          throw new MalformedAnswerError(
            `asked for the logs of block ${blockNumber} ${expected}, got logs of ${named}`,
          );
        }
        return logs;
      },
    });
  }

  private async fetchRange(
    from: number,
    to: number,
    topics: readonly Hex[],
    topicSet: ReadonlySet<string>,
    emitters?: readonly Hex[],
  ): Promise<ChainLog[]> {
    const size = to - from + 1;
    try {
      const filter = { fromBlock: numberToHex(from), toBlock: numberToHex(to), topics: [topics] };
      const logs = await this.transport.request({
        method: "eth_getLogs",
        params: [emitters ? { ...filter, address: emitters } : filter],
        maxBatch: 1,
        parse: (result) => {
          const parsed = parseLogs(result, from, to, topicSet);
          if (emitters) {
            const wanted = new Set<string>(emitters);
            const stray = parsed.find((log) => !wanted.has(log.address));
            if (stray)
              throw new MalformedAnswerError(`eth_getLogs answered a log of ${stray.address}, not asked for`);
          }
          return parsed;
        },
      });
      this.onSuccess(size);
      return logs;
    } catch (error) {
      if (!(error instanceof RequestTooLargeError)) throw error;
      if (from === to) {
        throw new RequestTooLargeError(
          `${this.transport.displayUrl} refuses eth_getLogs even for the single block ${from}: ${reasonOf(error)}`,
        );
      }
      this.window = Math.max(1, Math.min(this.window, Math.floor(size / 2)));
      this.successes = 0;
      const mid = from + Math.floor((to - from) / 2);
      const left = await this.fetchRange(from, mid, topics, topicSet, emitters);
      const right = await this.fetchRange(mid + 1, to, topics, topicSet, emitters);
      return left.length === 0 ? right : right.length === 0 ? left : left.concat(right);
    }
  }

  private onSuccess(size: number): void {
    if (this.window >= this.maxRange || size < this.window) return;
    if (++this.successes >= GROW_AFTER) {
      this.window = Math.min(this.maxRange, this.window * 2);
      this.successes = 0;
    }
  }
}
