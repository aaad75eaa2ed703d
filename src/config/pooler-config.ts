/**
 * Whether the database URL leads through a transaction pooler (`--database-pooler`, env
 * MINTLENS_DATABASE_POOLER): `none` for a direct connection or a session pooler, `transaction`
 * for PgBouncer (or another pooler) lending each transaction whichever server connection is free.
 */
import { ConfigError } from "./config.ts";
import type { Variables } from "./environment.ts";

export type DatabasePooler = "none" | "transaction";

export interface PoolerConfigInput {
  databasePooler?: string;
}

export const POOLERS: readonly DatabasePooler[] = ["none", "transaction"];

/** The pooler named by the flag or the environment; `none` when neither names one. */
export function parseDatabasePooler(input: PoolerConfigInput, env: Variables): DatabasePooler {
  const raw = input.databasePooler ?? env.MINTLENS_DATABASE_POOLER;
  if (raw === undefined) return "none";
  const pooler = POOLERS.find((p) => p === raw.trim().toLowerCase());
  if (pooler === undefined) {
    throw new ConfigError([
      `database pooler (--database-pooler): ${raw} is not one of ${POOLERS.join(", ")}`,
    ]);
  }
  return pooler;
}

/**
 * Refuses a command that keeps state on its connections across transactions behind a transaction
 * pooler: the indexer holds each chain's lock on its session, the metadata worker sets
 * `synchronous_commit` at connection start, and migrations run in sessions of their own.
 * Those need a direct connection or a session pooler.
 */
export function requireDirectDatabase(command: string, pooler: DatabasePooler): void {
  if (pooler === "none") return;
  throw new ConfigError([
    `database pooler (--database-pooler / MINTLENS_DATABASE_POOLER): ${command} cannot run through a transaction pooler; give it a direct connection (or a session pooler) and leave the pooler to mintlens serve`,
  ]);
}
