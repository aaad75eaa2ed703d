/**
 * The spam job of one chain: finds the contracts whose activity changed since their verdict, judges
 * a bounded number of them per pass, and stores their verdicts. It runs beside the chain's indexer
 * (src/cli/run-indexers.ts): a pass right after another while work is waiting, else one every
 * `intervalMs`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { errorMessage } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { Sql } from "../store/pg/database.ts";
import {
  contractFacts,
  markChangedContracts,
  pendingContracts,
  sellingCollections,
  storeVerdicts,
} from "../store/tables/spam.ts";
import {
  EDITION_HOLDERS,
  judgeContract,
  KNOWN_MIN_SALES,
  knownCollection,
  SPRAY_RECIPIENTS,
} from "./score.ts";

export interface SpamPassLimits {
  /** Contracts judged per pass. */
  contracts: number;
  /** Blocks whose transfers are looked at per pass. */
  blocks: number;
  /** Token documents looked at per pass. */
  documents: number;
  /** Verdicts older than `staleAfterMs` judged again per pass, changed or not. */
  stale: number;
  staleAfterMs: number;
}

/**
 * A pass reads at most 200 contracts' facts (each scan bounded, see src/store/tables/spam.ts), the
 * transfers of 5,000 blocks and 20,000 documents: a few hundred milliseconds on a busy store.
 */
export const DEFAULT_PASS_LIMITS: SpamPassLimits = {
  contracts: 200,
  blocks: 5_000,
  documents: 20_000,
  stale: 50,
  staleAfterMs: 24 * 3_600_000,
};

/** Seconds between passes once nothing is waiting: a verdict follows its contract's activity within it. */
export const DEFAULT_SPAM_INTERVAL_MS = 10_000;

export interface SpamPassResult {
  /** Contracts judged, and how many of them are spam. */
  judged: number;
  spam: number;
  /** Whether work was left for the next pass (the pass hit one of its limits). */
  more: boolean;
}

/** One pass: mark the changed contracts, judge up to `limits.contracts` pending ones, store their verdicts. */
export async function runSpamPass(
  sql: Sql,
  chainId: number,
  limits: SpamPassLimits = DEFAULT_PASS_LIMITS,
): Promise<SpamPassResult> {
  const changed = await markChangedContracts(sql, chainId, {
    maxBlocks: limits.blocks,
    maxDocuments: limits.documents,
    stale: limits.stale,
    staleAfterMs: limits.staleAfterMs,
  });
  const pending = await pendingContracts(sql, chainId, limits.contracts);
  if (pending.length === 0) {
    return { judged: 0, spam: 0, more: changed.toBlock - changed.fromBlock >= limits.blocks };
  }
  const known = (await sellingCollections(sql, chainId, KNOWN_MIN_SALES)).map((k) =>
    knownCollection(k.contract, k.name, k.organicSales),
  );
  const thresholds = { sprayRecipients: SPRAY_RECIPIENTS, editionHolders: EDITION_HOLDERS };
  const verdicts = [];
  for (const contract of pending) {
    const verdict = judgeContract(await contractFacts(sql, chainId, contract, thresholds), known);
    verdicts.push({ contract, ...verdict });
  }
  await storeVerdicts(sql, chainId, verdicts);
  return {
    judged: verdicts.length,
    spam: verdicts.filter((v) => v.isSpam).length,
    more:
      pending.length >= limits.contracts ||
      changed.toBlock - changed.fromBlock >= limits.blocks ||
      changed.documents >= limits.documents,
  };
}

/** Passes until `signal` aborts; a failed pass is logged and tried again at the next interval. */
export async function runSpamJob(
  options: {
    sql: Sql;
    chainId: number;
    logger: Logger;
    intervalMs?: number;
    limits?: SpamPassLimits;
  },
  signal: AbortSignal,
): Promise<void> {
  const interval = options.intervalMs ?? DEFAULT_SPAM_INTERVAL_MS;
  while (!signal.aborted) {
    let wait = interval;
    try {
      const pass = await runSpamPass(options.sql, options.chainId, options.limits);
      if (pass.judged > 0) options.logger.debug({ ...pass }, "spam verdicts stored");
      // Work left: the next pass soon, with a breath for the indexer's own statements.
      if (pass.more) wait = 100;
    } catch (error) {
      if (signal.aborted) return;
      options.logger.warn(`the spam pass failed: ${errorMessage(error)}; trying again`);
    }
    await sleep(wait, undefined, { signal }).catch(() => {});
  }
}
