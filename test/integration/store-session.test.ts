import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { classifyDatabaseError } from "../../src/store/pg/errors.ts";
import { openWriteSession, type WriteSession } from "../../src/store/pg/session.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const CHAIN_ID = 424242;

describe("the write session", () => {
  let db: TestDatabase;
  const sessions: WriteSession[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  const open = (lockChain?: number) => {
    const session = openWriteSession(db.sql, lockChain === undefined ? {} : { lockChain });
    sessions.push(session);
    return session;
  };
  /** Ends every connection of this test's database but the pool's own, as a failover would. */
  const terminateSessions = async () => {
    const ended = await db.sql`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'postgres.js'`;
    return ended.length;
  };
  const count = async (table: string) => {
    const [row] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${db.sql(table)}`;
    return Number(row?.n);
  };

  before(async () => {
    db = await createTestDatabase();
    await db.sql`CREATE TABLE session_rows (n integer PRIMARY KEY, filler text)`;
    process.on("uncaughtException", onUncaught);
  });
  after(async () => {
    process.off("uncaughtException", onUncaught);
    for (const session of sessions) await session.end().catch(() => {});
    await db?.close();
    await stopTestServer();
  });

  test("chains whose ids agree in their low bits hold locks of their own, each checked by its writes", async () => {
    // Ids 2^31 apart, 2^32 apart, and one over 2^32 whose low half is negative as a signed integer.
    const ids = [5, 5 + 2 ** 31, 5 + 2 ** 32, 11_297_108_109, 2 ** 53 - 1];
    const locked = ids.map((id) => open(id));
    for (const session of locked) assert.equal(await session.ensureLocked(), true);
    for (const [i, id] of ids.entries()) {
      assert.equal(await open(id).ensureLocked(), false, `chain ${id} is locked once`);
      await (locked[i] as WriteSession).pipelined((tx) => [tx`INSERT INTO session_rows VALUES (${i}, '')`]);
    }
    assert.equal(await count("session_rows"), ids.length);
    await db.sql`TRUNCATE session_rows`;
  });

  test("a connection the server ended while idle is replaced before the next write", async () => {
    const session = open();
    await session.pipelined((tx) => [tx`INSERT INTO session_rows VALUES (1, '')`]);
    assert.ok((await terminateSessions()) >= 1, "the session's connection was terminated");
    await sleep(50);
    await session.pipelined((tx) => [tx`INSERT INTO session_rows VALUES (2, '')`]);
    await session.transaction(async (tx) => {
      await tx`INSERT INTO session_rows VALUES (3, '')`;
    });
    assert.equal(await count("session_rows"), 3);
    assert.deepEqual(uncaught, []);
    await db.sql`TRUNCATE session_rows`;
  });

  test("a connection ended in the middle of a large pipelined write fails it as a connection failure, commits nothing, and the next write succeeds", async () => {
    const session = open();
    // Enough statements and bytes that postgres.js still queues some when the server ends the
    // connection: those are dropped, never sent on another connection outside the transaction.
    const filler = "x".repeat(20_000);
    // Its failure is taken as it comes: the write may fail before the termination's own answer arrives.
    const write = session
      .pipelined((tx) => [
        tx`SELECT pg_sleep(0.3)`,
        ...Array.from({ length: 400 }, (_, i) => tx`INSERT INTO session_rows VALUES (${i}, ${filler})`),
      ])
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    await sleep(100);
    assert.ok((await terminateSessions()) >= 1);
    const failure = await write;
    assert.equal(classifyDatabaseError(failure), "connection", `a connection failure: ${String(failure)}`);
    await sleep(200);
    assert.equal(await count("session_rows"), 0, "nothing of the failed transaction was committed");
    await session.pipelined((tx) => [tx`INSERT INTO session_rows VALUES (1000, '')`]);
    assert.equal(await count("session_rows"), 1);
    assert.deepEqual(uncaught, []);
    await db.sql`TRUNCATE session_rows`;
  });

  test("a failing statement inside a transaction rolls it back and leaves the connection usable", async () => {
    const session = open();
    await assert.rejects(
      session.transaction(async (tx) => {
        await tx`INSERT INTO session_rows VALUES (1, '')`;
        await tx`INSERT INTO session_rows VALUES (1, '')`;
      }),
      (error: Error & { code?: string }) => error.code === "23505",
    );
    await session.transaction(async (tx) => {
      await tx`INSERT INTO session_rows VALUES (2, '')`;
    });
    assert.equal(await count("session_rows"), 1);
    await db.sql`TRUNCATE session_rows`;
  });

  test("the chain lock: one holder at a time, lost with its connection, and a write without it is refused", async () => {
    const first = open(CHAIN_ID);
    const second = open(CHAIN_ID);
    assert.equal(await first.ensureLocked(), true);
    assert.equal(await first.ensureLocked(), true, "taking it again while held is idempotent");
    assert.equal(await second.ensureLocked(), false, "a second indexer of the same chain is refused");
    await first.pipelined((tx) => [tx`INSERT INTO session_rows VALUES (1, '')`]);

    await terminateSessions();
    await sleep(50);
    assert.equal(await second.ensureLocked(), true, "the lock went with the first session's connection");
    const refused = await first
      .pipelined((tx) => [tx`INSERT INTO session_rows VALUES (2, '')`])
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.equal(
      (refused as { code?: string } | undefined)?.code,
      "55P03",
      "the first session's write is refused",
    );
    assert.equal(await first.ensureLocked(), false, "and it cannot take the lock back");
    await second.pipelined((tx) => [tx`INSERT INTO session_rows VALUES (3, '')`]);
    assert.deepEqual(
      (await db.sql<{ n: number }[]>`SELECT n FROM session_rows ORDER BY n`).map((r) => r.n),
      [1, 3],
    );
    await second.end();
    assert.equal(await first.ensureLocked(), true, "ending a session releases its lock");
    await db.sql`TRUNCATE session_rows`;
  });
});
