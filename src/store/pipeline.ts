import type postgres from "postgres";
import type { Queryable, Sql } from "./database.ts";
import { connectionIsGone } from "./errors.ts";

/** A statement built but not sent yet (postgres.js queries run when first awaited or executed). */
export type Statement = postgres.PendingQuery<postgres.Row[]>;

/**
 * Runs statements as one transaction, all sent at once: the server works through BEGIN, the
 * statements and COMMIT back to back, without waiting for this process between them, which
 * may be busy decoding the next batch. If one fails, those after it fail too (the transaction
 * is aborted), COMMIT ends it as a rollback, and the first failure is thrown.
 */
export async function pipelinedTransaction(sql: Sql, build: (tx: Queryable) => Statement[]): Promise<void> {
  const tx = await sql.reserve();
  let gone = false;
  try {
    // Executed in order now: left to their first await, they would be sent in whatever order
    // the awaits happen to run.
    const sent = [tx`BEGIN`, ...build(tx), tx`COMMIT`].map((statement) => statement.execute());
    const failure = await firstFailure(sent);
    if (failure !== undefined) {
      gone = connectionIsGone(failure);
      throw failure;
    }
  } finally {
    if (!gone) tx.release();
  }
}

/**
 * Waits for every statement, and gives the first failure. When the connection is gone, statements
 * postgres.js had not written yet are never settled: the first such failure ends the wait.
 */
function firstFailure(sent: ReadonlyArray<Promise<unknown>>): Promise<unknown> {
  return new Promise((resolve) => {
    let pending = sent.length;
    let first: { error: unknown } | undefined;
    const done = () => {
      if (--pending === 0) resolve(first?.error);
    };
    for (const statement of sent) {
      statement.then(done, (error: unknown) => {
        first ??= { error };
        if (connectionIsGone(error)) resolve(first.error);
        done();
      });
    }
    if (sent.length === 0) resolve(undefined);
  });
}

/** Runs statements one after the other, inside a transaction the caller holds. */
export async function runInOrder(statements: readonly Statement[]): Promise<void> {
  for (const statement of statements) await statement;
}
