import { HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError } from "viem";
import { getHttpRpcClient, type HttpRpcClient } from "viem/utils";
import { errorMessage, TransientError } from "../core/errors.ts";
import { redactUrl } from "../core/url.ts";
import {
  ClientClosedError,
  MalformedAnswerError,
  MethodUnavailableError,
  NodeRejectedError,
  NotAvailableYetError,
  oneLine,
  RefusedAsAskedError,
  RepeatedNodeError,
} from "./errors.ts";
import { classify, type Failure, isOutage, type Verdict } from "./faults.ts";
import { backoffDelay, parseRetryAfter } from "./retry.ts";

export interface ChainLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface TransportOptions {
  url: string;
  /** Most requests per JSON-RPC batch. */
  batchSize: number;
  /** Per HTTP request, from sending to the last byte of the answer. */
  timeoutMs: number;
  /** Further attempts after the first for a passing fault. */
  retries: number;
  retryBaseMs: number;
  /** Most HTTP requests under way at once; requests beyond wait in a queue (and keep filling batches). */
  maxInFlight: number;
  /** Largest answer accepted, in bytes. */
  maxResponseBytes?: number;
  logger?: ChainLogger | undefined;
}

export interface RpcErrorAnswer {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcCall<T> {
  method: string;
  params: readonly unknown[];
  /** Turns the result into T. Throwing MalformedAnswerError counts as a passing fault and asks again. */
  parse(result: unknown): T;
  /** Most requests this one may share an HTTP request with (1: always alone). Defaults to the batch size. */
  maxBatch?: number;
  /** Turns a JSON-RPC error answer into a value instead of a failure (a revert, for eth_call). */
  settle?(error: RpcErrorAnswer, verdict: Verdict): { value: T } | undefined;
}

export interface TransportStats {
  httpRequests: number;
  batchRequests: number;
  retries: number;
}

interface Entry {
  call: RpcCall<unknown>;
  id: number;
  attempts: number;
  lane: number;
  /** Whether any attempt failed for want of an answer (see `isOutage`). */
  outage: boolean;
  /** The last answer that came but could not be used. */
  unusable?: Error;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** What went wrong with one HTTP exchange, in the terms `classify` needs. */
interface HttpFailure {
  status?: number | undefined;
  rpcError?: RpcErrorAnswer | undefined;
  cause: string;
  retryAfterMs?: number | undefined;
}

/**
 * Calls to ask again after one HTTP exchange. They go back together after one shared delay, so the
 * calls of a failed batch travel as a batch again (rather than scattered by their jitter), and the
 * failure is logged once per HTTP request rather than once per call.
 */
interface Report {
  entries: Entry[];
  methods: Set<string>;
  cause?: string;
  attempt: number;
  retryAfterMs?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/**
 * The one place that speaks HTTP JSON-RPC. Calls made in the same tick are gathered into batches per
 * lane (a lane is a batch-size cap: large answers such as traces travel in smaller batches, logs alone),
 * at most `maxInFlight` HTTP requests run at once, and every call is retried on its own, so one bad
 * element of a batch does not fail its neighbours. viem supplies the HTTP exchange and nothing else:
 * its retries and batching are not used, the policy here is explicit.
 */
export class RpcTransport {
  readonly url: string;
  /** The URL with credentials and API keys masked: the only form that goes into logs and errors. */
  readonly displayUrl: string;
  readonly stats: TransportStats = { httpRequests: 0, batchRequests: 0, retries: 0 };

  private readonly http: HttpRpcClient;
  private readonly lanes = new Map<number, Entry[]>();
  private laneCursor = 0;
  private inFlight = 0;
  private pumpScheduled = false;
  private nextId = 1;
  private closed = false;
  private readonly abort = new AbortController();
  private readonly waiting = new Map<NodeJS.Timeout, Entry[]>();

  constructor(private readonly options: TransportOptions) {
    this.url = options.url;
    this.displayUrl = redactUrl(options.url);
    this.http = getHttpRpcClient(options.url, {
      timeout: options.timeoutMs,
      maxResponseBodySize: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    });
  }

  request<T>(call: RpcCall<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError());
    return new Promise<T>((resolve, reject) => {
      const size = this.options.batchSize;
      const lane = Math.max(1, Math.min(size, call.maxBatch ?? size));
      this.enqueue({
        call,
        id: this.nextId++,
        attempts: 0,
        lane,
        outage: false,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
  }

  /** Fails everything pending and aborts the HTTP requests under way. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    for (const [timer, entries] of this.waiting) {
      clearTimeout(timer);
      for (const entry of entries) entry.reject(this.closedError());
    }
    this.waiting.clear();
    for (const queue of this.lanes.values()) for (const entry of queue) entry.reject(this.closedError());
    this.lanes.clear();
  }

  private closedError(): ClientClosedError {
    return new ClientClosedError(`the JSON-RPC client for ${this.displayUrl} is closed`);
  }

  private enqueue(entry: Entry): void {
    if (this.closed) {
      entry.reject(this.closedError());
      return;
    }
    let queue = this.lanes.get(entry.lane);
    if (!queue) {
      queue = [];
      this.lanes.set(entry.lane, queue);
    }
    queue.push(entry);
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      // Wait for the current tick to finish so calls made together share a batch.
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
  }

  private pump(): void {
    while (!this.closed && this.inFlight < this.options.maxInFlight) {
      const entries = this.takeBatch();
      if (!entries) return;
      this.inFlight++;
      this.send(entries)
        .catch((error: unknown) => {
          // Only a defect gets here (answers are handled inside send); fail the calls rather than hang them.
          for (const entry of entries)
            entry.reject(error instanceof Error ? error : new Error(String(error)));
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  /** Round-robin over lanes so a long queue of one kind cannot starve the others. */
  private takeBatch(): Entry[] | undefined {
    const lanes = [...this.lanes.entries()];
    for (let i = 0; i < lanes.length; i++) {
      const index = (this.laneCursor + i) % lanes.length;
      const lane = lanes[index];
      if (!lane || lane[1].length === 0) continue;
      this.laneCursor = index + 1;
      return lane[1].splice(0, lane[0]);
    }
    return undefined;
  }

  private async send(entries: Entry[]): Promise<void> {
    const batch = entries.length > 1;
    const bodies = entries.map((entry) => ({
      jsonrpc: "2.0" as const,
      id: entry.id,
      method: entry.call.method,
      params: entry.call.params,
    }));
    this.stats.httpRequests++;
    if (batch) this.stats.batchRequests++;
    const report: Report = { entries: [], methods: new Set(), attempt: 0 };
    let answer: unknown;
    try {
      const first = bodies[0];
      if (!first) return;
      answer = await this.http.request({
        body: batch ? bodies : first,
        fetchOptions: { signal: this.abort.signal },
      });
    } catch (error) {
      if (this.closed) {
        for (const entry of entries) entry.reject(this.closedError());
        return;
      }
      const failure = this.describe(error);
      for (const entry of entries) this.onFailure(entry, failure, batch, report);
      this.scheduleRetries(report, entries.length);
      return;
    }

    if (batch) {
      const byId = new Map<number, unknown>();
      if (Array.isArray(answer)) {
        for (const item of answer) {
          if (item === null || typeof item !== "object") continue;
          const id = Number((item as { id?: unknown }).id);
          if (!byId.has(id)) byId.set(id, item);
        }
      }
      for (const entry of entries) {
        const item = byId.get(entry.id);
        if (item === undefined) {
          // Overloaded providers shed elements of a batch: this call got no answer, an outage like a timeout.
          this.fault(entry, "the batch answer has no response for this request", undefined, report);
        } else {
          this.onAnswer(entry, item, report);
        }
      }
    } else {
      const entry = entries[0];
      if (!entry) return;
      this.onAnswer(entry, Array.isArray(answer) && answer.length === 1 ? answer[0] : answer, report);
    }
    this.scheduleRetries(report, entries.length);
  }

  private onAnswer(entry: Entry, item: unknown, report: Report): void {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      this.unusable(
        entry,
        new MalformedAnswerError("malformed answer: not a JSON-RPC response object"),
        report,
      );
      return;
    }
    const response = item as { result?: unknown; error?: unknown };
    if (response.error !== undefined && response.error !== null) {
      const rpcError = readRpcError(response.error);
      if (!rpcError) {
        const cause = `malformed error answer: ${oneLine(JSON.stringify(response.error), 120)}`;
        this.unusable(entry, new MalformedAnswerError(cause), report);
        return;
      }
      this.onFailure(entry, { rpcError, cause: describeRpcError(rpcError) }, false, report);
      return;
    }
    if (!("result" in response)) {
      this.unusable(entry, new MalformedAnswerError("malformed answer: neither result nor error"), report);
      return;
    }
    let value: unknown;
    try {
      value = entry.call.parse(response.result);
    } catch (error) {
      if (error instanceof NotAvailableYetError) {
        this.fault(entry, error.message, undefined, report);
        return;
      }
      if (error instanceof MalformedAnswerError) {
        this.unusable(entry, error, report);
        return;
      }
      entry.reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    entry.resolve(value);
  }

  private onFailure(entry: Entry, failure: HttpFailure, inBatch: boolean, report: Report): void {
    const method = entry.call.method;
    const facts: Failure = {
      method,
      status: failure.status,
      code: failure.rpcError?.code,
      message: failure.rpcError?.message ?? failure.cause,
      inBatch,
    };
    const verdict = classify(facts);
    if (failure.rpcError && entry.call.settle) {
      const settled = entry.call.settle(failure.rpcError, verdict);
      if (settled) {
        entry.resolve(settled.value);
        return;
      }
    }
    const cause = oneLine(failure.cause);
    switch (verdict) {
      case "retry-alone":
      case "retry":
        // A batch too large as a whole: asked again in an HTTP request of its own.
        if (verdict === "retry-alone") entry.lane = 1;
        if (isOutage(facts)) this.fault(entry, failure.cause, failure.retryAfterMs, report);
        else this.unusable(entry, new Error(failure.cause), report);
        return;
      case "too-large":
        entry.reject(
          new RefusedAsAskedError(`${this.displayUrl} refuses ${method} as asked: ${cause}`, cause),
        );
        return;
      case "method-missing":
        entry.reject(
          new MethodUnavailableError(
            `${this.displayUrl} does not offer ${method}: ${cause}`,
            method,
            failure.rpcError?.code,
          ),
        );
        return;
      case "revert":
      case "reject":
        entry.reject(
          new NodeRejectedError(
            `${this.displayUrl} rejected ${method}: ${cause}`,
            method,
            failure.rpcError?.code,
          ),
        );
        return;
    }
  }

  /** An answer came, but cannot be used: asked again, and remembered for what the caller is told. */
  private unusable(entry: Entry, error: Error, report: Report): void {
    entry.unusable = error;
    this.fault(entry, error.message, undefined, report, false);
  }

  private fault(
    entry: Entry,
    cause: string,
    retryAfterMs: number | undefined,
    report: Report,
    outage = true,
  ): void {
    entry.attempts++;
    if (outage) entry.outage = true;
    const method = entry.call.method;
    if (this.closed) {
      entry.reject(this.closedError());
      return;
    }
    if (entry.attempts > this.options.retries) {
      const message = `${method} to ${this.displayUrl} failed after ${entry.attempts} attempts: ${oneLine(cause)}`;
      // Only a node that answered unusably every single time is reported as such: one outage among the
      // attempts leaves open that the answers were the outage's doing.
      entry.reject(
        !entry.outage && entry.unusable
          ? new RepeatedNodeError(message, method, entry.unusable)
          : new TransientError(message),
      );
      return;
    }
    this.stats.retries++;
    report.entries.push(entry);
    report.methods.add(method);
    report.cause ??= oneLine(cause);
    report.attempt = Math.max(report.attempt, entry.attempts);
    if (retryAfterMs !== undefined) report.retryAfterMs = Math.max(report.retryAfterMs ?? 0, retryAfterMs);
  }

  private scheduleRetries(report: Report, requests: number): void {
    const entries = report.entries;
    if (entries.length === 0) return;
    // The node's Retry-After, when it gave one, replaces our own guess.
    const delay = report.retryAfterMs ?? backoffDelay(report.attempt, this.options.retryBaseMs);
    const timer = setTimeout(() => {
      this.waiting.delete(timer);
      for (const entry of entries) this.enqueue(entry);
    }, delay);
    this.waiting.set(timer, entries);
    this.options.logger?.warn(
      {
        url: this.displayUrl,
        methods: [...report.methods],
        retried: entries.length,
        requests,
        attempt: report.attempt,
        delayMs: delay,
        cause: report.cause,
      },
      "JSON-RPC request failed; retrying",
    );
  }

  private describe(error: unknown): HttpFailure {
    if (error instanceof TimeoutError) return { cause: `no answer within ${this.options.timeoutMs} ms` };
    if (error instanceof ResponseBodyTooLargeError) {
      // The same condition as a 413: the answer is too large for one request.
      return { status: 413, cause: `answer larger than ${error.maxSize} bytes` };
    }
    if (error instanceof RpcRequestError) {
      const rpcError = readRpcError(error.cause) ?? { code: error.code, message: error.details };
      return {
        status: error.status,
        rpcError,
        cause: `${error.status ? `HTTP ${error.status}, ` : ""}${describeRpcError(rpcError)}`,
        retryAfterMs: parseRetryAfter(error.headers?.get("retry-after")),
      };
    }
    if (error instanceof HttpRequestError) {
      if (error.status !== undefined) {
        const details = error.details ? `: ${oneLine(error.details, 160)}` : "";
        return {
          status: error.status,
          cause: `HTTP ${error.status}${details}`,
          retryAfterMs: parseRetryAfter(error.headers?.get("retry-after")),
        };
      }
      return { cause: describeTransportCause(error.cause ?? error) };
    }
    return { cause: describeTransportCause(error) };
  }
}

function readRpcError(value: unknown): RpcErrorAnswer | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const { code, message, data } = value as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof code !== "number") return undefined;
  return { code, message: typeof message === "string" ? message : "", data };
}

function describeRpcError(error: RpcErrorAnswer): string {
  return `JSON-RPC error ${error.code}: ${error.message || "(no message)"}`;
}

/** Why an HTTP exchange failed below the HTTP status level: connection, truncated or malformed body. */
function describeTransportCause(error: unknown): string {
  const chain: unknown[] = [];
  for (let current = error, depth = 0; current && depth < 6; depth++) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  for (const item of chain) {
    if (item instanceof SyntaxError) return `malformed JSON answer (${errorMessage(item)})`;
  }
  for (const item of chain) {
    const message = errorMessage(item);
    if (/^Expected \d+ responses to batch request/.test(message)) {
      return `the batch answer is missing responses (${message})`;
    }
  }
  for (const item of chain) {
    const code = (item as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return `connection failed (${code})`;
  }
  const last = chain[chain.length - 1];
  const message = errorMessage(last ?? error);
  if (message === "terminated" || /other side closed|socket/i.test(message)) {
    return `connection closed before the answer was complete (${message})`;
  }
  return `request failed (${message})`;
}
