import type postgres from "postgres";
import type { Queryable, Sql } from "./database.ts";

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
  try {
    // Executed in order now: left to their first await, they would be sent in whatever order
    // the awaits happen to run.
    const sent = [tx`BEGIN`, ...build(tx), tx`COMMIT`].map((statement) => statement.execute());
    const results = await Promise.allSettled(sent);
    const failure = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
    if (failure) throw failure.reason;
  } finally {
    tx.release();
  }
}

/** Runs statements one after the other, inside a transaction the caller holds. */
export async function runInOrder(statements: readonly Statement[]): Promise<void> {
  for (const statement of statements) await statement;
}
