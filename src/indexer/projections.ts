/**
 * Every table the indexer derives, as one ordered list of projections (see `projections/projection.ts`).
 * The batch write, the rollback and the crash/reorg snapshot test walk this list: a table added
 * here is written, undone and compared, and a table that is not here is not the indexer's.
 *
 * The order matters: each projection may use what those before it derived from the batch, and its
 * statements and its inverse run after theirs (the rollups come after the tables they sum, the
 * checkpoint last).
 */
import type { RateBookConfig } from "../rates/convert.ts";
import type { FlowReader } from "./flow-readback.ts";
import { checkpointProjection } from "./projections/checkpoint.ts";
import { contractsProjection } from "./projections/contracts.ts";
import { ownershipProjection } from "./projections/ownership.ts";
import { createPoolStatesProjection } from "./projections/pool-states.ts";
import type { AnyProjection } from "./projections/projection.ts";
import { punkBidsProjection } from "./projections/punk-bids.ts";
import { punkOffersProjection } from "./projections/punk-offers.ts";
import { bucketsProjection, daysProjection, rankingsProjection } from "./projections/rollups.ts";
import { createSalesProjection } from "./projections/sales.ts";
import { streamProjection } from "./projections/stream.ts";
import { tokensProjection } from "./projections/tokens.ts";
import { transfersProjection } from "./projections/transfers.ts";
import { verdictsProjection } from "./projections/verdicts.ts";

export interface ProjectionsConfig {
  /** How payments are valued: the pegged tokens, the rate pools and the dollar tokens. */
  rates: RateBookConfig;
  /** Tokens the memory of last sales holds before it starts again (tests make it small). */
  saleMemoryLimit?: number;
  /** Reads value flows back from the node on a resume, for the funder rule (see projections/sales.ts). */
  readFlows?: FlowReader;
  /**
   * Whether the outbox of the live event stream is written (default true). Without it the streams
   * have nothing to send: it is off only to measure what the outbox costs.
   */
  stream?: boolean;
}

export function createProjections(config: ProjectionsConfig): readonly AnyProjection[] {
  return [
    transfersProjection,
    tokensProjection,
    contractsProjection,
    ownershipProjection,
    createPoolStatesProjection(config.rates),
    punkBidsProjection,
    punkOffersProjection,
    createSalesProjection({
      ...(config.saleMemoryLimit !== undefined ? { memoryLimit: config.saleMemoryLimit } : {}),
      ...(config.readFlows ? { readFlows: config.readFlows } : {}),
    }),
    bucketsProjection,
    daysProjection,
    rankingsProjection,
    verdictsProjection,
    ...(config.stream === false ? [] : [streamProjection]),
    checkpointProjection,
  ];
}

/** The tables of every projection, for those that only need the list (the snapshot test). */
export const PROJECTED_TABLES = createProjections({
  rates: { nativePegged: [], pools: [], usdTokens: [] },
}).flatMap((p) => p.tables.map((t) => ({ ...t, projection: p.name })));
