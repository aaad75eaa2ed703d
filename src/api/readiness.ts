/**
 * Whether each chain's answers are worth serving: its indexer is running (it recorded the node's
 * head recently) and is not far behind the node. Read from the store, where the indexer records
 * its heartbeat, so an API in another process (`mintlens serve`) sees the same; read at most once
 * per second however many ask, and concurrent askers share one read.
 */
import type { Logger } from "../core/logger.ts";
import type { Queryable } from "../store/pg/database.ts";
import { type ChainHead, chainHeads } from "../store/read/readiness.ts";

export interface ReadinessPolicy {
  /** Blocks the indexer may owe (indexable now, not yet indexed) and still be ready. */
  maxLagBlocks: number;
  /** The indexer's heartbeat may be this old, in seconds, and the chain still be ready. */
  maxHeartbeatAgeSeconds: number;
  /**
   * The node's head may stay at one block this long, in seconds, and the chain still be ready; 0
   * for no limit (a development chain that mines only on demand).
   */
  maxHeadStillSeconds?: number;
}

export const DEFAULT_READINESS: ReadinessPolicy = {
  maxLagBlocks: 64,
  maxHeartbeatAgeSeconds: 120,
  maxHeadStillSeconds: 600,
};

/** One chain's readiness and the figures it was judged on: the body of `/readyz`. */
export interface ChainReadiness {
  chain: string;
  chainId: number;
  ready: boolean;
  /** Why it is not ready; empty when it is. */
  reasons: string[];
  indexedBlock?: number;
  headBlock?: number;
  confirmations?: number;
  /** Blocks the node's head less the confirmations is above the indexed height (0 when not above). */
  lagBlocks?: number;
  heartbeatAgeSeconds?: number;
  /** Seconds the node's head has stayed at `headBlock`. */
  headStillSeconds?: number;
  maxLagBlocks: number;
  maxHeartbeatAgeSeconds: number;
  /** 0: no limit. */
  maxHeadStillSeconds: number;
}

export interface ReadinessChain {
  name: string;
  chainId: number;
  policy: ReadinessPolicy;
  /** The database the chain's data is read from, when not the readiness's own `sql`. */
  sql?: Queryable;
}

/** Judges one chain by what the store holds of it; `head` undefined when the read failed or found no row. */
export function judgeChain(
  chain: ReadinessChain,
  head: ChainHead | undefined,
  failure?: "unreadable",
): ChainReadiness {
  const { maxLagBlocks, maxHeartbeatAgeSeconds, maxHeadStillSeconds = 0 } = chain.policy;
  const judged: ChainReadiness = {
    chain: chain.name,
    chainId: chain.chainId,
    ready: false,
    reasons: [],
    maxLagBlocks,
    maxHeartbeatAgeSeconds,
    maxHeadStillSeconds,
  };
  if (failure === "unreadable") {
    judged.reasons.push("the store cannot be read");
    return judged;
  }
  if (head === undefined) {
    judged.reasons.push("the chain is not in the store");
    return judged;
  }
  judged.indexedBlock = head.indexedBlock;
  if (head.headBlock === undefined || head.heartbeatAgeSeconds === undefined) {
    judged.reasons.push("no indexer has recorded the node's head yet");
    return judged;
  }
  const confirmations = head.confirmations ?? 0;
  const lag = Math.max(0, head.headBlock - confirmations - head.indexedBlock);
  const age = Math.round(head.heartbeatAgeSeconds * 10) / 10;
  Object.assign(judged, {
    headBlock: head.headBlock,
    confirmations,
    lagBlocks: lag,
    heartbeatAgeSeconds: age,
  });
  if (head.heartbeatAgeSeconds > maxHeartbeatAgeSeconds) {
    judged.reasons.push(
      `the indexer last recorded the node's head ${age} s ago (more than ${maxHeartbeatAgeSeconds} s): it is not running, or cannot reach the node or the store`,
    );
  }
  if (head.headStillSeconds !== undefined) {
    const still = Math.round(head.headStillSeconds * 10) / 10;
    judged.headStillSeconds = still;
    if (maxHeadStillSeconds > 0 && head.headStillSeconds > maxHeadStillSeconds) {
      judged.reasons.push(
        `the node's head has stayed at block ${head.headBlock} for ${still} s (more than ${maxHeadStillSeconds} s): the node is not following its chain`,
      );
    }
  }
  if (lag > maxLagBlocks) {
    judged.reasons.push(
      `the indexer is ${lag} blocks behind the node's head less ${confirmations} confirmations (more than ${maxLagBlocks})`,
    );
  }
  judged.ready = judged.reasons.length === 0;
  return judged;
}

export interface Readiness {
  /** Every chain's readiness by chain id, read when the last read is older than `maxAgeMs`. */
  current(): Promise<ReadonlyMap<number, ChainReadiness>>;
  /** The last read's judgement of a chain, without waiting; starts a read when it is stale. */
  latest(chainId: number): ChainReadiness | undefined;
  /** Called with every new read. */
  subscribe(listener: (judged: ReadonlyMap<number, ChainReadiness>) => void): void;
}

export const READINESS_MAX_AGE_MS = 1_000;

export function createReadiness(options: {
  sql: Queryable;
  chains: readonly ReadinessChain[];
  logger: Logger;
  maxAgeMs?: number;
}): Readiness {
  const { sql, chains, logger } = options;
  const maxAgeMs = options.maxAgeMs ?? READINESS_MAX_AGE_MS;
  const listeners: ((judged: ReadonlyMap<number, ChainReadiness>) => void)[] = [];
  let value: ReadonlyMap<number, ChainReadiness> | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<ReadonlyMap<number, ChainReadiness>> | undefined;

  // One read per database: a chain whose database cannot be read leaves the others ready.
  const byDatabase = new Map<Queryable, ReadinessChain[]>();
  for (const chain of chains) {
    const database = chain.sql ?? sql;
    byDatabase.set(database, [...(byDatabase.get(database) ?? []), chain]);
  }
  const readGroup = async (database: Queryable, group: readonly ReadinessChain[]) => {
    try {
      const heads = await chainHeads(
        database,
        group.map((c) => c.chainId),
      );
      return group.map((c) =>
        judgeChain(
          c,
          heads.find((h) => h.chainId === c.chainId),
        ),
      );
    } catch (error) {
      logger.warn({ err: error }, "reading the chains' readiness failed");
      return group.map((c) => judgeChain(c, undefined, "unreadable"));
    }
  };

  const read = async (): Promise<ReadonlyMap<number, ChainReadiness>> => {
    const judged = await Promise.all([...byDatabase].map(([database, group]) => readGroup(database, group)));
    return new Map(judged.flat().map((j) => [j.chainId, j]));
  };

  const refresh = (): Promise<ReadonlyMap<number, ChainReadiness>> => {
    pending ??= read()
      .then((judged) => {
        value = judged;
        // Timed from the end of the read: a slow store is not asked again at once.
        readAt = performance.now();
        for (const listener of listeners) listener(judged);
        return judged;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };

  const fresh = () => value !== undefined && performance.now() - readAt < maxAgeMs;

  return {
    current() {
      return fresh() && value !== undefined ? Promise.resolve(value) : refresh();
    },
    latest(chainId) {
      if (!fresh()) void refresh();
      return value?.get(chainId);
    },
    subscribe(listener) {
      listeners.push(listener);
    },
  };
}
