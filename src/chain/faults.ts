/**
 * What to do about a failed JSON-RPC request. Nodes and hosted providers word the same condition
 * in many ways and codes, so the decision looks at the HTTP status, the JSON-RPC code and the message.
 */
export type Verdict =
  /** A passing fault: back off and ask again. */
  | "retry"
  /** Ask again, but in an HTTP request of its own (the batch as a whole was too big). */
  | "retry-alone"
  /** eth_getLogs only: the node refuses this many blocks or results; ask for a smaller range. */
  | "too-large"
  /** eth_call only: the EVM failed the call (revert, invalid opcode, out of gas, past the node's time limit). */
  | "revert"
  /** The node does not offer the method. */
  | "method-missing"
  /** The request itself is wrong, or asks for something this node cannot serve: asking again will not help. */
  | "reject";

export interface Failure {
  method: string;
  /** HTTP status when the answer was not 2xx. */
  status?: number | undefined;
  /** JSON-RPC error code when the node sent a JSON-RPC error. */
  code?: number | undefined;
  message: string;
  /** Whether the request shared its HTTP request with others. */
  inBatch: boolean;
}

const RATE_LIMITED =
  /rate.?limit|too many requests|exceeded .*capacity|request rate|daily request|compute units|throughput|quota|credits|try again (later|in)|please slow down|capacity exceeded/i;

/**
 * The node is behind the block asked for: it will have it shortly. A block asked for by hash that the
 * node does not know ("block 0x… not found", EIP-1474's -32001 "resource not found") reads the same: a
 * replica behind, or a block of a fork the node never had, which the batch read again no longer names.
 */
const LAGGING =
  /header not found|unknown block|block not found|block (#?\d+|0x[0-9a-f]+) not found|resource not found|not yet available|not available yet|beyond (the )?(current )?head|block height is \d+ but requested was|greater than (the )?(latest|head|current)|after last accepted block|not been (mined|indexed)|still syncing|missing block/i;

/** State or history this node does not keep; waiting will not produce it. */
const STATE_UNAVAILABLE =
  /missing trie node|historical state|state (is )?(not available|pruned|unavailable)|pruned|archive node|required history/i;

const RANGE_REFUSED =
  /more than \d[\d,]* (results|logs)|too many (results|logs|blocks)|block range|range (is )?too (large|wide|big)|exceeds? (the )?(max|maximum|allowed)|max(imum)? (block )?range|range (limit|exceeded|allowed)|response size|size exceeded|limit exceeded|results? limit|query timeout|consider reducing|reduce (the|your) (block )?range|returned more than|logs? (are|is) limited|is limited to|too large|query exceeds|exceeds? (the )?limit|max results|range over|limited to a/i;

const INVALID_RANGE = /invalid block range|fromBlock.*(after|greater than|>).*toBlock/i;

const METHOD_MISSING =
  /method .*(not found|does not exist|not available|not supported|unsupported|not allowed|not whitelisted|disabled|not enabled)|(unsupported|unknown|invalid) method|namespace .*(disabled|not enabled)|not supported on|is not supported/i;

/**
 * Includes the node stopping a call that ran past its time limit (geth and erigon: "execution aborted
 * (timeout = 5s)"): the same call would run as long again, so a contract too slow to answer counts as
 * one that gives no answer.
 */
const REVERTED =
  /revert|invalid opcode|out of gas|stack (underflow|overflow|limit)|invalid jump|bad instruction|vm execution error|vm exception|execution error|evm error|invalid instruction|write protection|static state change|bad jump|execution aborted/i;

/** Several nodes cap the size of a whole batch answer; the requests are fine on their own. */
const BATCH_TOO_LARGE =
  /batch (too large|size|limit|response too large)|response too large|too many requests in batch/i;

const REQUEST_WRONG_CODES = new Set([-32700, -32600, -32602, -32004, -32006]);

export function classify(failure: Failure): Verdict {
  const { method, status, code, message, inBatch } = failure;
  const isLogs = method === "eth_getLogs";

  if (status === 429 || code === 429) return "retry";
  if (status === 413) return inBatch ? "retry-alone" : isLogs ? "too-large" : "reject";
  // Refused credentials stay refused, whatever JSON-RPC error the provider wraps them in.
  if (status === 401 || status === 403) return RATE_LIMITED.test(message) ? "retry" : "reject";

  if (code === undefined) {
    if (status === undefined) return "retry";
    if (status === 408 || status === 425 || status >= 500) return "retry";
    return "reject";
  }

  // A revert reason is free text chosen by the contract ("method not supported", "rate limited"...):
  // recognise the revert before reading anything else into the message.
  if (method === "eth_call" && code !== -32601 && (code === 3 || REVERTED.test(message))) return "revert";
  if (code === -32601) return "method-missing";
  if (RATE_LIMITED.test(message)) return "retry";
  if (STATE_UNAVAILABLE.test(message)) return "reject";
  if (LAGGING.test(message)) return "retry";
  // Range refusals come before the method-missing wording: some say the range "is not supported".
  if (isLogs) {
    if (INVALID_RANGE.test(message)) return "reject";
    if (code === -32005 || RANGE_REFUSED.test(message)) return "too-large";
  }
  if (METHOD_MISSING.test(message)) return "method-missing";
  if (inBatch && BATCH_TOO_LARGE.test(message)) return "retry-alone";
  if (code === 3) return "reject";
  if (REQUEST_WRONG_CODES.has(code)) return "reject";
  if (/invalid (argument|params|request|input)|cannot unmarshal|parse error/i.test(message)) return "reject";
  // Everything else (internal errors, generic -32000 server errors, unknown codes) is taken for a fault of
  // the node; the retry budget bounds the cost of being wrong.
  return "retry";
}

/**
 * Whether a failure worth retrying looks like an outage (no answer, an HTTP status that means overloaded
 * or down, a rate limit, a node behind the block asked for) rather than a node that answers, but with an
 * error it does not explain. Only the second kind, when it lasts through every retry, says the node will
 * not serve this request.
 */
export function isOutage(failure: Failure): boolean {
  const { status, code, message } = failure;
  if (code === undefined || status === 429 || code === 429) return true;
  if (status !== undefined && (status === 408 || status === 425 || status >= 500)) return true;
  return RATE_LIMITED.test(message) || LAGGING.test(message);
}
