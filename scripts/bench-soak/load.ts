/**
 * Steady load on the API for the whole soak: autocannon at a fixed rate over all the REST
 * operations in turn (each rotating over its own paths), so that every part of the API keeps
 * working while the process is watched. The answers are counted by status.
 */
import autocannon from "autocannon";

export interface LoadOperation {
  name: string;
  paths: readonly string[];
}

export interface LoadCounts {
  answered: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
}

export interface SteadyLoad {
  /** Answers so far. */
  counts(): LoadCounts;
  /** Ends the load and waits for autocannon to finish. */
  stop(): Promise<{ errors: number; timeouts: number }>;
}

export function startSteadyLoad(options: {
  url: string;
  apiKey: string;
  operations: readonly LoadOperation[];
  /** Requests per second, over every connection. */
  rate: number;
  connections: number;
  /** Seconds at most; `stop` ends it sooner. */
  seconds: number;
}): SteadyLoad {
  const operations = options.operations.filter((o) => o.paths.length > 0);
  if (operations.length === 0) throw new Error("no operation has a path to load");
  const cursors = operations.map(() => 0);
  let next = 0;
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    overallRate: options.rate,
    duration: options.seconds,
    timeout: 10,
    // Images are public; the key does no harm there.
    headers: { "x-api-key": options.apiKey },
    requests: [
      {
        method: "GET",
        setupRequest: (request) => {
          const at = next++ % operations.length;
          const operation = operations[at] as LoadOperation;
          const cursor = cursors[at] ?? 0;
          cursors[at] = cursor + 1;
          request.path = operation.paths[cursor % operation.paths.length] as string;
          return request;
        },
      },
    ],
  });
  const counts: LoadCounts = { answered: 0, statuses: {} };
  instance.on("response", (_client, status) => {
    counts.answered++;
    counts.statuses[status] = (counts.statuses[status] ?? 0) + 1;
  });
  const finished = Promise.resolve(instance);
  return {
    counts: () => ({ answered: counts.answered, statuses: { ...counts.statuses } }),
    async stop() {
      instance.stop();
      const result = await finished;
      return { errors: result.errors, timeouts: result.timeouts };
    },
  };
}
