/**
 * The API's configuration: where each chain's REST and gRPC listeners and the metrics listener
 * bind, the rate limit, the certificate gRPC presents, the public URL links are made of, and when
 * a chain counts as ready. Parsed once, every problem listed.
 */
import { redactUrl } from "../core/url.ts";
import { ConfigError } from "./config.ts";
import type { Variables } from "./environment.ts";
import { METRICS_HOST_DEFAULT, type MetricsListenerInput, parseMetricsListener } from "./metrics-config.ts";
import { wholeNumber } from "./option-values.ts";

export interface ApiListeners {
  name: string;
  restPort: number;
  grpcPort: number;
}

export interface ApiConfig extends ApiGuardConfig {
  host: string;
  /** Per chain, in the order the chains were given. */
  listeners: ApiListeners[];
  /** 0 picks a free port; undefined turns the metrics listener off. */
  metricsPort: number | undefined;
  /** Points per second per key, over both protocols; 0 turns the limit off. */
  rateLimit: number;
  /** Memory for each chain's cached answers, in MiB; 0 turns the cache off. */
  responseCacheMb: number;
  /** Unset: a self-signed certificate generated in the data directory. */
  tls: { certPath: string; keyPath: string } | undefined;

  // Links, readiness and the metrics listener's host.
  /** The base of every link handed out, per chain name (no trailing slash); a chain not in it: the request's host. */
  publicUrls: Record<string, string>;
  /** Per chain name: blocks the indexer may owe and the chain still be ready. */
  readyLagBlocks: Record<string, number>;
  /** The indexer's heartbeat may be this old, in seconds, and its chain still be ready. */
  readyHeartbeatSeconds: number;
  /** Per chain: how long the node's head may stay at one block, in seconds; 0 for no limit. */
  readyHeadStallSeconds: Record<string, number>;
  /** Where the metrics listener binds, whatever `host` is. */
  metricsHost: string;
  /** How long a request waits for its `minBlock`, in ms, before it is answered unavailable. */
  minBlockWaitMs: number;
  /** Open event streams per key, over every chain and both protocols. */
  maxStreamsPerKey: number;
  /** Open event streams of the process. */
  maxStreams: number;
  /** How long a stream's transport may stay full (its consumer reads nothing) before the stream ends, in ms. */
  streamStallTimeoutMs: number;
}

export interface ApiConfigInput extends ApiGuardConfigInput, MetricsListenerInput {
  host?: string;
  restPort?: string[];
  grpcPort?: string[];
  rateLimit?: string;
  responseCache?: string;
  tlsCert?: string;
  tlsKey?: string;
  publicUrl?: string[];
  readyLag?: string[];
  readyHeartbeat?: string;
  readyHeadStall?: string[];
  minBlockWait?: string;
  maxStreamsPerKey?: string;
  maxStreams?: string;
  streamStallTimeout?: string;
}

export const API_DEFAULTS = {
  host: "127.0.0.1",
  restPort: 8080,
  grpcPort: 50051,
  metricsPort: 9464,
  rateLimit: 30,
  responseCacheMb: 64,
  readyLagBlocks: 64,
  readyHeartbeatSeconds: 120,
  readyHeadStallSeconds: 600,
  metricsHost: METRICS_HOST_DEFAULT,
  minBlockWaitMs: 2_000,
  maxStreamsPerKey: 4,
  maxStreams: 500,
  streamStallTimeoutMs: 30_000,
};

const PORT = /^\d{1,5}$/;

/**
 * A port flag's value per chain. `N` is the first chain's port, the next chains taking N+1, N+2…;
 * `name=N` sets one chain's. Unset: the default base.
 */
function ports(
  values: string[] | undefined,
  envValue: string | undefined,
  chains: readonly string[],
  base: number,
  label: string,
  problems: string[],
): number[] {
  let first = base;
  const named = new Map<string, number>();
  const port = (text: string) => {
    const n = Number(text);
    if (!PORT.test(text) || n > 65_535) {
      problems.push(`${label}: ${text} is not a port (0 to 65535)`);
      return undefined;
    }
    return n;
  };
  for (const value of values ?? (envValue ? [envValue] : [])) {
    const eq = value.indexOf("=");
    if (eq < 0) {
      first = port(value) ?? first;
      continue;
    }
    const name = value.slice(0, eq);
    if (!chains.includes(name)) problems.push(`${label}: ${name} is not a configured chain`);
    const n = port(value.slice(eq + 1));
    if (n !== undefined) named.set(name, n);
  }
  // Port 0 picks a free port for every chain rather than counting up from 0.
  return chains.map((name, i) => named.get(name) ?? (first === 0 ? 0 : first + i));
}

/** A `[chain=]value` flag's values: the bare one for every chain, `chain=value` for one. */
function perChain(
  values: string[] | undefined,
  envValue: string | undefined,
  chains: readonly string[],
  label: string,
  problems: string[],
): { every: string | undefined; named: Map<string, string> } {
  let every: string | undefined;
  const named = new Map<string, string>();
  for (const value of values ?? (envValue ? [envValue] : [])) {
    const eq = value.indexOf("=");
    const name = eq < 0 ? "" : value.slice(0, eq);
    // A URL's query or path may hold `=`: only a plain name before it names a chain.
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
      every = value;
      continue;
    }
    if (!chains.includes(name)) problems.push(`${label}: ${name} is not a configured chain`);
    named.set(name, value.slice(eq + 1));
  }
  return { every, named };
}

/** A public URL as links are made of it: scheme, host and path, without a trailing slash. */
function publicBase(text: string, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    problems.push(`public url: ${text} is not a URL`);
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    problems.push(`public url: ${text} is not an http or https URL`);
    return undefined;
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    problems.push(`public url: ${text} has a user, a query or a fragment: give scheme, host and path only`);
    return undefined;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The public URLs and the readiness bounds. */
function parseServing(
  input: ApiConfigInput,
  env: Variables,
  chains: readonly string[],
  problems: string[],
): Pick<ApiConfig, "publicUrls" | "readyLagBlocks" | "readyHeartbeatSeconds" | "readyHeadStallSeconds"> {
  const urls = perChain(input.publicUrl, env.MINTLENS_PUBLIC_URL, chains, "public url", problems);
  const publicUrls: Record<string, string> = {};
  const every = urls.every === undefined ? undefined : publicBase(urls.every, problems);
  for (const name of chains) {
    const own = urls.named.get(name);
    const base = own === undefined ? every : publicBase(own, problems);
    if (base !== undefined) publicUrls[name] = base;
  }

  const lags = perChain(input.readyLag, env.MINTLENS_READY_LAG, chains, "ready lag", problems);
  const lagOf = (text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    if (/^\d{1,9}$/.test(text)) return Number(text);
    problems.push(`ready lag: ${text} is not a whole number of blocks`);
    return undefined;
  };
  const lagEvery = lagOf(lags.every) ?? API_DEFAULTS.readyLagBlocks;
  const readyLagBlocks: Record<string, number> = {};
  for (const name of chains) readyLagBlocks[name] = lagOf(lags.named.get(name)) ?? lagEvery;

  const stalls = perChain(
    input.readyHeadStall,
    env.MINTLENS_READY_HEAD_STALL,
    chains,
    "ready head stall",
    problems,
  );
  const stallOf = (text: string | undefined): number | undefined =>
    text === undefined
      ? undefined
      : wholeNumber(problems, "ready head stall", text, API_DEFAULTS.readyHeadStallSeconds, { min: 0 });
  const stallEvery = stallOf(stalls.every) ?? API_DEFAULTS.readyHeadStallSeconds;
  const readyHeadStallSeconds: Record<string, number> = {};
  for (const name of chains) readyHeadStallSeconds[name] = stallOf(stalls.named.get(name)) ?? stallEvery;

  const heartbeatRaw = input.readyHeartbeat ?? env.MINTLENS_READY_HEARTBEAT;
  let readyHeartbeatSeconds = API_DEFAULTS.readyHeartbeatSeconds;
  if (heartbeatRaw !== undefined) {
    if (/^\d{1,7}$/.test(heartbeatRaw) && Number(heartbeatRaw) >= 1)
      readyHeartbeatSeconds = Number(heartbeatRaw);
    else problems.push(`ready heartbeat: ${heartbeatRaw} is not a whole number of seconds from 1`);
  }

  return { publicUrls, readyLagBlocks, readyHeartbeatSeconds, readyHeadStallSeconds };
}

export function parseApiConfig(input: ApiConfigInput, env: Variables, chains: readonly string[]): ApiConfig {
  const problems: string[] = [];
  const host = input.host ?? env.MINTLENS_HOST ?? API_DEFAULTS.host;
  if (host.trim() === "") problems.push("host: empty");
  const rest = ports(
    input.restPort,
    env.MINTLENS_REST_PORT,
    chains,
    API_DEFAULTS.restPort,
    "rest port",
    problems,
  );
  const grpc = ports(
    input.grpcPort,
    env.MINTLENS_GRPC_PORT,
    chains,
    API_DEFAULTS.grpcPort,
    "grpc port",
    problems,
  );
  const taken = new Map<number, string>();
  chains.forEach((name, i) => {
    for (const [kind, port] of [
      ["rest", rest[i]],
      ["grpc", grpc[i]],
    ] as const) {
      if (port === undefined || port === 0) continue;
      const other = taken.get(port);
      if (other !== undefined) problems.push(`${name} ${kind} port: ${port} is also the ${other} port`);
      taken.set(port, `${name} ${kind}`);
    }
  });

  const { port: metricsPort, host: metricsHost } = parseMetricsListener(
    input,
    env,
    API_DEFAULTS.metricsPort,
    problems,
  );
  if (metricsPort !== undefined && metricsPort !== 0 && taken.has(metricsPort)) {
    problems.push(`metrics port: ${metricsPort} is also the ${taken.get(metricsPort)} port`);
  }

  const rateRaw = input.rateLimit ?? env.MINTLENS_RATE_LIMIT;
  let rateLimit = API_DEFAULTS.rateLimit;
  if (rateRaw !== undefined) {
    if (/^\d{1,9}$/.test(rateRaw)) rateLimit = Number(rateRaw);
    else problems.push(`rate limit: ${rateRaw} is not a whole number of points per second (0: no limit)`);
  }

  const cacheRaw = input.responseCache ?? env.MINTLENS_RESPONSE_CACHE_MB;
  let responseCacheMb = API_DEFAULTS.responseCacheMb;
  if (cacheRaw !== undefined) {
    if (/^\d{1,6}$/.test(cacheRaw)) responseCacheMb = Number(cacheRaw);
    else problems.push(`response cache: ${cacheRaw} is not a whole number of MiB (0: no cache)`);
  }

  const certPath = input.tlsCert ?? env.MINTLENS_TLS_CERT;
  const keyPath = input.tlsKey ?? env.MINTLENS_TLS_KEY;
  if ((certPath === undefined) !== (keyPath === undefined)) {
    problems.push(
      "tls: give both --tls-cert and --tls-key, or neither (a self-signed certificate is generated)",
    );
  }
  const serving = parseServing(input, env, chains, problems);
  const guard = parseApiGuardConfig(input, env, problems);
  const minBlockWaitMs = parseMinBlockWait(input, env, problems);
  const streams = parseStreamLimits(input, env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...guard,
    host,
    listeners: chains.map((name, i) => ({ name, restPort: rest[i] as number, grpcPort: grpc[i] as number })),
    metricsPort,
    metricsHost,
    rateLimit,
    responseCacheMb,
    tls: certPath !== undefined && keyPath !== undefined ? { certPath, keyPath } : undefined,
    ...serving,
    minBlockWaitMs,
    ...streams,
  };
}

/** The event streams' limits: counts from 1, and a stall timeout of 1 to 3600 seconds (a fraction allowed). */
function parseStreamLimits(
  input: ApiConfigInput,
  env: Variables,
  problems: string[],
): Pick<ApiConfig, "maxStreamsPerKey" | "maxStreams" | "streamStallTimeoutMs"> {
  const count = (raw: string | undefined, fallback: number, label: string) => {
    if (raw === undefined) return fallback;
    if (/^\d{1,7}$/.test(raw) && Number(raw) >= 1) return Number(raw);
    problems.push(`${label}: ${raw} is not a whole number of streams from 1`);
    return fallback;
  };
  const maxStreamsPerKey = count(
    input.maxStreamsPerKey ?? env.MINTLENS_MAX_STREAMS_PER_KEY,
    API_DEFAULTS.maxStreamsPerKey,
    "max streams per key",
  );
  const maxStreams = count(
    input.maxStreams ?? env.MINTLENS_MAX_STREAMS,
    API_DEFAULTS.maxStreams,
    "max streams",
  );
  const stallRaw = input.streamStallTimeout ?? env.MINTLENS_STREAM_STALL_TIMEOUT;
  let streamStallTimeoutMs = API_DEFAULTS.streamStallTimeoutMs;
  if (stallRaw !== undefined) {
    const seconds = Number(stallRaw);
    if (/^\d{1,4}(\.\d{1,3})?$/.test(stallRaw) && seconds > 0 && seconds <= 3_600) {
      streamStallTimeoutMs = Math.round(seconds * 1000);
    } else
      problems.push(`stream stall timeout: ${stallRaw} is not a number of seconds above 0, at most 3600`);
  }
  return { maxStreamsPerKey, maxStreams, streamStallTimeoutMs };
}

/** The wait for a request's `minBlock`: at most a minute, since the request holds its client meanwhile. */
function parseMinBlockWait(input: ApiConfigInput, env: Variables, problems: string[]): number {
  const raw = input.minBlockWait ?? env.MINTLENS_MIN_BLOCK_WAIT;
  if (raw === undefined) return API_DEFAULTS.minBlockWaitMs;
  if (/^\d{1,5}$/.test(raw) && Number(raw) <= 60_000) return Number(raw);
  problems.push(`min block wait: ${raw} is not a whole number of milliseconds from 0 to 60000`);
  return API_DEFAULTS.minBlockWaitMs;
}

/**
 * Where keys' points are counted: in each process's memory, or in a Redis or PostgreSQL every API
 * process shares, so that a key's limit holds across them.
 */
export type RateLimitStoreConfig =
  | { kind: "memory" }
  | { kind: "redis"; url: string }
  | { kind: "postgres"; url: string };

/** How much a key may ask beyond its rate at once, where its points are counted, and how often an address may fail to authenticate. */
export interface ApiGuardConfig {
  /** Points a key may spend at once after a pause, on top of its rate. */
  rateBurst: number;
  rateLimitStore: RateLimitStoreConfig;
  /** Failed authentications per minute per IPv4 address or IPv6 /64; 0 turns the limit off. */
  authFailureLimit: number;
}

export interface ApiGuardConfigInput {
  rateBurst?: string;
  rateLimitStore?: string;
  authFailures?: string;
}

export const API_GUARD_DEFAULTS: ApiGuardConfig = {
  rateBurst: 10,
  rateLimitStore: { kind: "memory" },
  authFailureLimit: 20,
};

/** `memory`, a `redis://` (or `rediss://`) URL or a `postgres://` (or `postgresql://`) URL. */
export function parseRateLimitStore(text: string): RateLimitStoreConfig | { problem: string } {
  if (text === "memory") return { kind: "memory" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "rate limit store: neither memory nor a URL (redis://… or postgres://…)" };
  }
  if (url.protocol === "redis:" || url.protocol === "rediss:") return { kind: "redis", url: text };
  if (url.protocol === "postgres:" || url.protocol === "postgresql:") return { kind: "postgres", url: text };
  return {
    problem: `rate limit store: ${redactUrl(text)} is not memory, a redis:// URL or a postgres:// URL`,
  };
}

function parseApiGuardConfig(input: ApiGuardConfigInput, env: Variables, problems: string[]): ApiGuardConfig {
  const burstRaw = input.rateBurst ?? env.MINTLENS_RATE_BURST;
  let rateBurst = API_GUARD_DEFAULTS.rateBurst;
  if (burstRaw !== undefined) {
    if (/^\d{1,9}$/.test(burstRaw) && Number(burstRaw) >= 1) rateBurst = Number(burstRaw);
    else problems.push(`rate burst: ${burstRaw} is not a whole number of points from 1`);
  }
  const storeRaw = input.rateLimitStore ?? env.MINTLENS_RATE_LIMIT_STORE;
  let rateLimitStore = API_GUARD_DEFAULTS.rateLimitStore;
  if (storeRaw !== undefined) {
    const parsed = parseRateLimitStore(storeRaw);
    if ("problem" in parsed) problems.push(parsed.problem);
    else rateLimitStore = parsed;
  }
  const failuresRaw = input.authFailures ?? env.MINTLENS_AUTH_FAILURES;
  let authFailureLimit = API_GUARD_DEFAULTS.authFailureLimit;
  if (failuresRaw !== undefined) {
    if (/^\d{1,9}$/.test(failuresRaw)) authFailureLimit = Number(failuresRaw);
    else
      problems.push(
        `auth failures: ${failuresRaw} is not a whole number of failed authentications per minute (0: no limit)`,
      );
  }
  return { rateBurst, rateLimitStore, authFailureLimit };
}

/** The API's own connections to the store: apart from the indexer's and the metadata worker's. */
export interface ApiPoolConfig {
  /** Most connections the API's queries (and key checks, and version polls) use at once. */
  poolSize: number;
  /** A query running longer is cancelled by the server and answered as unavailable; 0 for no limit. */
  statementTimeoutMs: number;
}

export interface ApiPoolConfigInput {
  apiPoolSize?: string;
  statementTimeout?: string;
}

export const API_POOL_DEFAULTS: ApiPoolConfig = { poolSize: 10, statementTimeoutMs: 5000 };

export function parseApiPoolConfig(input: ApiPoolConfigInput, env: Variables): ApiPoolConfig {
  const problems: string[] = [];
  const sizeRaw = input.apiPoolSize ?? env.MINTLENS_API_POOL_SIZE;
  let poolSize = API_POOL_DEFAULTS.poolSize;
  if (sizeRaw !== undefined) {
    if (/^\d{1,4}$/.test(sizeRaw) && Number(sizeRaw) >= 1) poolSize = Number(sizeRaw);
    else problems.push(`api pool size: ${sizeRaw} is not a whole number of connections from 1 to 9999`);
  }
  const timeoutRaw = input.statementTimeout ?? env.MINTLENS_STATEMENT_TIMEOUT_MS;
  let statementTimeoutMs = API_POOL_DEFAULTS.statementTimeoutMs;
  if (timeoutRaw !== undefined) {
    // PostgreSQL takes at most 2^31-1 ms.
    if (/^\d{1,10}$/.test(timeoutRaw) && Number(timeoutRaw) <= 2_147_483_647)
      statementTimeoutMs = Number(timeoutRaw);
    else
      problems.push(`statement timeout: ${timeoutRaw} is not a whole number of milliseconds (0: no limit)`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { poolSize, statementTimeoutMs };
}
