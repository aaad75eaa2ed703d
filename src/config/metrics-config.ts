/**
 * Where a process serves its Prometheus metrics: a port (0 picks a free one; `off`, none) and the
 * address it binds, whatever the process's other listeners bind. The API's commands serve one by
 * default; the indexer's and the metadata worker's, which often run several to a host (one per
 * chain), only when given a port.
 */
import type { Variables } from "./environment.ts";

export interface MetricsListener {
  /** 0 picks a free port; undefined turns the listener off. */
  port: number | undefined;
  host: string;
}

export interface MetricsListenerInput {
  metricsPort?: string;
  metricsHost?: string;
}

export const METRICS_HOST_DEFAULT = "127.0.0.1";

export function parseMetricsListener(
  input: MetricsListenerInput,
  env: Variables,
  defaultPort: number | undefined,
  problems: string[],
): MetricsListener {
  const raw = input.metricsPort ?? env.MINTLENS_METRICS_PORT;
  let port = defaultPort;
  if (raw === "off") port = undefined;
  else if (raw !== undefined) {
    port = /^\d{1,5}$/.test(raw) && Number(raw) <= 65_535 ? Number(raw) : undefined;
    if (port === undefined) problems.push(`metrics port: ${raw} is not a port (0 to 65535) or off`);
  }
  const host = input.metricsHost ?? env.MINTLENS_METRICS_HOST ?? METRICS_HOST_DEFAULT;
  if (host.trim() === "") problems.push("metrics host: empty");
  return { port, host };
}
