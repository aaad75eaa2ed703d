/**
 * The metadata worker over the demo's metadata server, as `mintlens start` runs it for one chain:
 * allowed to reach only that server, its IPFS and Arweave gateways the server's own.
 */
import assert from "node:assert/strict";
import { createChainClient } from "../../src/chain/client.ts";
import { silentLogger } from "../../src/core/logger.ts";
import type { DemoMetadataServer } from "../../src/demo/metadata-server.ts";
import type { BlobStore } from "../../src/media/blobs.ts";
import { createFetcher } from "../../src/metadata/fetch.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import { runMetadataWorker } from "../../src/metadata/worker.ts";
import type { Sql } from "../../src/store/pg/database.ts";

export interface DemoMetadataWorkerOptions {
  sql: Sql;
  chainId: number;
  rpcUrl: string;
  server: DemoMetadataServer;
  /** The image cache; without it images are not fetched. */
  blobs?: BlobStore;
  /** Ranks the collections' rarity as it goes, each at once. */
  ranked?: boolean;
}

/** Starts the worker; `stop` ends it and waits for it. */
export function startDemoMetadataWorker(options: DemoMetadataWorkerOptions): { stop(): Promise<void> } {
  const client = createChainClient({ url: options.rpcUrl });
  const abort = new AbortController();
  const { server } = options;
  const worker = runMetadataWorker(
    {
      sql: options.sql,
      chainId: options.chainId,
      client,
      fetcher: createFetcher({
        allow: parseAllowList([`127.0.0.1:${server.port}`]),
        limits: { timeoutMs: 5_000 },
      }),
      gateways: { ipfs: server.ipfsGateway, arweave: server.arweaveGateway },
      logger: silentLogger(),
      idleMs: 50,
      ...(options.blobs ? { blobs: options.blobs } : {}),
      ...(options.ranked
        ? { ranking: { settleSeconds: 0, maxBehindSeconds: 0, collectionsPerPass: 100 }, rankEveryMs: 50 }
        : {}),
    },
    abort.signal,
  );
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      abort.abort();
      stopped ??= worker.then(() => client.close());
      return stopped;
    },
  };
}

/**
 * Runs the worker until nothing is due within half an hour (a refusal is tried again after an
 * hour, so it does not count) and no mint range is left to expand.
 */
export async function drainMetadataQueue(
  options: DemoMetadataWorkerOptions & { timeoutMs?: number },
): Promise<void> {
  const worker = startDemoMetadataWorker(options);
  const timeoutMs = options.timeoutMs ?? 120_000;
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [left] = await options.sql<{ n: number }[]>`
        SELECT (SELECT count(*) FROM metadata_queue WHERE due_at < now() + interval '30 minutes')::int
             + (SELECT count(*) FROM metadata_mint_ranges)::int AS n`;
      if (left?.n === 0) break;
      assert.ok(Date.now() < deadline, `${left?.n} tokens still queued after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await worker.stop();
  }
}
