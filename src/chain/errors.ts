import { RequestTooLargeError, TransientError, UserFacingError } from "../core/errors.ts";

/**
 * The node answered, but with something unusable (not JSON-RPC, wrong shape, a block it does not have yet,
 * logs out of order). Treated as a passing fault: a lagging or misbehaving replica behind a load balancer
 * usually answers correctly on the next try.
 */
export class MalformedAnswerError extends TransientError {}

/**
 * The node answered null for something that exists: a block, receipt or transaction it has not caught
 * up with (or, for one named by hash, that it never saw). A lagging replica, so it counts as an outage,
 * not as an unusable answer.
 */
export class NotAvailableYetError extends MalformedAnswerError {}

/**
 * Retries ran out on a node that answered every time, but unusably: an error it does not explain (say a
 * -32000 with an unknown message) or an answer of the wrong shape. Plain TransientError is kept for
 * outages (unreachable, timing out, overloaded, rate limiting, behind). Both pass, usually; but a caller
 * that meets this one for the same request again and again faces a node that will not serve it, and may
 * stop rather than retry forever.
 */
export class RepeatedNodeError extends TransientError {
  override readonly name = "RepeatedNodeError";

  constructor(
    message: string,
    readonly method: string,
    /** The last unusable answer: a MalformedAnswerError, or the node's JSON-RPC error. */
    override readonly cause: Error,
  ) {
    super(message, { cause });
  }
}

/** The node says the request itself is wrong or cannot be served (bad params, pruned state, disabled API). */
export class NodeRejectedError extends UserFacingError {
  constructor(
    message: string,
    readonly method: string,
    readonly code: number | undefined,
  ) {
    super(message);
  }
}

/** The node does not offer the method at all (namespace disabled, older client, provider plan). */
export class MethodUnavailableError extends NodeRejectedError {}

/** A refusal of the request's size, keeping the node's own words apart for messages that add context. */
export class RefusedAsAskedError extends RequestTooLargeError {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** Requests still pending when the client was closed. */
export class ClientClosedError extends Error {
  override readonly name = "ClientClosedError";
}

/** One line, bounded, for messages that must fit a log line. */
export function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
