/**
 * The API through PgBouncer in transaction mode against the API on a direct connection: the same
 * operations, measured alternately (direct, pooled, direct, pooled…) so that a drift of the
 * machine weighs on both alike. Both servers run without the answer cache, so every request
 * reaches PostgreSQL.
 */
import { join } from "node:path";
import { startPgBouncer } from "../../test/support/pgbouncer.ts";
import { type ApiProcess, startApi } from "./api-process.ts";
import { type LoadSettings, type Measurement, measure } from "./measure.ts";
import type { Operation } from "./operations.ts";

/** Server connections PgBouncer lends: fewer than the API's pool, as a pooler is deployed. */
export const POOLER_SERVER_CONNECTIONS = 4;

export interface PoolerRun {
  operation: Operation;
  direct: Measurement;
  pooled: Measurement;
}

export async function benchPooler(options: {
  url: string;
  chainName: string;
  chainId: number;
  scratch: string;
  operations: readonly Operation[];
  settings: Omit<LoadSettings, "apiPid">;
  say: (line: string) => void;
}): Promise<PoolerRun[]> {
  const bouncer = await startPgBouncer(options.url, { poolSize: POOLER_SERVER_CONNECTIONS });
  const apis: ApiProcess[] = [];
  try {
    const common = { chainName: options.chainName, chainId: options.chainId, responseCacheMb: 0 };
    const direct = await startApi({
      ...common,
      databaseUrl: options.url,
      logFile: join(options.scratch, "serve-direct.log"),
    });
    apis.push(direct);
    const pooled = await startApi({
      ...common,
      databaseUrl: bouncer.url,
      logFile: join(options.scratch, "serve-pooled.log"),
      extraArgs: ["--database-pooler", "transaction"],
    });
    apis.push(pooled);
    options.say(
      `direct at ${direct.url}, through PgBouncer (transaction mode, ${POOLER_SERVER_CONNECTIONS} server connections) at ${pooled.url}`,
    );
    const runs: PoolerRun[] = [];
    for (const operation of options.operations) {
      const d = await measure(direct.url, operation, { ...options.settings, apiPid: direct.pid });
      const p = await measure(pooled.url, operation, { ...options.settings, apiPid: pooled.pid });
      options.say(`  ${operation.name.padEnd(44)} ${line(d)} | ${line(p)}`);
      runs.push({ operation, direct: d, pooled: p });
    }
    return runs;
  } finally {
    for (const api of apis) await api.stop();
    await bouncer.stop();
  }
}

const cpu = (seconds: number | undefined) => (seconds === undefined ? "?" : seconds.toFixed(3));

function line(m: Measurement): string {
  return (
    `p99 ${m.p99.toFixed(2)} ms, API ${cpu(m.apiCpu)} s + PostgreSQL ${cpu(m.postgresCpu)} s CPU per 1,000, ` +
    `non-2xx ${m.non2xx + m.failed}`
  );
}

/** The table the run ends with: direct against pooled, per operation. */
export function poolerTable(runs: readonly PoolerRun[]): string {
  const rows = runs.map((r) => {
    const total = (m: Measurement) =>
      m.apiCpu === undefined || m.postgresCpu === undefined ? undefined : m.apiCpu + m.postgresCpu;
    return `| ${r.operation.name} | ${r.direct.p99.toFixed(2)} | ${r.pooled.p99.toFixed(2)} | ${cpu(total(r.direct))} | ${cpu(total(r.pooled))} |`;
  });
  return [
    "| operation | p99 direct (ms) | p99 through PgBouncer (ms) | API+PostgreSQL CPU s per 1,000, direct | through PgBouncer |",
    "| --- | ---: | ---: | ---: | ---: |",
    ...rows,
  ].join("\n");
}
