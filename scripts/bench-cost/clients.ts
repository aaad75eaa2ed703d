/**
 * Keys sending at once, each at its own steady rate, and one window measured out of the middle of
 * their run: what each key got back, by status and bytes, with the latency of every answer, and
 * the CPU the API process, PostgreSQL and this process used meanwhile. The warm-up before the
 * window lets the answer cache fill and a limited key pay the debt of its first answers, so the
 * window sees the steady state.
 *
 * A key sends one request every 1/rate seconds whether or not earlier ones are answered, as a
 * client on a timer does, up to `inFlight` unanswered at once (its connections); a request due
 * while that many are out is not sent, and counted. The requests are spread evenly over each
 * second rather than sent at the start of it (as autocannon's `overallRate` does): a burst of 20
 * at once would be refused by a bucket of 10 points whatever the rate.
 */
import { Agent, request } from "node:http";
import { processCpu, processTreeCpu } from "../bench/process-cpu.ts";

export interface PacedClient {
  apiKey: string;
  /** Sent in turn; a client that must never repeat a question needs `requestsAtMost` of them. */
  paths: readonly string[];
  /** Requests per second. */
  rate: number;
  /** Requests unanswered at once, at most: the client's connections. */
  inFlight: number;
}

export interface ClientCounts {
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Bytes of the answers' bodies. */
  bytes: number;
  /** Milliseconds from sending to the last byte, of every answer. */
  latencies: number[];
  /** Requests that got no answer: connection errors and timeouts. */
  failed: number;
  /** Requests due while `inFlight` were out, so not sent. */
  skipped: number;
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
  /** This process, which sends the requests and reads every answer. */
  loadCpu: number;
}

/** Milliseconds to wait for an answer. */
const TIMEOUT_MS = 10_000;

/** The most requests a client at `rate` sends in a run of `warmup` + `duration` seconds. */
export function requestsAtMost(rate: number, warmup: number, duration: number): number {
  return Math.ceil(rate * (warmup + duration)) + 1;
}

export async function measureWindow(options: {
  url: string;
  clients: readonly PacedClient[];
  warmup: number;
  duration: number;
  apiPid: number;
  postgresPid: number | undefined;
}): Promise<Window> {
  const { warmup, duration, postgresPid } = options;
  const target = new URL(options.url);
  const started = performance.now();
  const end = started + (warmup + duration) * 1000;
  let measuring = false;
  const agents: Agent[] = [];

  const runs = options.clients.map((client) => {
    const counts: ClientCounts = { statuses: {}, bytes: 0, latencies: [], failed: 0, skipped: 0, sent: 0 };
    const agent = new Agent({ keepAlive: true, maxSockets: client.inFlight });
    agents.push(agent);
    let out = 0;
    const send = () => {
      if (out >= client.inFlight) {
        if (measuring) counts.skipped++;
        return;
      }
      out++;
      const path = client.paths[counts.sent++ % client.paths.length] as string;
      const sentAt = performance.now();
      let settled = false;
      const settle = (status: number | undefined, bytes: number) => {
        if (settled) return;
        settled = true;
        out--;
        if (!measuring) return;
        if (status === undefined) {
          counts.failed++;
          return;
        }
        counts.statuses[status] = (counts.statuses[status] ?? 0) + 1;
        counts.bytes += bytes;
        counts.latencies.push(performance.now() - sentAt);
      };
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path,
          agent,
          headers: { "x-api-key": client.apiKey },
          timeout: TIMEOUT_MS,
        },
        (response) => {
          let bytes = 0;
          response.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
          });
          response.on("end", () => settle(response.statusCode, bytes));
          response.on("error", () => settle(undefined, 0));
        },
      );
      req.on("timeout", () => req.destroy());
      req.on("error", () => settle(undefined, 0));
      req.end();
    };
    // The n-th request is due at started + n / rate: a late timer sends the ones it owes at once.
    const interval = 1000 / client.rate;
    const due = requestsAtMost(client.rate, warmup, duration);
    const paced = (async () => {
      for (let n = 0; n < due; n++) {
        const at = started + n * interval;
        if (at >= end) break;
        const wait = at - performance.now();
        if (wait > 0) await new Promise((done) => setTimeout(done, wait));
        send();
      }
    })();
    return { counts, paced };
  });

  const snapshot = () => ({
    at: performance.now(),
    api: processCpu(options.apiPid),
    postgres: postgresPid === undefined ? 0 : processTreeCpu(postgresPid),
    load: process.cpuUsage(),
  });
  const until = (t: number) => new Promise((done) => setTimeout(done, Math.max(0, t - performance.now())));
  try {
    await until(started + warmup * 1000);
    const before = snapshot();
    measuring = true;
    await until(end);
    measuring = false;
    const after = snapshot();
    const load = process.cpuUsage(before.load);
    return {
      seconds: (after.at - before.at) / 1000,
      clients: runs.map((r) => r.counts),
      apiCpu: after.api - before.api,
      postgresCpu: postgresPid === undefined ? undefined : after.postgres - before.postgres,
      loadCpu: (load.user + load.system) / 1e6,
    };
  } finally {
    await Promise.all(runs.map((r) => r.paced));
    // Requests still out are not counted; closing their sockets ends them.
    for (const agent of agents) agent.destroy();
  }
}

/** The `q` quantile of sorted `values`; NaN for none. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
