/**
 * The API on a streaming standby against the API on its primary: the same operations, measured
 * alternately (primary, standby, primary, standby…) so that a drift of the machine weighs on both
 * alike. Both servers run without the answer cache, so every request reaches PostgreSQL. The
 * primary and the standby are Debian's PostgreSQL 15 (test/support/replica.ts), started here; the
 * market is loaded into the primary and measured once the standby has replayed all of it.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import type { ReplicaCluster } from "../../test/support/replica.ts";
import { type ApiProcess, startApi } from "./api-process.ts";
import { type LoadSettings, type Measurement, measure } from "./measure.ts";
import type { Operation } from "./operations.ts";

export interface StandbyRun {
  operation: Operation;
  primary: Measurement;
  standby: Measurement;
}

/** How long the standby may take to replay the loaded market before the run gives up. */
const REPLAY_TIMEOUT_MS = 600_000;

/** Waits until the standby has replayed everything the primary had written when asked. */
async function caughtUp(cluster: ReplicaCluster, database: string, say: (line: string) => void) {
  const primary = postgres(cluster.primaryUrl(database), { max: 1, onnotice: () => {} });
  const standby = postgres(cluster.standbyUrl(database), { max: 1, onnotice: () => {} });
  try {
    const [written] = await primary<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`;
    const started = Date.now();
    for (;;) {
      const [row] = await standby<{ done: boolean }[]>`
        SELECT pg_last_wal_replay_lsn() >= ${written?.lsn ?? "0/0"}::pg_lsn AS done`;
      if (row?.done) break;
      if (Date.now() - started > REPLAY_TIMEOUT_MS)
        throw new Error(`the standby has not replayed ${written?.lsn} in ${REPLAY_TIMEOUT_MS} ms`);
      await sleep(200);
    }
    say(`the standby replayed the market in ${((Date.now() - started) / 1000).toFixed(1)} s after the load`);
  } finally {
    await primary.end({ timeout: 5 });
    await standby.end({ timeout: 5 });
  }
}

export async function benchStandby(options: {
  cluster: ReplicaCluster;
  database: string;
  chainName: string;
  chainId: number;
  scratch: string;
  operations: readonly Operation[];
  settings: Omit<LoadSettings, "apiPid">;
  say: (line: string) => void;
}): Promise<StandbyRun[]> {
  await caughtUp(options.cluster, options.database, options.say);
  const apis: ApiProcess[] = [];
  try {
    const common = { chainName: options.chainName, chainId: options.chainId, responseCacheMb: 0 };
    const primary = await startApi({
      ...common,
      databaseUrl: options.cluster.primaryUrl(options.database),
      logFile: join(options.scratch, "serve-primary.log"),
    });
    apis.push(primary);
    const standby = await startApi({
      ...common,
      databaseUrl: options.cluster.standbyUrl(options.database),
      logFile: join(options.scratch, "serve-standby.log"),
    });
    apis.push(standby);
    options.say(`on the primary at ${primary.url}, on the standby at ${standby.url}`);
    const runs: StandbyRun[] = [];
    for (const [i, operation] of options.operations.entries()) {
      // PostgreSQL's CPU is not read: the two servers are not this process's children's to tell apart.
      const settings = { ...options.settings, postgresPid: undefined };
      const onPrimary = () => measure(primary.url, operation, { ...settings, apiPid: primary.pid });
      const onStandby = () => measure(standby.url, operation, { ...settings, apiPid: standby.pid });
      // Each goes first every other operation, so that warming up weighs on both alike.
      const [p, s] =
        i % 2 === 0
          ? [await onPrimary(), await onStandby()]
          : await onStandby().then(async (first) => [await onPrimary(), first] as const);
      options.say(`  ${operation.name.padEnd(44)} ${line(p)} | ${line(s)}`);
      runs.push({ operation, primary: p, standby: s });
    }
    return runs;
  } finally {
    for (const api of apis) await api.stop();
  }
}

const cpu = (seconds: number | undefined) => (seconds === undefined ? "?" : seconds.toFixed(3));

function line(m: Measurement): string {
  return `p99 ${m.p99.toFixed(2)} ms, API ${cpu(m.apiCpu)} s CPU per 1,000, non-2xx ${m.non2xx + m.failed}`;
}

/** The table the run ends with: primary against standby, per operation, and the ratio of p99s. */
export function standbyTable(runs: readonly StandbyRun[]): string {
  const rows = runs.map(
    (r) =>
      `| ${r.operation.name} | ${r.primary.p99.toFixed(2)} | ${r.standby.p99.toFixed(2)} | ${(r.standby.p99 / r.primary.p99).toFixed(2)}× | ${cpu(r.primary.apiCpu)} | ${cpu(r.standby.apiCpu)} |`,
  );
  return [
    "| operation | p99 on the primary (ms) | p99 on the standby (ms) | standby / primary | API CPU s per 1,000, primary | standby |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
  ].join("\n");
}
