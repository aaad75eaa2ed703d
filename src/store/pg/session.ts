import type postgres from "postgres";
import { openClientLike, type Queryable, type Sql } from "./database.ts";
import { connectionIsGone } from "./errors.ts";

/** A statement built but not sent yet (postgres.js queries run when first awaited or executed). */
export type Statement = postgres.PendingQuery<postgres.Row[]>;

/** Advisory-lock namespace of the per-chain indexer lock (an arbitrary constant of this project). */
const INDEXER_LOCK_SPACE = 0x6d6c6e73;

/**
 * The two 32-bit halves of a chain's advisory lock. A chain id has up to 53 bits: its low 32 are
 * the key and the rest are folded into the namespace, so two chains never share a lock (the
 * remainder of the id by 2^31 did, for ids that far apart).
 */
export function chainLockKeys(chainId: number): { space: number; key: number } {
  if (!Number.isSafeInteger(chainId) || chainId < 0) throw new RangeError(`not a chain id: ${chainId}`);
  const high = Math.floor(chainId / 2 ** 32);
  // PostgreSQL takes the halves as signed 32-bit integers: `| 0` wraps the low half into that range.
  return { space: INDEXER_LOCK_SPACE ^ high, key: (chainId % 2 ** 32) | 0 };
}

/**
 * The one connection a chain's indexer writes through, holding the chain's lock.
 *
 * It is a client of its own, not a connection borrowed from the shared pool: postgres.js hands a
 * borrowed connection back to the pool even when the server has ended it (and then writes to its
 * dead socket from a timer, which no caller can catch), may lend it to another query when its
 * socket drains, and replays queued queries on a new connection, outside the transaction they
 * were sent in. Here, the moment the connection is lost, its client is ended and the next write
 * opens a new one: a statement is never sent to a dead connection nor run outside its transaction.
 *
 * The lock is a session-level advisory lock on this same connection, so a killed indexer never
 * leaves it behind, and a lost connection loses it: it is taken again on the new connection
 * before the next write, unless another indexer took it meanwhile. Every transaction first checks
 * on the server that its connection holds the lock, so a lock lost between two checks can never
 * let two writers interleave.
 */
export interface WriteSession {
  /** Takes the chain lock, again if the connection was replaced. False when another indexer holds it. */
  ensureLocked(): Promise<boolean>;
  /**
   * Runs statements as one transaction, all sent at once: the server works through BEGIN, the
   * statements and COMMIT back to back, without waiting for this process between them, which
   * may be busy decoding the next batch. If one fails, those after it fail too (the transaction
   * is aborted), COMMIT ends it as a rollback, and the first failure is thrown.
   */
  pipelined(build: (tx: Queryable) => Statement[]): Promise<void>;
  /** Runs `work` inside a transaction, for writes that need to read as they go. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Closes the connection, which releases the lock. */
  end(): Promise<void>;
}

interface Connection {
  client: Sql;
  tx: postgres.ReservedSql;
  /** Cleared by postgres.js's close callback: the server or the network ended the connection. */
  open: boolean;
  /** Told when that happens; each removes itself once its wait is over. */
  onClosed: Set<(error: unknown) => void>;
  locked: boolean;
}

/** `lockChain`: the chain whose lock every transaction requires (none for tools and tests). */
export function openWriteSession(pool: Sql, options: { lockChain?: number } = {}): WriteSession {
  const lock = options.lockChain === undefined ? undefined : chainLockKeys(options.lockChain);
  let current: Connection | undefined;
  let ended = false;

  const connect = async (): Promise<Connection> => {
    if (current?.open) return current;
    if (current) void discard(current);
    if (ended) throw new Error("the write session has ended");
    const state = { open: true, onClosed: new Set<(error: unknown) => void>() };
    const client = openClientLike(pool, {
      max: 1,
      idle_timeout: 0,
      max_lifetime: 0,
      onclose: () => {
        state.open = false;
        for (const told of state.onClosed) told(connectionClosed());
        state.onClosed.clear();
      },
    });
    try {
      const tx = await orClosed(state, client.reserve());
      current = Object.assign(state, { client, tx, locked: false });
      return current;
    } catch (error) {
      void client.end({ timeout: 0 }).catch(() => {});
      throw error;
    }
  };

  /** Ends a connection that failed: statements it still queues are dropped, never sent elsewhere. */
  const discard = async (connection: Connection) => {
    connection.open = false;
    if (current === connection) current = undefined;
    await connection.client.end({ timeout: 0 }).catch(() => {});
  };

  const afterFailure = async (connection: Connection, error: unknown) => {
    if (!connection.open || connectionIsGone(error)) await discard(connection);
  };

  const requireLock = (tx: Queryable): Statement[] =>
    lock === undefined
      ? []
      : [tx`SELECT mintlens_require_chain_lock(${lock.space}, ${lock.key}, pg_backend_pid())`];

  return {
    async ensureLocked() {
      if (lock === undefined) throw new Error("this write session has no chain lock");
      const connection = await connect();
      if (connection.locked) return true;
      try {
        const [row] = await orClosed(
          connection,
          connection.tx<{ locked: boolean }[]>`
          SELECT pg_try_advisory_lock(${lock.space}, ${lock.key}) AS locked`.execute(),
        );
        connection.locked = row?.locked === true;
        return connection.locked;
      } catch (error) {
        await afterFailure(connection, error);
        throw error;
      }
    },

    async pipelined(build) {
      const connection = await connect();
      const { tx } = connection;
      // Executed in order now: left to their first await, they would be sent in whatever order
      // the awaits happen to run.
      const sent = [tx`BEGIN`, ...requireLock(tx), ...build(tx), tx`COMMIT`].map((statement) =>
        statement.execute(),
      );
      // A statement postgres.js still queued when the connection closed is never settled.
      const failure = await orClosed(connection, firstFailure(sent)).catch((error: unknown) => ({ error }));
      if (failure !== undefined) {
        await afterFailure(connection, failure.error);
        throw failure.error;
      }
    },

    async transaction(work) {
      const connection = await connect();
      const { tx } = connection;
      try {
        const result = await orClosed(
          connection,
          (async () => {
            await tx`BEGIN`;
            for (const statement of requireLock(tx)) await statement;
            const done = await work(whileOpen(connection));
            await tx`COMMIT`;
            return done;
          })(),
        );
        return result;
      } catch (error) {
        if (connection.open && !connectionIsGone(error)) {
          await orClosed(connection, tx`ROLLBACK`.execute()).catch((rollbackFailure: unknown) =>
            afterFailure(connection, rollbackFailure),
          );
        } else {
          await discard(connection);
        }
        throw error;
      }
    },

    async end() {
      ended = true;
      const connection = current;
      current = undefined;
      if (!connection) return;
      // A connection still reserved is one postgres.js's end() waits for until its timeout: the
      // session is idle between its transactions, so it is handed back to be closed at once.
      if (connection.open) connection.tx.release();
      await connection.client.end({ timeout: 5 });
    },
  };
}

/**
 * The transaction's handle, refusing statements once the connection has closed: postgres.js would
 * write them to the closed socket from a timer, where the failure is thrown out of reach of any
 * caller. Statements are checked as they are made, and those awaited at once are sent at once.
 */
function whileOpen(connection: Connection): Queryable {
  return new Proxy(connection.tx, {
    apply(target, self, args) {
      if (!connection.open) throw connectionClosed();
      return Reflect.apply(target, self, args);
    },
  });
}

/**
 * `work` on a connection, or the connection's closing if that comes first: postgres.js never
 * settles a query it still queued when its connection closed, and a caller awaiting one would
 * wait for ever (with nothing else to do, the process would exit mid-await).
 */
function orClosed<T>(connection: Pick<Connection, "open" | "onClosed">, work: Promise<T>): Promise<T> {
  if (!connection.open) {
    work.catch(() => {});
    return Promise.reject(connectionClosed());
  }
  // A listener rather than a race with a promise of the close: every race would leave a reaction
  // on that promise for as long as the connection lives, one per batch of a long backfill.
  return new Promise<T>((resolve, reject) => {
    connection.onClosed.add(reject);
    work.then(
      (value) => {
        connection.onClosed.delete(reject);
        resolve(value);
      },
      (error: unknown) => {
        connection.onClosed.delete(reject);
        reject(error);
      },
    );
  });
}

/** Shaped like postgres.js's own error for a connection that closed, and classified the same. */
function connectionClosed(): Error {
  return Object.assign(new Error("the database connection closed"), { code: "CONNECTION_CLOSED" });
}

/**
 * Waits for every statement, and gives the first failure. When the connection is gone, statements
 * postgres.js had not written yet are never settled: the first such failure ends the wait.
 */
function firstFailure(sent: ReadonlyArray<Promise<unknown>>): Promise<{ error: unknown } | undefined> {
  return new Promise((resolve) => {
    let pending = sent.length;
    let first: { error: unknown } | undefined;
    const done = () => {
      if (--pending === 0) resolve(first);
    };
    for (const statement of sent) {
      statement.then(done, (error: unknown) => {
        first ??= { error };
        if (connectionIsGone(error)) resolve(first);
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
