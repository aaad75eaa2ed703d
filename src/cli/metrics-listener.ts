import type { Command } from "commander";
import type { MetricsListener } from "../config/metrics-config.ts";
import type { ProcessMetrics } from "../metrics/process-metrics.ts";
import { startMetricsServer } from "../metrics/server.ts";
import type { Lifecycle } from "./shutdown.ts";

/** `--metrics-port` and `--metrics-host`; `portDefault` tells the default in the help. */
export function addMetricsOptions(command: Command, portDefault: string): Command {
  return command
    .option(
      "--metrics-port <port>",
      `Prometheus metrics port, 0 for a free one, or off (env MINTLENS_METRICS_PORT, default ${portDefault})`,
    )
    .option(
      "--metrics-host <address>",
      "address the metrics listener binds, whatever --host is (env MINTLENS_METRICS_HOST, default 127.0.0.1)",
    );
}

/** Serves `metrics` at `/metrics` until `lifecycle` ends, and says where; nothing when the port is off. */
export async function serveMetrics(
  metrics: ProcessMetrics,
  listener: MetricsListener,
  lifecycle: Lifecycle,
  say: (line: string) => void,
): Promise<void> {
  if (listener.port === undefined) return;
  const server = await startMetricsServer(metrics, listener.host, listener.port);
  lifecycle.defer(() => server.close());
  const shown = listener.host.includes(":") ? `[${listener.host}]` : listener.host;
  say(`metrics: http://${shown}:${server.port}/metrics`);
}
