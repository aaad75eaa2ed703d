import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { listenError } from "../core/listen-errors.ts";
import type { ProcessMetrics } from "./process-metrics.ts";

/**
 * Serves the process's metrics at `/metrics` (Prometheus text format), without a key: bind it to
 * a host only the scraper reaches (the loopback address by default).
 */
export async function startMetricsServer(
  metrics: ProcessMetrics,
  host: string,
  port: number,
): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method === "GET" && (request.url === "/metrics" || request.url?.startsWith("/metrics?"))) {
      metrics.registry.metrics().then(
        (text) => {
          response.writeHead(200, { "content-type": metrics.registry.contentType });
          response.end(text);
        },
        () => {
          response.writeHead(500).end();
        },
      );
      return;
    }
    response.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        listenError(error, {
          name: "metrics",
          host,
          port,
          flags: { port: "--metrics-port (or off)", host: "--metrics-host" },
        }),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
