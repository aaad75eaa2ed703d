/**
 * Months of seeded activity in blocks mined at chosen times: the contracts deployed over the first
 * weeks, then each simulated day a few blocks at random 12-second slots, each block a few actions
 * drawn by the planner.
 *
 * The history's block timestamps start at `startTimestamp` (default: an hour after the head) and
 * span `days`. For the history to end around the present, start anvil in the past, e.g.
 * `startAnvil({ timestamp: historyGenesisTimestamp(days) })`.
 */
import type { Address, Hex } from "../core/hex.ts";
import { hexToNumber } from "../core/hex.ts";
import { BlockBuilder, type RpcReceipt } from "./block-builder.ts";
import type { DemoContracts } from "./contracts.ts";
import { type ActivityCounts, emptyCounts } from "./counts.ts";
import {
  completeContracts,
  createWorld,
  type DemoOptions,
  Deployer,
  fundAndImpersonate,
} from "./deployer.ts";
import { createActivityPlanner } from "./planner.ts";
import { Prng } from "./prng.ts";

const DAY = 86_400;
/** Block interval the history's timestamps are aligned to, as on mainnet. */
const SLOT = 12;

export interface HistoryOptions extends DemoOptions {
  /** Days of history. Default 180. */
  days?: number;
  /** Unix seconds of the first block; must be after the head. Default: the head's timestamp plus an hour. */
  startTimestamp?: number;
  /** Average blocks with activity per day. Default 4. */
  blocksPerDay?: number;
  /** Average user actions per block (an action is one to three transactions). Default 3. */
  actionsPerBlock?: number;
  /** Called after each simulated day. */
  onProgress?: (progress: { day: number; days: number; blocks: number; transactions: number }) => void;
  /** Ends the generation between two days, throwing the signal's reason. */
  signal?: AbortSignal;
}

export interface HistorySummary {
  seed: number | string;
  chainId: number;
  deployer: Address;
  accounts: Address[];
  contracts: DemoContracts;
  counts: ActivityCounts;
  transactions: number;
  /** Logs emitted by all the history's transactions. */
  logs: number;
  blocks: { first: number; last: number; count: number };
  timestamps: { first: number; last: number };
}

/** A genesis timestamp that makes a `days`-long history end about now. */
export function historyGenesisTimestamp(days: number, nowSeconds = Math.floor(Date.now() / 1000)): number {
  return nowSeconds - Math.ceil(days * DAY) - 2 * 3600;
}

interface BlockHead {
  number: Hex;
  timestamp: Hex;
}

/**
 * Deploys the demo contracts and generates `days` of activity, mining blocks at chosen times.
 * Automine is turned off meanwhile and restored after; anvil must not be mining on an interval
 * (--block-time), as it would mine the queued transactions at times of its own.
 */
export async function generateHistory(options: HistoryOptions): Promise<HistorySummary> {
  const days = options.days ?? 180;
  if (!(days >= 1)) throw new RangeError("days must be at least 1");
  const blocksPerDay = options.blocksPerDay ?? 4;
  const actionsPerBlock = options.actionsPerBlock ?? 3;
  const prng = new Prng(options.seed);
  const builder = new BlockBuilder(options.rpcUrl);
  const rpc = builder.rpc;

  const head = await rpc.call<BlockHead>("eth_getBlockByNumber", ["latest", false]);
  const headTime = hexToNumber(head.timestamp);
  const start = options.startTimestamp ?? headTime + 3600;
  if (start <= headTime) {
    throw new Error(
      `startTimestamp ${start} is not after the head's ${headTime}; start anvil with an earlier --timestamp`,
    );
  }
  const chainId = hexToNumber(await rpc.call<Hex>("eth_chainId"));
  const world = createWorld(prng, options.accounts ?? 30);
  await fundAndImpersonate(builder, [world.deployer, ...world.accounts]);
  const counts = emptyCounts();
  const contracts: Partial<DemoContracts> = {};

  const automine = await rpc.call<boolean>("anvil_getAutomine");
  await rpc.call("evm_setAutomine", [false]);

  let lastTimestamp = start - SLOT;
  let firstBlock: number | undefined;
  let firstTimestamp: number | undefined;
  let lastBlock = 0;
  let blockCount = 0;
  let transactions = 0;
  let logs = 0;
  let day = 0;
  const slotsToday = new Set<number>();

  /** The next block time on `day`: a random free slot, never before the previous block. */
  const nextTimestamp = (): number => {
    const dayStart = start + day * DAY;
    let t = dayStart + prng.int(0, DAY / SLOT - 1) * SLOT;
    if (t <= lastTimestamp) t = lastTimestamp + SLOT * prng.int(1, 30);
    while (slotsToday.has(t)) t += SLOT;
    slotsToday.add(t);
    return t;
  };
  const commit = async (timestamp: number): Promise<RpcReceipt[]> => {
    transactions += builder.queued.length;
    const block = await builder.mine(timestamp);
    firstBlock ??= block.number;
    firstTimestamp ??= block.timestamp;
    lastBlock = block.number;
    lastTimestamp = block.timestamp;
    blockCount++;
    for (const r of block.receipts) logs += r.logs.length;
    return block.receipts;
  };

  try {
    const deployer = new Deployer(world, builder, counts, contracts, prng, options.punkSupply ?? 500);
    // Setup of the first day happens in its first hours, in order.
    const setupTimes = (): number => {
      const t = Math.max(lastTimestamp + SLOT * prng.int(5, 60), start);
      lastTimestamp = t;
      slotsToday.add(t);
      return t;
    };
    await deployer.deployCore(async () => commit(setupTimes()));
    const schedule: { day: number; deploy: () => Promise<void> }[] = [
      {
        day: Math.floor(days * 0.1),
        deploy: () => deployer.deployConsecutive(async () => commit(nextTimestamp())),
      },
      {
        day: Math.floor(days * 0.2),
        deploy: () => deployer.deployFromFactory("erc721Create2", async () => commit(nextTimestamp())),
      },
      {
        day: Math.floor(days * 0.45),
        deploy: () => deployer.deployFromFactory("erc721Create", async () => commit(nextTimestamp())),
      },
    ];

    const planner = createActivityPlanner({ world, prng, counts });
    for (day = 0; day < days; day++) {
      options.signal?.throwIfAborted();
      if (day > 0) slotsToday.clear();
      // A deployment scheduled for the day comes before that day's trading.
      for (const item of schedule) if (item.day === day) await item.deploy();
      const blocks = blocksOnDay(prng, day, days, blocksPerDay);
      const times = Array.from({ length: blocks }, () => nextTimestamp()).sort((a, b) => a - b);
      for (const timestamp of times) {
        const touched = new Set<string>();
        const actions = Math.max(1, Math.round(actionsPerBlock * (0.3 + 1.4 * prng.next())));
        for (let i = 0; i < actions; i++) await builder.addMany(planner.plan(touched));
        await commit(Math.max(timestamp, lastTimestamp + 1));
      }
      options.onProgress?.({ day: day + 1, days, blocks: blockCount, transactions });
    }
  } finally {
    await rpc.call("evm_setAutomine", [automine]);
  }

  return {
    seed: options.seed,
    chainId,
    deployer: world.deployer,
    accounts: [...world.accounts],
    contracts: completeContracts(contracts),
    counts,
    transactions,
    logs,
    blocks: { first: firstBlock ?? 0, last: lastBlock, count: blockCount },
    timestamps: { first: firstTimestamp ?? start, last: lastTimestamp },
  };
}

/** Activity grows over the period, dips at weekends and has the odd busy day. */
function blocksOnDay(prng: Prng, day: number, days: number, perDay: number): number {
  const trend = 0.5 + (day / days) * 1.0;
  const weekend = day % 7 === 5 || day % 7 === 6 ? 0.6 : 1;
  const spike = prng.chance(0.04) ? 3 : 1;
  return Math.round(perDay * trend * weekend * spike * (0.4 + 1.2 * prng.next()));
}
