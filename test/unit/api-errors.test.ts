/**
 * The API's errors: one table from gRPC codes to HTTP statuses, the google.rpc.Status body, and
 * nothing about an internal failure reaching a client.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  type ApiError,
  FailedPreconditionError,
  GrpcCode,
  HTTP_STATUS,
  httpErrorResponse,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  ResourceExhaustedError,
  toApiError,
  UnauthenticatedError,
  UnavailableError,
} from "../../src/api/errors.ts";
import { TransientError, UserFacingError } from "../../src/core/errors.ts";

describe("errors map to gRPC codes and HTTP statuses as the interface decides", () => {
  test("the table", () => {
    assert.deepEqual(
      Object.entries(HTTP_STATUS).sort(([a], [b]) => Number(a) - Number(b)),
      [
        ["3", 400],
        ["5", 404],
        ["8", 429],
        ["9", 400],
        ["13", 500],
        ["14", 503],
        ["16", 401],
      ],
    );
  });

  test("each class carries its code and status", () => {
    const cases: [ApiError, number, number][] = [
      [new InvalidArgumentError("limit", "must be at most 500"), 3, 400],
      [new NotFoundError("nft not found"), 5, 404],
      [new UnauthenticatedError(), 16, 401],
      [new ResourceExhaustedError(2), 8, 429],
      [new FailedPreconditionError("cursor 5 was pruned", 9n), 9, 400],
      [new InternalError(), 13, 500],
      [new UnavailableError(), 14, 503],
    ];
    for (const [error, code, status] of cases) {
      assert.equal(error.code, code, error.name);
      assert.equal(error.httpStatus, status, error.name);
      assert.deepEqual(httpErrorResponse(error).body, { code, message: error.message, details: [] });
    }
  });

  test("an invalid argument names its field in snake_case: '<field>: <problem>'", () => {
    const error = new InvalidArgumentError("timestamp_lt", "not an RFC 3339 timestamp");
    assert.equal(error.message, "timestamp_lt: not an RFC 3339 timestamp");
    assert.equal(error.field, "timestamp_lt");
    assert.deepEqual(httpErrorResponse(error), {
      status: 400,
      headers: {},
      body: { code: 3, message: "timestamp_lt: not an RFC 3339 timestamp", details: [] },
    });
  });

  test("a field name that is not snake_case is a bug, caught where it is made", () => {
    for (const field of ["timestampLt", "Limit", "", "group-by", "_x", "a__b", "x_"]) {
      assert.throws(() => new InvalidArgumentError(field, "bad"), TypeError, field);
    }
  });

  test("resource exhausted: Retry-After in whole seconds, rounded up, at least 1", () => {
    assert.deepEqual(httpErrorResponse(new ResourceExhaustedError(3)).headers, { "Retry-After": "3" });
    assert.equal(new ResourceExhaustedError(0.2).retryAfterSeconds, 1);
    assert.equal(new ResourceExhaustedError(1.01).retryAfterSeconds, 2);
    assert.equal(new ResourceExhaustedError(0).retryAfterSeconds, 1);
    assert.equal(new ResourceExhaustedError(Number.NaN).retryAfterSeconds, 1);
    assert.equal(httpErrorResponse(new ResourceExhaustedError(5)).status, 429);
    assert.deepEqual(httpErrorResponse(new UnavailableError()).headers, {});
  });
});

describe("what a client sees of anything thrown", () => {
  test("an ApiError passes unchanged", () => {
    const error = new NotFoundError("nft not found");
    assert.equal(toApiError(error), error);
  });

  test("a SQL error becomes INTERNAL with a generic message; the original stays in cause", () => {
    const sqlError = Object.assign(new Error('relation "collection_bucketz" does not exist'), {
      name: "PostgresError",
      code: "42P01",
      query: "SELECT * FROM collection_bucketz WHERE contract = $1",
    });
    const response = httpErrorResponse(sqlError);
    assert.deepEqual(response, {
      status: 500,
      headers: {},
      body: { code: 13, message: "internal error", details: [] },
    });
    assert.equal(toApiError(sqlError).cause, sqlError);
  });

  test("a lost database connection or a passing fault becomes UNAVAILABLE, saying nothing more", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:5432"), {
      code: "ECONNREFUSED",
      syscall: "connect",
    });
    const failover = Object.assign(new Error("terminating connection due to administrator command"), {
      name: "PostgresError",
      code: "57P01",
    });
    for (const error of [refused, failover, new TransientError("node lagging")]) {
      const response = httpErrorResponse(error);
      assert.equal(response.status, 503);
      assert.equal(response.body.code, GrpcCode.UNAVAILABLE);
      assert.equal(response.body.message, "the service is temporarily unavailable; retry later");
    }
  });

  test("a query the server cancelled at the statement timeout becomes UNAVAILABLE, saying why", () => {
    const cancelled = Object.assign(new Error("canceling statement due to statement timeout"), {
      name: "PostgresError",
      code: "57014",
      query: "SELECT holder, units FROM collection_holders WHERE contract = $1",
    });
    const response = httpErrorResponse(cancelled);
    assert.deepEqual(response, {
      status: 503,
      headers: {},
      body: {
        code: GrpcCode.UNAVAILABLE,
        message:
          "the query took longer than this server allows (its statement timeout): retry later, or ask for less",
        details: [],
      },
    });
    assert.equal(toApiError(cancelled).cause, cancelled);
  });

  test("nothing thrown, of any shape, leaks into the body", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string().map((s) => new Error(s)),
          fc.string().map((s) => new UserFacingError(s)),
          fc.string().map((s) => new TypeError(s)),
          fc.anything(),
        ),
        (thrown) => {
          const response = httpErrorResponse(thrown);
          assert.equal(response.status, 500);
          assert.deepEqual(response.body, { code: 13, message: "internal error", details: [] });
        },
      ),
    );
  });
});
