import type { ContinuationSpec } from "./continuation.ts";
import type { ScaleStore } from "./store.ts";

export interface MeasureOptions {
  large: ScaleStore;
  small: ScaleStore;
  continuation: ContinuationSpec;
  phases: string[];
  lock: string | undefined;
  load: { duration: number; warmup: number; connections: number; maxRequests: number };
  batchRows: number;
  seed: string;
  log: (message: string) => void;
}

export async function measureStores(_options: MeasureOptions): Promise<void> {}
