/**
 * Keys sending at once, each at its own fixed rate (autocannon's `overallRate`), and one window
 * measured out of the middle of their run: what each key got back, by status and bytes, with the
 * latency of every answer, and the CPU the API process, PostgreSQL and this process used meanwhile.
 * The warm-up before the window lets the answer cache fill and a limited key's bucket drain, so the
 * window sees the steady state.
 */
import autocannon from "autocannon";
import { processCpu, processTreeCpu } from "../bench/process-cpu.ts";

export interface PacedClient {
  name: string;
  apiKey: string;
  /** Sent in turn; a client that must never repeat a question needs more than it can send. */
  paths: readonly string[];
  /** Requests per second, over every connection. */
  rate: number;
  connections: number;
}

export interface ClientCounts {
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Bytes of the answers, headers included. */
  bytes: number;
  /** Milliseconds, of every answer. */
  latencies: number[];
  /** Requests that got no answer: connection errors and timeouts. */
  failed: number;
  /** Paths sent over the whole run, warm-up included. */
  sent: number;
}

export interface Window {
  /** Wall seconds of the window. */
  seconds: number;
  clients: ClientCounts[];
  /** CPU seconds used in the window. */
  apiCpu: number;
  /** Undefined for a PostgreSQL server that is not the embedded one. */
  postgresCpu: number | undefined;
  /** This process: autocannon reading every answer. */
  loadCpu: number;
}

/** Seconds a client may run past the window before it is stopped anyway. */
const SLACK_SECONDS = 5;
/** Seconds to wait for an answer. */
const TIMEOUT_SECONDS = 10;

export async function measureWindow(options: {
  url: string;
  clients: readonly PacedClient[];
  warmup: number;
  duration: number;
  apiPid: number;
  postgresPid: number | undefined;
}): Promise<Window> {
  const { warmup, duration, postgresPid } = options;
  let measuring = false;
  const counts = options.clients.map(
    (): ClientCounts => ({ statuses: {}, bytes: 0, latencies: [], failed: 0, sent: 0 }),
  );
  const instances = options.clients.map((client, i) => {
    const count = counts[i] as ClientCounts;
    const instance = autocannon({
      url: options.url,
      connections: client.connections,
      overallRate: client.rate,
      duration: warmup + duration + SLACK_SECONDS,
      timeout: TIMEOUT_SECONDS,
      headers: { "x-api-key": client.apiKey },
      requests: [
        {
          method: "GET",
          setupRequest: (request) => {
            request.path = client.paths[count.sent++ % client.paths.length] as string;
            return request;
          },
        },
      ],
    });
    instance.on("response", (_client, status, bytes, ms) => {
      if (!measuring) return;
      count.statuses[status] = (count.statuses[status] ?? 0) + 1;
      count.bytes += bytes;
      count.latencies.push(ms);
    });
    instance.on("reqError", () => {
      if (measuring) count.failed++;
    });
    return instance;
  });
  const finished = Promise.all(instances.map((instance) => Promise.resolve(instance)));

  const snapshot = () => ({
    at: performance.now(),
    api: processCpu(options.apiPid),
    postgres: postgresPid === undefined ? 0 : processTreeCpu(postgresPid),
    load: process.cpuUsage(),
  });
  const wait = (seconds: number) => new Promise((done) => setTimeout(done, seconds * 1000));
  try {
    await wait(warmup);
    const before = snapshot();
    measuring = true;
    await wait(duration);
    measuring = false;
    const after = snapshot();
    const load = process.cpuUsage(before.load);
    return {
      seconds: (after.at - before.at) / 1000,
      clients: counts,
      apiCpu: after.api - before.api,
      postgresCpu: postgresPid === undefined ? undefined : after.postgres - before.postgres,
      loadCpu: (load.user + load.system) / 1e6,
    };
  } finally {
    for (const instance of instances) instance.stop();
    await finished;
  }
}

/** The most requests a client at `rate` sends in a run of `warmup` + `duration` seconds. */
export function requestsAtMost(rate: number, warmup: number, duration: number): number {
  return Math.ceil(rate * (warmup + duration + SLACK_SECONDS));
}

/** The `q` quantile of sorted `values`; NaN for none. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
