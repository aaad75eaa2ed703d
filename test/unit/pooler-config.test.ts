import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError } from "../../src/config/config.ts";
import { parseDatabasePooler, requireDirectDatabase } from "../../src/config/pooler-config.ts";

describe("--database-pooler", () => {
  test("none unless the flag or MINTLENS_DATABASE_POOLER names one; the flag wins", () => {
    assert.equal(parseDatabasePooler({}, {}), "none");
    assert.equal(parseDatabasePooler({}, { MINTLENS_DATABASE_POOLER: "transaction" }), "transaction");
    assert.equal(
      parseDatabasePooler({ databasePooler: "none" }, { MINTLENS_DATABASE_POOLER: "transaction" }),
      "none",
    );
    assert.equal(parseDatabasePooler({ databasePooler: " Transaction " }, {}), "transaction");
  });

  test("anything else is refused, naming the flag and the choices", () => {
    for (const value of ["session", "pgbouncer", "", "statement"]) {
      assert.throws(
        () => parseDatabasePooler({ databasePooler: value }, {}),
        (error: unknown) =>
          error instanceof ConfigError &&
          /--database-pooler/.test(error.message) &&
          /none, transaction/.test(error.message),
      );
    }
  });

  test("commands that keep state on their sessions refuse a transaction pooler, and only that", () => {
    assert.doesNotThrow(() => requireDirectDatabase("mintlens index", "none"));
    assert.throws(
      () => requireDirectDatabase("mintlens index", "transaction"),
      /mintlens index cannot run through a transaction pooler/,
    );
  });
});
