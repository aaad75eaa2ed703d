/** The part of autocannon 9's programmatic API the API and soak benchmarks use (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Requests per second over every connection; 0 (the default) for as many as answered. */
      overallRate?: number;
      /** Seconds. */
      duration?: number;
      /** Seconds to wait for an answer. */
      timeout?: number;
      headers?: Record<string, string>;
      requests?: Array<Request & { setupRequest?: (request: Request, context: object) => Request }>;
    }

    interface Result {
      /** Seconds the run lasted. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats: Record<string, { count: number }>;
      requests: { total: number; sent: number };
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
      on(
        event: "response",
        listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void,
      ): this;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export default autocannon;
}
