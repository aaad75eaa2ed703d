/**
 * Errors are sorted by what the caller should do with them, not by where they come from.
 * Anything else thrown is a bug.
 */

/** A passing fault (network, rate limit, overloaded or lagging node): try again later. */
export class TransientError extends Error {
  // Typed as string so that subclasses which tell the caller more can name themselves.
  override readonly name: string = "TransientError";
}

/** The node answered, but refuses the request as asked (range too large, too many results): ask for less. */
export class RequestTooLargeError extends Error {
  override readonly name = "RequestTooLargeError";
}

/** The operator must fix something (configuration, wrong node, unreachable database): stop with this message. */
export class UserFacingError extends Error {
  override readonly name = "UserFacingError";
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
