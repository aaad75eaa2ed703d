/**
 * The API's statement timeout: a query the server cancels because it ran too long (here, waiting
 * for a table another connection holds locked) is answered UNAVAILABLE / 503 with a message that
 * says so, over REST and gRPC alike, and the API answers again once the table is free.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { ReservedSql } from "postgres";
import { UnavailableError } from "../../src/api/errors.ts";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier } from "../../src/api/key-verifier.ts";
import { connectDatabase } from "../../src/store/pg/database.ts";
import { type ApiFixture, startApiFixture } from "../support/api-fixture.ts";

const TIMEOUT_MESSAGE =
  "the query took longer than this server allows (its statement timeout): retry later, or ask for less";

let f: ApiFixture;
let contract: string;

before(async () => {
  f = await startApiFixture({ days: 2, seed: "timeout", statementTimeoutMs: 1000 });
  const [holders] = await f.sql<{ a: string }[]>`
    SELECT '0x' || encode(contract, 'hex') AS a FROM collection_holders GROUP BY contract ORDER BY count(*) DESC LIMIT 1`;
  assert.ok(holders, "a collection with holders");
  contract = holders.a;
});

after(async () => {
  await f?.close();
});

/** Holds `table` locked against every reader until `release`. */
async function lockTable(table: string): Promise<{ release(): Promise<void> }> {
  const locker: ReservedSql = await f.sql.reserve();
  await locker`BEGIN`;
  await locker.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  return {
    async release() {
      await locker`COMMIT`;
      locker.release();
    },
  };
}

describe("a query cancelled at the API's statement timeout", () => {
  test("REST: 503 with the reason, then answers again", async () => {
    const path = `/collections/v1beta2/${contract}/owners_list?limit=7`;
    const lock = await lockTable("collection_holders");
    try {
      const answer = await f.rest(path);
      assert.equal(answer.status, 503, answer.text);
      assert.deepEqual(answer.body, { code: 14, message: TIMEOUT_MESSAGE, details: [] });
    } finally {
      await lock.release();
    }
    const again = await f.rest(path);
    assert.equal(again.status, 200, again.text);
    assert.equal((again.body as { owner: unknown[] }).owner.length, 7);
  });

  test("gRPC: UNAVAILABLE with the reason, then answers again", async () => {
    const request = { contractAddress: contract, limit: 6 };
    const lock = await lockTable("collection_holders");
    try {
      const { error } = await f.grpc("CollectionsService", "ListCollectionOwners", request);
      assert.equal(error?.code, grpc.status.UNAVAILABLE, String(error));
      assert.equal(error?.details, TIMEOUT_MESSAGE);
    } finally {
      await lock.release();
    }
    const { error, response } = await f.grpc("CollectionsService", "ListCollectionOwners", request);
    assert.equal(error, null);
    assert.equal((response?.owner as unknown[] | undefined)?.length, 6);
  });

  test("the key check too: a table not read in time is unavailable, not refused; one read already answers", async () => {
    const key = await f.newKey("late");
    const timed = await connectDatabase(f.db.url, { statementTimeoutMs: 1000 });
    const lock = await lockTable("api_keys");
    try {
      // A process starting now cannot read the table: its requests are unavailable, with the reason.
      const starting = createGuard({ keys: createKeyVerifier({ sql: timed }), pointsPerSecond: 0 });
      await assert.rejects(starting.admit(key, "127.0.0.1"), (error) => {
        assert.ok(error instanceof UnavailableError);
        assert.equal(error.message, TIMEOUT_MESSAGE);
        return true;
      });
      // The running API holds the table in memory: the lock costs it nothing.
      const answer = await f.rest(`/collections/v1beta2/${contract}/owners_list?limit=5`, { key });
      assert.equal(answer.status, 200, answer.text);
      const { error } = await f.grpc(
        "CollectionsService",
        "ListCollectionOwners",
        { contractAddress: contract, limit: 5 },
        { key },
      );
      assert.equal(error, null);
    } finally {
      await lock.release();
      await timed.end({ timeout: 5 });
    }
  });
});
