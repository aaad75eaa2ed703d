/**
 * The demo chain's generator, as the rest of Mintlens uses it: deploy the demo contracts on an
 * anvil and fill it with months of seeded, realistic activity (`generateHistory`, history.ts),
 * then keep it moving (`runLiveActivity`, live.ts). The contracts and their setup are in
 * deployer.ts, the draw of each action in planner.ts.
 */
export { ACTIVITY_COUNTERS, type ActivityCounts } from "./counts.ts";
export type { DemoOptions } from "./deployer.ts";
export {
  generateHistory,
  type HistoryOptions,
  type HistorySummary,
  historyGenesisTimestamp,
} from "./history.ts";
export { type LiveActivityOptions, type LiveActivitySummary, runLiveActivity } from "./live.ts";
