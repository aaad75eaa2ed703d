/**
 * Keeps the metadata worker at work for the whole soak: every few seconds one more of the demo's
 * collections is queued for refresh, as `mintlens metadata refresh <contract>` does, so the
 * worker fetches its documents and images from the demo's metadata server again.
 */
import type { Address } from "../../src/core/hex.ts";
import { type Sql, toHex } from "../../src/store/pg/database.ts";
import { queueCollection } from "../../src/store/tables/metadata.ts";

export interface MetadataChurn {
  /** Refreshes made, tokens they queued, and refreshes that failed. */
  counts(): { refreshes: number; queued: number; failed: number };
  stop(): Promise<void>;
}

/** The collections whose metadata the worker has fetched: what a refresh sends it to fetch again. */
export async function collectionsWithMetadata(sql: Sql, chainId: number): Promise<Address[]> {
  const rows = await sql<{ contract: Uint8Array }[]>`
    SELECT DISTINCT contract FROM token_metadata
    WHERE chain_id = ${chainId} AND status = 'ok' ORDER BY contract`;
  return rows.map((r) => toHex(r.contract) as Address);
}

export function startMetadataChurn(options: {
  sql: Sql;
  chainId: number;
  collections: readonly Address[];
  everyMs: number;
}): MetadataChurn {
  const counts = { refreshes: 0, queued: 0, failed: 0 };
  const stop = new AbortController();
  const loop = (async () => {
    for (let i = 0; !stop.signal.aborted; i++) {
      const contract = options.collections[i % options.collections.length];
      if (contract === undefined) return;
      try {
        counts.queued += await queueCollection(options.sql, options.chainId, contract, "refresh");
        counts.refreshes++;
      } catch {
        counts.failed++;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          stop.signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, options.everyMs);
        stop.signal.addEventListener("abort", done, { once: true });
      });
    }
  })();
  return {
    counts: () => ({ ...counts }),
    async stop() {
      stop.abort();
      await loop;
    },
  };
}
