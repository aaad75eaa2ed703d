import { RequestTooLargeError, TransientError, UserFacingError } from "../core/errors.ts";

/**
 * The node answered, but with something unusable (not JSON-RPC, wrong shape, a block it does not have yet,
 * logs out of order). Treated as a passing fault: a lagging or misbehaving replica behind a load balancer
 * usually answers correctly on the next try.
 */
export class MalformedAnswerError extends TransientError {}

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

/**
 * A request whose retries ran out on the same kind of unusable answer (an unrecognised JSON-RPC
 * error, a malformed result), not on an outage: asking again much later is unlikely to help.
 */
export class RepeatedNodeError extends TransientError {
  constructor(
    message: string,
    readonly method: string,
  ) {
    super(message);
  }
}
