/**
 * What the rate limit costs the API process per request, by where keys' points are counted: one
 * `mintlens serve` per store (memory, Redis, PostgreSQL), each with a limit high enough to admit
 * everything, measured in turn, round after round, on the cheapest keyed request (an empty list,
 * answered from the answer cache), where the limiter's share of the work is largest. Prints each
 * store's CPU per 1,000 requests (the API process's, and the store's own) and its ratio to memory.
 */
import { join } from "node:path";
import { migrate } from "../../src/store/pg/migrate.ts";
import { redisMissing, startRedis, type TestRedis } from "../../test/support/redis.ts";
import { processCpu, processTreeCpu } from "../bench/process-cpu.ts";
import { type ApiProcess, createApiKey, startApi } from "./api-process.ts";
import { type Measurement, measure } from "./measure.ts";
import type { Operation } from "./operations.ts";
import type { BenchServer } from "./server.ts";

/** Points per second and burst: far above what one machine can ask, so every request is admitted. */
const ADMIT_ALL = 100_000_000;
/** Most the API process's CPU per request with Redis may be over memory's. */
export const REDIS_TARGET = 1.2;

const OPERATION: Operation = {
  name: "ListContracts, empty (cached)",
  kind: "list",
  keyed: true,
  paths: ["/foundational/v1beta2/contracts?limit=1"],
};

interface Store {
  name: "memory" | "redis" | "postgres";
  api: ApiProcess;
  /** The CPU seconds the store's own processes have used; undefined for memory. */
  cpu: (() => number) | undefined;
  runs: Measurement[];
  storeCpu: number[];
}

export interface LimiterSettings {
  connections: number;
  duration: number;
  warmup: number;
  rounds: number;
}

export async function benchLimiter(
  server: BenchServer,
  settings: LimiterSettings,
  say: (line: string) => void,
): Promise<void> {
  const missing = redisMissing();
  if (missing !== undefined) throw new Error(`--limiter needs Redis: ${missing}`);
  const name = "mintlens_bench_limiter";
  const url = await server.createDatabase(name);
  let redis: TestRedis | undefined;
  const stores: Store[] = [];
  try {
    await migrate(url);
    const apiKey = await createApiKey(url, "bench");
    redis = await startRedis();
    const { pid: redisPid } = redis;
    const { pid: postgresPid } = server;
    const targets = [
      { name: "memory" as const, store: "memory", cpu: undefined },
      { name: "redis" as const, store: redis.url, cpu: () => processCpu(redisPid) },
      // The embedded server's postmaster and its backends; a server given by URL is not read.
      {
        name: "postgres" as const,
        store: url,
        cpu: postgresPid === undefined ? undefined : () => processTreeCpu(postgresPid),
      },
    ];
    for (const target of targets) {
      const api = await startApi({
        databaseUrl: url,
        chainName: "bench",
        chainId: 31337,
        logFile: join(server.scratch, `serve-limiter-${target.name}.log`),
        rateLimit: ADMIT_ALL,
        rateBurst: ADMIT_ALL,
        rateLimitStore: target.store,
      });
      stores.push({ name: target.name, api, cpu: target.cpu, runs: [], storeCpu: [] });
    }
    say(
      `limiter: ${settings.rounds} rounds of memory, Redis and PostgreSQL in turn, each ${settings.warmup} s of ` +
        `warm-up then ${settings.duration} s with ${settings.connections} connections`,
    );
    for (let round = 1; round <= settings.rounds; round++) {
      for (const store of stores) {
        const before = store.cpu?.() ?? 0;
        const m = await measure(store.api.url, OPERATION, {
          ...settings,
          apiKey,
          apiPid: store.api.pid,
          // PostgreSQL's share is read below as the store's; the other stores do not use it.
          postgresPid: undefined,
        });
        const storeCpu = (store.cpu?.() ?? 0) - before;
        store.runs.push(m);
        store.storeCpu.push(m.requests > 0 ? (storeCpu * 1000) / m.requests : 0);
        say(
          `  round ${round} ${store.name.padEnd(8)} ${Math.round(m.perSecond).toString().padStart(6)} req/s, ` +
            `API CPU ${fixed(m.apiCpu)} s/1k, store CPU ${fixed(store.storeCpu.at(-1))} s/1k, non-2xx ${m.non2xx + m.failed}`,
        );
      }
    }
    say(`\n${limiterTable(stores)}\n`);
    const memory = median(stores[0]?.runs.map((m) => m.apiCpu ?? Number.NaN) ?? []);
    const withRedis = median(stores[1]?.runs.map((m) => m.apiCpu ?? Number.NaN) ?? []);
    const ratio = withRedis / memory;
    say(
      `Target: the API process's CPU per request with Redis within ${REDIS_TARGET}x memory's: ` +
        `${ratio.toFixed(2)}x, ${ratio <= REDIS_TARGET ? "met" : "not met"}.`,
    );
  } finally {
    for (const store of stores) await store.api.stop();
    await redis?.stop();
    await server.dropDatabase(name);
  }
}

function limiterTable(stores: Store[]): string {
  const memory = median(stores[0]?.runs.map((m) => m.apiCpu ?? Number.NaN) ?? []);
  const rows = stores.map((store) => {
    const api = median(store.runs.map((m) => m.apiCpu ?? Number.NaN));
    const rate = median(store.runs.map((m) => m.perSecond));
    const p99 = median(store.runs.map((m) => m.p99));
    return `| ${store.name} | ${Math.round(rate).toLocaleString("en")} | ${p99.toFixed(2)} | ${fixed(api)} | ${(api / memory).toFixed(2)}x | ${fixed(median(store.storeCpu))} |`;
  });
  return [
    "Rate limit store (medians over the rounds):",
    "",
    "| store | req/s | p99 ms | API CPU s/1k req | vs memory | store CPU s/1k req |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
  ].join("\n");
}

function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const fixed = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(3));
