/**
 * The API's errors, sorted by what the caller should do, and the one table that maps them to gRPC
 * codes and HTTP statuses. Handlers throw these; the REST and gRPC adapters turn whatever was
 * thrown into a response with `toApiError` and never build a failure response themselves.
 *
 * | class                   | gRPC code              | HTTP | the caller should            |
 * |-------------------------|------------------------|------|------------------------------|
 * | InvalidArgumentError    | INVALID_ARGUMENT (3)   | 400  | fix the named field          |
 * | NotFoundError           | NOT_FOUND (5)          | 404  | stop asking for it           |
 * | FailedPreconditionError | FAILED_PRECONDITION (9)| 400  | start again from another place |
 * | UnauthenticatedError    | UNAUTHENTICATED (16)   | 401  | send a valid API key         |
 * | ResourceExhaustedError  | RESOURCE_EXHAUSTED (8) | 429  | wait `Retry-After` seconds   |
 * | InternalError           | INTERNAL (13)          | 500  | report it (a bug)            |
 * | UnavailableError        | UNAVAILABLE (14)       | 503  | retry later (`Retry-After`)  |
 *
 * What is not an ApiError is sorted by `toApiError`: a lost database connection, another passing
 * fault, and a query the server cancelled at the API's statement timeout are UNAVAILABLE; anything
 * else is INTERNAL.
 */
import { TransientError } from "../core/errors.ts";
import { classifyDatabaseError, statementWasCancelled } from "../store/pg/errors.ts";

/** The gRPC status codes the API uses (google.rpc.Code). */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCodeName = keyof typeof GrpcCode;

/** A code's name by its number, as the metrics and the access log label a request. */
export const GRPC_CODE_NAME = Object.fromEntries(
  Object.entries(GrpcCode).map(([name, code]) => [code, name]),
) as Record<number, string>;
export type GrpcCodeNumber = (typeof GrpcCode)[GrpcCodeName];

/** The one mapping from a gRPC code to its HTTP status. */
export const HTTP_STATUS: Readonly<Record<GrpcCodeNumber, number>> = {
  [GrpcCode.INVALID_ARGUMENT]: 400,
  [GrpcCode.NOT_FOUND]: 404,
  [GrpcCode.RESOURCE_EXHAUSTED]: 429,
  [GrpcCode.FAILED_PRECONDITION]: 400,
  [GrpcCode.INTERNAL]: 500,
  [GrpcCode.UNAVAILABLE]: 503,
  [GrpcCode.UNAUTHENTICATED]: 401,
};

/** The JSON form of `google.rpc.Status`, the body of every REST error response. */
export interface ErrorBody {
  code: GrpcCodeNumber;
  message: string;
  details: [];
}

/** Every error the API shows a client. Its message is written for the client and is safe to show. */
export abstract class ApiError extends Error {
  abstract readonly code: GrpcCodeNumber;
  override readonly name: string = "ApiError";

  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }

  /** Response headers the error calls for besides the body's content type (`Retry-After`). */
  httpHeaders(): Record<string, string> {
    return {};
  }

  /** gRPC trailing metadata the error carries beside its status (lower-case names). */
  grpcTrailers(): Record<string, string> {
    return {};
  }

  body(): ErrorBody {
    return { code: this.code, message: this.message, details: [] };
  }
}

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** A request value is malformed or out of range: the message names the field, `"<field>: <problem>"`. */
export class InvalidArgumentError extends ApiError {
  readonly code = GrpcCode.INVALID_ARGUMENT;
  override readonly name = "InvalidArgumentError";

  /**
   * @param field the request field in snake_case, as in the `.proto` (`contract_address`, `timestamp_lt`)
   * @param problem what is wrong with it, for the client
   */
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    if (!SNAKE_CASE.test(field)) throw new TypeError(`not a snake_case field name: ${JSON.stringify(field)}`);
    super(`${field}: ${problem}`);
  }
}

/** The requested resource does not exist (an NFT that was never minted). */
export class NotFoundError extends ApiError {
  readonly code = GrpcCode.NOT_FOUND;
  override readonly name = "NotFoundError";
}

/**
 * The request is well formed but cannot be served from where it asks to start: a stream cursor
 * whose next events were pruned, or one past the newest event. `oldestCursor` names the cursor to start
 * from instead (sent as `mintlens-oldest-cursor` in gRPC trailers and as an HTTP header).
 */
export class FailedPreconditionError extends ApiError {
  readonly code = GrpcCode.FAILED_PRECONDITION;
  override readonly name = "FailedPreconditionError";

  constructor(
    message: string,
    readonly oldestCursor?: bigint,
  ) {
    super(message);
  }

  override httpHeaders(): Record<string, string> {
    return this.oldestCursor === undefined ? {} : { "Mintlens-Oldest-Cursor": this.oldestCursor.toString() };
  }

  override grpcTrailers(): Record<string, string> {
    return this.oldestCursor === undefined ? {} : { "mintlens-oldest-cursor": this.oldestCursor.toString() };
  }
}

/** No API key, or one that is unknown, revoked or rotated away. */
export class UnauthenticatedError extends ApiError {
  readonly code = GrpcCode.UNAUTHENTICATED;
  override readonly name = "UnauthenticatedError";

  constructor(message = "a valid API key is required (header X-API-Key, gRPC metadata x-api-key)") {
    super(message);
  }
}

/** The key's rate limit is used up: retry after `retryAfterSeconds` (a whole number, at least 1). */
export class ResourceExhaustedError extends ApiError {
  readonly code = GrpcCode.RESOURCE_EXHAUSTED;
  override readonly name = "ResourceExhaustedError";
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number, message = "rate limit exceeded") {
    super(message);
    // Retry-After takes whole seconds; rounding up never tells a client to come back too early.
    this.retryAfterSeconds = Number.isFinite(retryAfterSeconds)
      ? Math.max(1, Math.ceil(retryAfterSeconds))
      : 1;
  }

  override httpHeaders(): Record<string, string> {
    return { "Retry-After": String(this.retryAfterSeconds) };
  }
}

/** A bug. The message shown is generic; what went wrong is in `cause`, for the logs only. */
export class InternalError extends ApiError {
  readonly code = GrpcCode.INTERNAL;
  override readonly name = "InternalError";

  constructor(options?: { cause?: unknown }) {
    super("internal error", options);
  }
}

/**
 * A passing fault (the database is unreachable or failing over, or too busy to answer within the
 * statement timeout; this server's data behind the request's `minBlock`): retry later, after
 * `retryAfterSeconds` when it is known. The cause is for the logs only.
 */
export class UnavailableError extends ApiError {
  readonly code = GrpcCode.UNAVAILABLE;
  override readonly name: string = "UnavailableError";
  readonly retryAfterSeconds: number | undefined;

  constructor(options?: { cause?: unknown; message?: string; retryAfterSeconds?: number }) {
    super(options?.message ?? "the service is temporarily unavailable; retry later", options);
    const seconds = options?.retryAfterSeconds;
    this.retryAfterSeconds =
      seconds === undefined ? undefined : Number.isFinite(seconds) ? Math.max(1, Math.ceil(seconds)) : 1;
  }

  override httpHeaders(): Record<string, string> {
    return this.retryAfterSeconds === undefined ? {} : { "Retry-After": String(this.retryAfterSeconds) };
  }
}

/**
 * This server's data has not reached the request's `minBlock`, and the wait for it ended (it
 * passed, or the server is shutting down): another server, or this one later, may have it. Not a
 * fault of the server: it is not logged as one.
 */
export class BehindError extends UnavailableError {
  override readonly name = "BehindError";

  constructor(message: string, retryAfterSeconds: number) {
    super({ message, retryAfterSeconds });
  }
}

const STATEMENT_TIMEOUT_MESSAGE =
  "the query took longer than this server allows (its statement timeout): retry later, or ask for less";

/** A failure of the store seen by the API, which a retry may not meet: why it is unavailable. */
export function unavailable(error: unknown): UnavailableError {
  return statementWasCancelled(error)
    ? new UnavailableError({ cause: error, message: STATEMENT_TIMEOUT_MESSAGE })
    : new UnavailableError({ cause: error });
}

/**
 * What a client is shown for anything thrown: an ApiError as it is; a lost database connection,
 * another passing fault or a query cancelled at the statement timeout as UNAVAILABLE; anything else as INTERNAL with a generic message (the
 * original stays in `cause`, for the logs).
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (
    error instanceof TransientError ||
    classifyDatabaseError(error) === "connection" ||
    statementWasCancelled(error)
  ) {
    return unavailable(error);
  }
  return new InternalError({ cause: error });
}

/** A REST error response: status, headers and the `google.rpc.Status` JSON body. */
export interface HttpErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

export function httpErrorResponse(error: unknown): HttpErrorResponse {
  const apiError = toApiError(error);
  return { status: apiError.httpStatus, headers: apiError.httpHeaders(), body: apiError.body() };
}
