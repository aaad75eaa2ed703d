/**
 * Builds a store of the scale benchmark through the indexer's own writers: the market's chain is
 * played day by day (`dailySchedule`), batch by batch, through the contract registry and the batch
 * pipeline with every projection, as `bench:api` loads its market. Each batch commits with its
 * checkpoint, so a killed build continues from the checkpoint: the chain is played again up to it
 * without writing (the generator is a pure function of the seed), and writing resumes there.
 * Once the history is written, the chain that continues it is drawn and saved beside the store.
 */

import type { FetchedBatch } from "../../src/indexer/batch.ts";
import { connectDatabase, type Queryable, type Sql } from "../../src/store/pg/database.ts";
import { migrate } from "../../src/store/pg/migrate.ts";
import { ensureChain } from "../../src/store/tables/chain-state.ts";
import { SyntheticChain } from "../bench-api/chain.ts";
import { dailySchedule } from "../bench-api/daily-schedule.ts";
import { commitBatches, marketWriter } from "../bench-api/dataset.ts";
import { BLOCK_SECONDS } from "../bench-api/market.ts";
import { type ContinuationSpec, continuationChain } from "./continuation.ts";
import { started } from "./running.ts";
import { scaleMarket, scaleShape } from "./shape.ts";
import { type BuildSession, CHAIN_ID, CHAIN_NAME, type ScaleStore, type StoreMeta } from "./store.ts";

export interface BuildOptions {
  transfers: number;
  seed: string;
  batchRows: number;
  continuation: ContinuationSpec;
  log: (message: string) => void;
}

export async function buildStore(store: ScaleStore, options: BuildOptions): Promise<StoreMeta> {
  const { log } = options;
  let meta = store.meta();
  if (meta === undefined) {
    const shape = scaleShape(options.transfers);
    const end = Math.floor(Date.now() / 1000);
    const market = scaleMarket(shape, options.seed, end);
    meta = {
      shape,
      seed: options.seed,
      end,
      builtHead: Math.floor((end - market.genesisTime) / BLOCK_SECONDS),
      batchRows: options.batchRows,
      sessions: [],
    };
    store.saveMeta(meta);
  } else if (meta.seed !== options.seed) {
    throw new Error(`${store.dir} was built with --seed ${meta.seed}; remove it to build another`);
  }
  const server = await started(store.open(log));
  try {
    await migrate(server.url);
    const sql = await connectDatabase(server.url, { max: 4 });
    try {
      let chain = meta.complete ? undefined : await writeHistory(sql, store, meta, log);
      if (store.continuation() === undefined) {
        log("drawing the chain that continues the store");
        chain ??= playedHistory(meta);
        const { batches, transfers } = continuationChain(chain, meta, options.continuation);
        store.saveContinuation(batches);
        log(
          `  ${batches.length} batches of fifteen minutes, ${transfers.toLocaleString("en")} NFT transfers`,
        );
      }
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await server.stop();
  }
  return meta;
}

/** The market's chain from its genesis, its head far past the built history so that it can go on. */
export function marketChain(meta: StoreMeta): {
  chain: SyntheticChain;
  market: ReturnType<typeof scaleMarket>;
} {
  const market = scaleMarket(meta.shape, meta.seed, meta.end);
  const until = meta.end + 3 * 365 * 86_400;
  const chain = new SyntheticChain(market, dailySchedule(market, until), { until });
  return { chain, market };
}

/** Writes the history up to the built head; returns the chain, at its state there. */
async function writeHistory(
  sql: Sql,
  store: ScaleStore,
  meta: StoreMeta,
  log: (m: string) => void,
): Promise<SyntheticChain> {
  const { chain, market } = marketChain(meta);
  const { nextBlock: next } = await ensureChain(sql, {
    chainId: CHAIN_ID,
    name: CHAIN_NAME,
    nativeSymbol: "ETH",
    startBlock: 0,
  });
  const nextBatch = () => chain.next(meta.batchRows, meta.builtHead);
  let first: FetchedBatch | undefined = nextBatch();
  if (next > 0) {
    log(
      `the store holds blocks up to ${(next - 1).toLocaleString("en")}: playing the chain up to there again`,
    );
    while (first && first.to < next) first = nextBatch();
    if (first && first.from !== next)
      throw new Error(
        `the store's checkpoint ${next} is not a batch boundary: was it built with other settings?`,
      );
  }
  const counted = await rowWrites(sql);
  const transfersBefore = await storedTransfers(sql);
  const started = performance.now();
  let reported = started;
  let written = 0;
  let batches = 0;
  const say = (done: boolean) => {
    const seconds = (performance.now() - started) / 1000;
    const total = transfersBefore + written;
    log(
      `  ${done ? "written" : "writing"}: ${total.toLocaleString("en")} of about ${meta.shape.transfers.toLocaleString("en")} NFT transfers ` +
        `(block ${(chain.totals.blocks - 1).toLocaleString("en")} of ${meta.builtHead.toLocaleString("en")}); ` +
        `${written.toLocaleString("en")} in ${seconds.toFixed(0)} s, ${Math.round(written / Math.max(seconds, 1e-3)).toLocaleString("en")}/s`,
    );
  };
  await commitBatches(sql, {
    chainId: CHAIN_ID,
    writer: marketWriter(sql, CHAIN_ID, market),
    next: () => {
      const batch = first ?? nextBatch();
      first = undefined;
      return batch;
    },
    start: next,
    analyzedAt: transfersBefore,
    onBatch(batch) {
      written += batch.nft.length;
      batches++;
      if (performance.now() - reported > 30_000) {
        reported = performance.now();
        say(false);
      }
    },
  });
  say(true);
  const seconds = (performance.now() - started) / 1000;
  const after = await rowWrites(sql);
  const session: BuildSession = {
    startedAt: new Date(Date.now() - seconds * 1000).toISOString(),
    seconds,
    transfers: written,
    batches,
    inserted: after.inserted - counted.inserted,
    updated: after.updated - counted.updated,
    deleted: after.deleted - counted.deleted,
  };
  meta.sessions.push(session);
  store.saveMeta(meta);
  log("VACUUM ANALYZE");
  const vacuumStarted = performance.now();
  await sql`VACUUM ANALYZE`;
  const { blocks: _, ...totals } = { ...chain.totals };
  meta.complete = {
    at: new Date().toISOString(),
    vacuumSeconds: (performance.now() - vacuumStarted) / 1000,
    totals,
  };
  store.saveMeta(meta);
  return chain;
}

/** The history played again without writing: the continuation starts from its last state. */
function playedHistory(meta: StoreMeta): SyntheticChain {
  const { chain } = marketChain(meta);
  while (chain.next(1_000_000, meta.builtHead)) {}
  return chain;
}

async function storedTransfers(sql: Queryable): Promise<number> {
  const [row] = await sql<
    { n: string }[]
  >`SELECT count(*) AS n FROM nft_transfers WHERE chain_id = ${CHAIN_ID}`;
  return Number(row?.n ?? 0);
}

/** Rows inserted, updated and deleted so far in the database's tables, by PostgreSQL's statistics. */
export async function rowWrites(
  sql: Queryable,
): Promise<{ inserted: number; updated: number; deleted: number }> {
  // Each backend reports its counts when its transaction ends, at most once a second: wait for them.
  await sql`SELECT pg_sleep(1.5)`;
  await sql`SELECT pg_stat_clear_snapshot()`;
  const [row] = await sql<{ inserted: string; updated: string; deleted: string }[]>`
    SELECT coalesce(sum(n_tup_ins), 0) AS inserted, coalesce(sum(n_tup_upd), 0) AS updated,
           coalesce(sum(n_tup_del), 0) AS deleted
    FROM pg_stat_user_tables`;
  return { inserted: Number(row?.inserted), updated: Number(row?.updated), deleted: Number(row?.deleted) };
}
