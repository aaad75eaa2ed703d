/**
 * Generated demo histories on anvil, made once and kept as anvil state dumps: generating 60 days
 * takes seconds, loading them a fraction of one, and several test files and both database passes
 * use the same ones. A history is keyed by what it is (chain id, seed, days, genesis time) and by
 * the sources that make it (src/demo, src/devchain, src/core, contracts/artifacts, anvil's
 * version), in .test-cache/histories/ (git-ignored); a dump that anvil cannot load is made again.
 * Every test runs on a loaded dump, the first run as the later ones, so a dump that lost anything
 * fails the first run too.
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { generateHistory, type HistorySummary, historyGenesisTimestamp } from "../../src/demo/activity.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CACHE = join(ROOT, ".test-cache", "histories");
/** What makes a history: a change to any of these makes every history again. */
const SOURCES = ["src/demo", "src/devchain", "src/core", "contracts/artifacts"];
/** Raised when the dump or summary format changes. */
const FORMAT = 1;

export interface HistoryChainOptions {
  seed: string | number;
  days: number;
  chainId?: number;
  /**
   * Unix seconds of the genesis block, or "recent": the history then ends one to two hours ago,
   * for tests that read it through windows ending now (the genesis is that of
   * `historyGenesisTimestamp` at the start of the hour, so a history serves for that hour).
   */
  genesis: number | "recent";
  /**
   * Keeps the state at every block, not only at the head, for calls at past blocks (a pool's
   * reserves when it traded): a dump twenty times the size, so only for tests that need it.
   */
  historicalStates?: boolean;
}

export interface HistoryChain {
  anvil: Anvil;
  history: HistorySummary;
}

/** The start of the current hour, in Unix seconds: a genesis time made from it serves for the hour. */
export function thisHour(): number {
  return Math.floor(Date.now() / 3_600_000) * 3600;
}

/** An anvil holding the generated history, from the cache when it has it. */
export async function startHistoryChain(options: HistoryChainOptions): Promise<HistoryChain> {
  const chainId = options.chainId ?? 31337;
  const genesis =
    options.genesis === "recent" ? historyGenesisTimestamp(options.days, thisHour()) : options.genesis;
  const spec = {
    chainId,
    seed: options.seed,
    days: options.days,
    genesis,
    historicalStates: options.historicalStates === true,
  };
  const key = cacheKey({ format: FORMAT, ...spec });
  const stateFile = join(CACHE, `${key}.state.json`);
  const summaryFile = join(CACHE, `${key}.summary.json`);
  if (!existsSync(stateFile) || !existsSync(summaryFile)) {
    await makeHistory(spec, stateFile, summaryFile);
  }
  try {
    return await loadHistory(chainId, stateFile, summaryFile);
  } catch {
    // A dump from another anvil, or a file cut short: made again.
    await makeHistory(spec, stateFile, summaryFile);
    return loadHistory(chainId, stateFile, summaryFile);
  }
}

async function loadHistory(chainId: number, stateFile: string, summaryFile: string): Promise<HistoryChain> {
  const history = JSON.parse(readFileSync(summaryFile, "utf8"), revive) as HistorySummary;
  const anvil = await startAnvil({ chainId, loadState: stateFile });
  return { anvil, history };
}

async function makeHistory(
  spec: { chainId: number; seed: string | number; days: number; genesis: number; historicalStates: boolean },
  stateFile: string,
  summaryFile: string,
): Promise<void> {
  mkdirSync(CACHE, { recursive: true });
  // Written under names of this process's own and renamed once complete: a run cut short, or
  // another file making the same history at the same time, never leaves half a file behind.
  const partial = `${stateFile}.${process.pid}.partial`;
  const anvil = await startAnvil({
    chainId: spec.chainId,
    timestamp: spec.genesis,
    dumpState: partial,
    args: spec.historicalStates ? ["--preserve-historical-states"] : [],
  });
  let history: HistorySummary;
  try {
    history = await generateHistory({ rpcUrl: anvil.url, seed: spec.seed, days: spec.days });
  } finally {
    // anvil writes the dump as it stops.
    await anvil.stop();
  }
  writeFileSync(`${summaryFile}.${process.pid}.partial`, JSON.stringify(history, replace));
  renameSync(partial, stateFile);
  renameSync(`${summaryFile}.${process.pid}.partial`, summaryFile);
}

let sourcesHash: string | undefined;

function cacheKey(spec: Record<string, unknown>): string {
  if (sourcesHash === undefined) {
    const hash = createHash("sha256");
    for (const file of SOURCES.flatMap((dir) => filesUnder(join(ROOT, dir)))) {
      hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
    }
    hash.update(anvilVersion());
    sourcesHash = hash.digest("hex");
  }
  return createHash("sha256").update(sourcesHash).update(JSON.stringify(spec)).digest("hex").slice(0, 24);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

function anvilVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    return (require("@foundry-rs/anvil-linux-amd64/package.json") as { version: string }).version;
  } catch {
    return "anvil from the PATH";
  }
}

// Summaries hold bigints (token ids, amounts): kept as tagged strings.
function replace(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? { bigint: value.toString() } : value;
}

function revive(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === "object" && Object.keys(value).length === 1 && "bigint" in value) {
    return BigInt((value as { bigint: string }).bigint);
  }
  return value;
}
