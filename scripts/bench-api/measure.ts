/**
 * One operation under load: autocannon's connections on 127.0.0.1 rotating over the operation's
 * paths for a fixed time, after a warm-up. Latencies are kept from each response's own timing (to
 * the microsecond; autocannon's histogram keeps whole milliseconds), and the CPU the API process
 * and PostgreSQL used during the run is read from /proc.
 */
import autocannon from "autocannon";
import { processCpu, processTreeCpu } from "../bench/process-cpu.ts";
import type { Operation } from "./operations.ts";

export interface LoadSettings {
  connections: number;
  /** Seconds measured, after `warmup` seconds that are not. */
  duration: number;
  warmup: number;
  /** Requests measured at most: the run stops at whichever of `duration` and this comes first. */
  maxRequests?: number;
  apiKey: string;
  apiPid: number;
  /** The embedded PostgreSQL's postmaster, whose backends are its children; undefined for another server. */
  postgresPid: number | undefined;
}

export interface Measurement {
  operation: Operation;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** Answers other than 2xx, by status; and requests that got no answer (errors, timeouts). */
  statuses: Record<string, number>;
  non2xx: number;
  failed: number;
  /** CPU seconds per 1,000 requests; undefined when it could not be read. */
  apiCpu: number | undefined;
  postgresCpu: number | undefined;
}

export async function measure(
  url: string,
  operation: Operation,
  settings: LoadSettings,
): Promise<Measurement> {
  if (settings.warmup > 0)
    await run(url, operation, { ...settings, maxRequests: undefined }, settings.warmup);
  const apiBefore = processCpu(settings.apiPid);
  const postgresBefore = settings.postgresPid === undefined ? 0 : processTreeCpu(settings.postgresPid);
  const { result, latencies, statuses } = await run(url, operation, settings, settings.duration);
  const api = processCpu(settings.apiPid) - apiBefore;
  const postgres =
    settings.postgresPid === undefined ? 0 : processTreeCpu(settings.postgresPid) - postgresBefore;

  const answered = latencies.length;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(answered - 1, Math.floor(q * answered))] ?? Number.NaN;
  const non2xx = Object.entries(statuses)
    .filter(([status]) => !status.startsWith("2"))
    .reduce((sum, [, n]) => sum + n, 0);
  const perThousand = (cpu: number) => (answered > 0 ? (cpu * 1000) / answered : undefined);
  return {
    operation,
    requests: answered,
    perSecond: answered / result.duration,
    p50: at(0.5),
    p99: at(0.99),
    statuses,
    non2xx,
    failed: result.errors + result.timeouts,
    apiCpu: perThousand(api),
    postgresCpu: settings.postgresPid === undefined ? undefined : perThousand(postgres),
  };
}

async function run(
  url: string,
  operation: Operation,
  settings: LoadSettings,
  seconds: number,
): Promise<{ result: autocannon.Result; latencies: number[]; statuses: Record<string, number> }> {
  let next = 0;
  const { paths } = operation;
  const instance = autocannon({
    url,
    connections: settings.connections,
    duration: seconds,
    timeout: 10,
    headers: operation.keyed ? { "x-api-key": settings.apiKey } : {},
    requests: [
      {
        method: "GET",
        // One counter for every connection, so that concurrent requests ask for different things.
        setupRequest: (request) => {
          request.path = paths[next++ % paths.length] as string;
          return request;
        },
      },
    ],
  });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  instance.on("response", (_client, status, _bytes, ms) => {
    latencies.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (latencies.length === settings.maxRequests) instance.stop();
  });
  const result = await instance;
  return { result, latencies, statuses };
}
