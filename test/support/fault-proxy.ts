import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A JSON-RPC proxy on 127.0.0.1 in front of a real node that misbehaves the way nodes and hosted
 * providers do, drawn from a seeded PRNG so a failing run can be replayed. Every injected fault is
 * counted, so a test can prove each kind actually happened.
 */

export interface FaultRates {
  /** HTTP 429 with Retry-After: 0. */
  tooManyRequests: number;
  /** HTTP 500, 502 or 503. */
  serverError: number;
  /** Never answered (until the proxy closes). */
  hang: number;
  /** Connection dropped without an answer. */
  reset: number;
  /** The upstream answer cut in the middle (valid HTTP, broken JSON). */
  truncate: number;
  /** A batch answer with one element left out (batches of two or more only). */
  dropBatchElement: number;
  /** eth_getBlockByNumber answered `null`, as a replica a few blocks behind does. */
  nullBlock: number;
}

export type FaultKind = keyof FaultRates;

export interface FaultProxyOptions {
  upstream: string;
  seed?: number;
  /** Chance per opportunity of each fault; a kind with a rate happens at the latest at its 1 / rate-th chance. */
  rates?: Partial<FaultRates>;
  /** eth_getLogs over more blocks than this is refused, in turn in each wording of RANGE_REFUSALS. */
  maxLogRange?: number;
  /** Methods answered with "method not found", as a node without them would. */
  disabledMethods?: readonly string[];
  /** Methods answered with a null result, as a node that prunes its transaction index answers eth_getTransactionByHash. */
  nullAnswers?: readonly string[];
  /** Methods answered with this JSON-RPC error, as a node in that condition answers them. */
  rpcErrors?: Readonly<Record<string, { code: number; message: string }>>;
  /** Trace methods refuse blocks below this one, as a full node without their state does. */
  tracesFrom?: number;
  /** Remove txHash from debug_traceBlockByNumber/ByHash answers, as geth before 1.11 sent them. */
  stripTraceTxHashes?: boolean;
  /** Remove status from receipts, as nodes answer for blocks before Byzantium. */
  stripReceiptStatus?: boolean;
  /** Answer every request with this HTTP status, never reaching the upstream. */
  alwaysFailStatus?: number;
  /**
   * eth_getLogs over a range answers no log of this block or later, as a replica whose head is below
   * it does; eth_getLogs by block hash is answered in full.
   */
  lagLogsFrom?: number;
  /** The first this many eth_getLogs by block hash are refused as "unknown block", as a replica without the block does. */
  unknownPinnedLogs?: number;
  /**
   * Answers to these methods name a block of another fork (every blockHash in them changed), as a
   * replica on the other side of a reorganisation sends them.
   */
  otherFork?: readonly string[];
  /**
   * The first `times` answers to these methods carry a non-hex character in their first address or hash
   * (address, hash, from, blockHash, transactionHash), as a broken node or middlebox sends them.
   */
  nonHex?: { methods: readonly string[]; times: number };
}

export interface FaultCounters extends Record<FaultKind, number> {
  /** HTTP requests received. */
  requests: number;
  /** JSON-RPC calls received (a batch counts each element). */
  calls: number;
  /** Refused eth_getLogs ranges, by index into RANGE_REFUSALS. */
  rangeRefused: number[];
  methodDisabled: number;
  /** Calls answered null for being one of `nullAnswers`. */
  nullAnswers: number;
  /** Calls answered with one of `rpcErrors`. */
  rpcErrors: number;
  /** Trace requests refused for a block below `tracesFrom`. */
  traceRefused: number;
  alwaysFailed: number;
  /** Logs left out of range answers by `lagLogsFrom`. */
  logsDropped: number;
  /** eth_getLogs by block hash refused by `unknownPinnedLogs`. */
  pinnedRefused: number;
  /** Answers rewritten to name a block of another fork. */
  otherFork: number;
  /** JSON-RPC calls received, by method. */
  methods: Record<string, number>;
  /** Answers given a non-hex character. */
  nonHex: number;
  /** HTTP requests open at once, now and at most so far. */
  open: number;
  maxOpen: number;
}

export interface FaultProxy {
  url: string;
  counters: FaultCounters;
  close(): Promise<void>;
}

interface Refusal {
  status: number;
  code?: number;
  message: string;
}

/** How real nodes and providers refuse an eth_getLogs range (wording as they send it). */
export const RANGE_REFUSALS: readonly Refusal[] = [
  { status: 200, code: -32005, message: "query returned more than 10000 results" },
  { status: 200, code: -32000, message: "block range is too wide" },
  { status: 200, code: -32000, message: "exceed maximum block range: 5000" },
  {
    status: 200,
    code: -32602,
    message:
      "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response.",
  },
  { status: 200, code: -32602, message: "query exceeds max block range 100000" },
  { status: 200, code: -32005, message: "limit exceeded" },
  { status: 200, code: -32000, message: "response size exceeded" },
  { status: 200, code: -32005, message: "Requested range exceeds maximum range limit" },
  { status: 413, message: "Payload Too Large" },
];

/** mulberry32: small, fast, good enough to spread faults, and replayable from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Call {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

const MAX_BODY = 16 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error("request body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** The filter of an eth_getLogs call. */
function logFilter(call: Call): { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown } | undefined {
  if (call.method !== "eth_getLogs" || !Array.isArray(call.params)) return undefined;
  return call.params[0] as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown } | undefined;
}

function logsRangeSize(call: Call): number | undefined {
  if (call.method !== "eth_getLogs" || !Array.isArray(call.params)) return undefined;
  const filter = call.params[0] as { fromBlock?: unknown; toBlock?: unknown } | undefined;
  if (typeof filter?.fromBlock !== "string" || typeof filter.toBlock !== "string") return undefined;
  return Number(filter.toBlock) - Number(filter.fromBlock) + 1;
}

/**
 * The block a trace request asks for; Infinity for any other request. A block named by its hash is
 * known by the number of the block answers that went through the proxy with that hash.
 */
function tracedBlock(call: Call, numberOfHash: ReadonlyMap<string, number>): number {
  const block = Array.isArray(call.params) ? call.params[0] : undefined;
  if (typeof block !== "string" || !block.startsWith("0x")) return Number.POSITIVE_INFINITY;
  if (call.method === "trace_block" || call.method === "debug_traceBlockByNumber") return Number(block);
  if (call.method === "debug_traceBlockByHash") return numberOfHash.get(block) ?? Number.POSITIVE_INFINITY;
  return Number.POSITIVE_INFINITY;
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const random = prng(options.seed ?? 1);
  const rates: FaultRates = {
    tooManyRequests: 0,
    serverError: 0,
    hang: 0,
    reset: 0,
    truncate: 0,
    dropBatchElement: 0,
    nullBlock: 0,
    ...options.rates,
  };
  const counters: FaultCounters = {
    requests: 0,
    calls: 0,
    tooManyRequests: 0,
    serverError: 0,
    hang: 0,
    reset: 0,
    truncate: 0,
    dropBatchElement: 0,
    nullBlock: 0,
    rangeRefused: RANGE_REFUSALS.map(() => 0),
    methodDisabled: 0,
    nullAnswers: 0,
    rpcErrors: 0,
    traceRefused: 0,
    alwaysFailed: 0,
    logsDropped: 0,
    pinnedRefused: 0,
    otherFork: 0,
    methods: {},
    nonHex: 0,
    open: 0,
    maxOpen: 0,
  };
  const disabled = new Set(options.disabledMethods ?? []);
  const numberOfHash = new Map<string, number>();
  const sockets = new Set<Socket>();
  let refusalTurn = 0;
  let serverErrorTurn = 0;

  const missed = new Map<FaultKind, number>();
  const pick = (kinds: readonly FaultKind[]): FaultKind | undefined => {
    const draw = random();
    let edge = 0;
    for (const kind of kinds) {
      edge += rates[kind];
      if (draw < edge) return kind;
    }
    // How many chances a run gives each kind depends on timing (batches, retries), so the draws
    // alone leave a rare kind out of some runs; a test counting on every rated kind would then fail
    // by chance. A kind still never injected by its expected turn, 1 / rate chances, is given then.
    for (const kind of kinds) {
      if (rates[kind] === 0 || counters[kind] > 0) continue;
      const chances = (missed.get(kind) ?? 0) + 1;
      missed.set(kind, chances);
      if (chances >= 1 / rates[kind]) return kind;
    }
    return undefined;
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };

  /** Answers the proxy gives itself, without the upstream: disabled methods and refused ranges. */
  const localAnswer = (call: Call): { status: number; body: unknown } | undefined => {
    if (typeof call.method === "string" && disabled.has(call.method)) {
      counters.methodDisabled++;
      return {
        status: 200,
        body: {
          jsonrpc: "2.0",
          id: call.id,
          error: { code: -32601, message: `the method ${call.method} does not exist/is not available` },
        },
      };
    }
    if (typeof call.method === "string" && options.nullAnswers?.includes(call.method)) {
      counters.nullAnswers++;
      return { status: 200, body: { jsonrpc: "2.0", id: call.id, result: null } };
    }
    if (
      logFilter(call)?.blockHash !== undefined &&
      counters.pinnedRefused < (options.unknownPinnedLogs ?? 0)
    ) {
      counters.pinnedRefused++;
      return {
        status: 200,
        body: { jsonrpc: "2.0", id: call.id, error: { code: -32000, message: "unknown block" } },
      };
    }
    const rpcError = typeof call.method === "string" ? options.rpcErrors?.[call.method] : undefined;
    if (rpcError) {
      counters.rpcErrors++;
      return { status: 200, body: { jsonrpc: "2.0", id: call.id, error: rpcError } };
    }
    if (options.tracesFrom !== undefined && tracedBlock(call, numberOfHash) < options.tracesFrom) {
      counters.traceRefused++;
      return {
        status: 200,
        body: {
          jsonrpc: "2.0",
          id: call.id,
          error: { code: -32000, message: "required historical state unavailable (reexec=128)" },
        },
      };
    }
    const size = logsRangeSize(call);
    if (size !== undefined && options.maxLogRange !== undefined && size > options.maxLogRange) {
      const turn = refusalTurn++ % RANGE_REFUSALS.length;
      const refusal = RANGE_REFUSALS[turn] as Refusal;
      counters.rangeRefused[turn] = (counters.rangeRefused[turn] ?? 0) + 1;
      if (refusal.code === undefined) return { status: refusal.status, body: refusal.message };
      return {
        status: refusal.status,
        body: { jsonrpc: "2.0", id: call.id, error: { code: refusal.code, message: refusal.message } },
      };
    }
    return undefined;
  };

  const forward = async (payload: unknown): Promise<unknown> => {
    const response = await fetch(options.upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
    return JSON.parse(await response.text());
  };

  /** Upstream answers, altered where the options ask for an older or lagging node. */
  const adjust = (call: Call, answer: unknown): unknown => {
    const response = answer as { result?: unknown };
    if (call.method === "eth_getBlockByNumber" || call.method === "eth_getBlockByHash") {
      const block = response.result as { hash?: unknown; number?: unknown } | null | undefined;
      if (typeof block?.hash === "string" && typeof block.number === "string")
        numberOfHash.set(block.hash, Number(block.number));
    }
    if (
      options.stripTraceTxHashes &&
      (call.method === "debug_traceBlockByNumber" || call.method === "debug_traceBlockByHash") &&
      Array.isArray(response.result)
    ) {
      for (const entry of response.result as { txHash?: unknown }[]) delete entry.txHash;
    }
    if (options.stripReceiptStatus && response.result) {
      if (call.method === "eth_getBlockReceipts" && Array.isArray(response.result)) {
        for (const receipt of response.result as { status?: unknown }[]) delete receipt.status;
      }
      if (call.method === "eth_getTransactionReceipt")
        delete (response.result as { status?: unknown }).status;
    }
    const lagFrom = options.lagLogsFrom;
    if (lagFrom !== undefined && logFilter(call)?.fromBlock !== undefined && Array.isArray(response.result)) {
      const logs = response.result as { blockNumber: string }[];
      const kept = logs.filter((log) => Number(log.blockNumber) < lagFrom);
      counters.logsDropped += logs.length - kept.length;
      return { ...response, result: kept };
    }
    if (typeof call.method === "string" && options.otherFork?.includes(call.method) && response.result) {
      const text = JSON.stringify(response.result);
      const forked = text.replace(
        /"blockHash":"(0x[0-9a-fA-F]{63})([0-9a-fA-F])"/g,
        (_, head: string, last: string) => `"blockHash":"${head}${last === "f" ? "e" : "f"}"`,
      );
      if (forked !== text) {
        counters.otherFork++;
        return { ...response, result: JSON.parse(forked) };
      }
    }
    const nonHex = options.nonHex;
    if (
      nonHex &&
      counters.nonHex < nonHex.times &&
      typeof call.method === "string" &&
      nonHex.methods.includes(call.method) &&
      response.result !== undefined &&
      response.result !== null
    ) {
      const text = JSON.stringify(response.result);
      const spoiled = text.replace(
        /"(address|hash|from|blockHash|transactionHash)":"0x(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})"/,
        (found) => `${found.slice(0, -2)}g"`,
      );
      if (spoiled !== text) {
        counters.nonHex++;
        return { ...response, result: JSON.parse(spoiled) };
      }
    }
    if (call.method === "eth_getBlockByNumber" && response.result !== null && pick(["nullBlock"])) {
      counters.nullBlock++;
      return { ...response, result: null };
    }
    return answer;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req);
    counters.requests++;
    if (options.alwaysFailStatus !== undefined) {
      counters.alwaysFailed++;
      res.writeHead(options.alwaysFailStatus, { "content-type": "text/plain" });
      res.end("injected failure");
      return;
    }
    let payload: Call | Call[];
    try {
      payload = JSON.parse(text) as Call | Call[];
    } catch {
      sendJson(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
      return;
    }
    const calls = Array.isArray(payload) ? payload : [payload];
    counters.calls += calls.length;
    for (const call of calls) {
      const method = String(call.method);
      counters.methods[method] = (counters.methods[method] ?? 0) + 1;
    }

    const before = pick(["tooManyRequests", "serverError", "hang", "reset"]);
    if (before === "tooManyRequests") {
      counters.tooManyRequests++;
      res.writeHead(429, { "retry-after": "0", "content-type": "text/plain" });
      res.end("Too Many Requests");
      return;
    }
    if (before === "serverError") {
      counters.serverError++;
      const status = [500, 502, 503][serverErrorTurn++ % 3] as number;
      res.writeHead(status, { "content-type": "text/plain" });
      res.end("injected server error");
      return;
    }
    if (before === "hang") {
      counters.hang++;
      return;
    }
    if (before === "reset") {
      counters.reset++;
      req.socket.destroy();
      return;
    }

    const local = calls.map(localAnswer);
    let answers: unknown[];
    if (!Array.isArray(payload)) {
      const own = local[0];
      if (own) {
        if (typeof own.body === "string") {
          res.writeHead(own.status, { "content-type": "text/plain" });
          res.end(own.body);
        } else {
          sendJson(res, own.status, own.body);
        }
        return;
      }
      answers = [adjust(payload, await forward(payload))];
    } else {
      const remote = calls.filter((_, i) => !local[i]);
      const upstream = remote.length > 0 ? ((await forward(remote)) as unknown[]) : [];
      const byId = new Map<unknown, unknown>();
      for (const item of upstream) byId.set((item as { id?: unknown }).id, item);
      answers = calls.map((call, i) => {
        const own = local[i];
        // A batch element refused with a bare HTTP status cannot be expressed inside a batch answer.
        if (own)
          return typeof own.body === "string"
            ? { jsonrpc: "2.0", id: call.id, error: { code: -32005, message: own.body } }
            : own.body;
        return adjust(call, byId.get(call.id));
      });
    }

    let body: unknown = Array.isArray(payload) ? answers : answers[0];
    const after = pick(["truncate", "dropBatchElement"]);
    if (after === "dropBatchElement" && Array.isArray(body) && body.length >= 2) {
      counters.dropBatchElement++;
      const dropped = Math.floor(random() * body.length);
      body = body.filter((_, i) => i !== dropped);
    }
    let out = JSON.stringify(body);
    if (after === "truncate") {
      counters.truncate++;
      out = out.slice(0, Math.max(1, Math.floor(out.length * random())));
    }
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(out) });
    res.end(out);
  };

  const server = createServer((req, res) => {
    counters.open++;
    counters.maxOpen = Math.max(counters.maxOpen, counters.open);
    res.once("close", () => {
      counters.open--;
    });
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) return;
      sendJson(res, 502, { jsonrpc: "2.0", id: null, error: { code: -32603, message: String(error) } });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counters,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
