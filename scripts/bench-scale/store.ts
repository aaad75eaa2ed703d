/**
 * A cached store of the scale benchmark: `.bench/scale-<transfers>/` holds its own embedded
 * PostgreSQL cluster (`postgres/`), what it was built from and how the build went (`meta.json`),
 * and the chain that continues it (`continuation.v8`), which the measuring runs index on top of it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { deserialize, serialize } from "node:v8";
import type { FetchedBatch } from "../../src/indexer/batch.ts";
import { connectDatabase } from "../../src/store/pg/database.ts";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "../../src/store/pg/embedded.ts";
import type { ScaleShape } from "./shape.ts";

export const CHAIN_ID = 31337;
export const CHAIN_NAME = "bench";

/**
 * The server settings of every store, large and small alike: sized for a 24 GiB machine shared with
 * other work, and for a store of tens of gigabytes on an SSD. The build lowers nothing that makes a
 * commit durable beyond what the indexer itself does (`synchronous_commit = off` per batch).
 */
export const SERVER_SETTINGS: Record<string, string> = {
  shared_buffers: "2GB",
  effective_cache_size: "12GB",
  work_mem: "16MB",
  maintenance_work_mem: "512MB",
  max_wal_size: "4GB",
  checkpoint_timeout: "30min",
  random_page_cost: "1.1",
  effective_io_concurrency: "200",
};

export interface BuildSession {
  startedAt: string;
  seconds: number;
  transfers: number;
  batches: number;
  /** Rows inserted, updated and deleted across every table, from PostgreSQL's statistics. */
  inserted: number;
  updated: number;
  deleted: number;
}

/** A row of `recent_blocks`, hashes in hex. */
export interface RecentBlock {
  number: number;
  hash: string;
  parent_hash: string;
  time: number;
}

export interface StoreMeta {
  shape: ScaleShape;
  seed: string;
  /** Unix seconds the built history ends at. */
  end: number;
  /** The last block built: the continuation starts after it. */
  builtHead: number;
  batchRows: number;
  sessions: BuildSession[];
  /** The recent blocks of the built head, kept the first time a measuring run finds the store there. */
  recentBlocks?: RecentBlock[];
  /** Set once every batch is committed and the store vacuumed. */
  complete?: {
    at: string;
    vacuumSeconds: number;
    /** NFT transfers, sales and so on the chain made, as the generator counted them. */
    totals: Record<string, number>;
  };
}

export interface ScaleStore {
  dir: string;
  meta(): StoreMeta | undefined;
  saveMeta(meta: StoreMeta): void;
  continuation(): FetchedBatch[] | undefined;
  saveContinuation(batches: FetchedBatch[]): void;
  /** Starts the store's server (creating the cluster with `SERVER_SETTINGS` on first use). */
  open(log: (message: string) => void): Promise<EmbeddedDatabase>;
}

export function scaleStore(transfers: number): ScaleStore {
  const dir = resolve(".bench", `scale-${transfers}`);
  const metaFile = join(dir, "meta.json");
  const continuationFile = join(dir, "continuation.v8");
  const writeAtomically = (file: string, data: string | Buffer) => {
    writeFileSync(`${file}.tmp`, data);
    renameSync(`${file}.tmp`, file);
  };
  return {
    dir,
    meta: () =>
      existsSync(metaFile) ? (JSON.parse(readFileSync(metaFile, "utf8")) as StoreMeta) : undefined,
    saveMeta(meta) {
      mkdirSync(dir, { recursive: true });
      writeAtomically(metaFile, `${JSON.stringify(meta, null, 2)}\n`);
    },
    continuation: () =>
      existsSync(continuationFile)
        ? (deserialize(readFileSync(continuationFile)) as FetchedBatch[])
        : undefined,
    saveContinuation(batches) {
      // Headers work their hashes out when read: stored as plain values.
      const plain = batches.map((b) => ({
        ...b,
        headers: b.headers.map((h) => ({
          number: h.number,
          timestamp: h.timestamp,
          hash: h.hash,
          parentHash: h.parentHash,
          logsBloom: h.logsBloom,
        })),
      }));
      writeAtomically(continuationFile, serialize(plain));
    },
    async open(log) {
      let server = await startEmbeddedPostgres({ dataDir: dir, log });
      const sql = await connectDatabase(server.url, { max: 1 });
      let restart: boolean;
      try {
        for (const [name, value] of Object.entries(SERVER_SETTINGS))
          await sql.unsafe(`ALTER SYSTEM SET ${name} = '${value}'`);
        await sql`SELECT pg_reload_conf()`;
        // The reload takes a moment to reach pg_settings.
        await sql`SELECT pg_sleep(0.5)`;
        const [row] = await sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM pg_settings WHERE pending_restart`;
        restart = (row?.n ?? 0) > 0;
      } finally {
        await sql.end({ timeout: 5 });
      }
      // shared_buffers, on a new cluster, takes a restart.
      if (restart && server.pid !== undefined) {
        await server.stop();
        server = await startEmbeddedPostgres({ dataDir: dir, log });
      }
      return server;
    },
  };
}
