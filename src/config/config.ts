import { z } from "zod";
import { CHAIN_PRESETS } from "./chains.ts";
import { checkChainNames, parseDatabaseUrls } from "./database-urls.ts";
import type { Variables } from "./environment.ts";
import { parseStreamRetention } from "./stream-config.ts";

export type ContractDiscovery = "auto" | "traces" | "receipts" | "events";

/** A liquidity pool named in the configuration; its tokens are read from the chain at start. */
export interface RatePoolReference {
  kind: "v2" | "v3";
  /** Lower-case. */
  address: `0x${string}`;
}

export type OwnershipHistoryMode = "off" | "logs";

export interface ChainConfig {
  name: string;
  chainId: number;
  nativeSymbol: string;
  rpcUrl: string;
  startBlock: number;
  confirmations: number;
  /** How deployments are found: call traces, receipts (no factories), or first-seen events only. */
  contractDiscovery: ContractDiscovery;
  /**
   * Where the ownership of collections older than the start block comes from: nowhere (`off`), or
   * their transfer logs before it (`logs`, see `indexer/ownership-history.ts`).
   */
  ownershipHistory?: OwnershipHistoryMode;
  /** ERC-20 tokens worth exactly one native coin (the wrapped coin, pegged pools), lower-case; unset: the presets of a known chain id. */
  nativePegged?: readonly `0x${string}`[];
  /** Uniswap V2 pairs and V3 pools exchange rates come from; unset: the presets of a known chain id. */
  ratePools?: readonly RatePoolReference[];
  /** Tokens worth one US dollar each, lower-case; unset: the presets of a known chain id. */
  usdTokens?: readonly `0x${string}`[];
  /** Seconds each pool's price is averaged over; unset: 30 minutes. */
  rateWindowSeconds?: number;
  /** Least depth of a pool state that counts, in wei; unset: the preset of the chain id, else 10 coins. */
  rateMinDepth?: bigint;
  /** A rate beyond this factor of the window before it is an outlier, as `num / den`; unset: 2. */
  rateJump?: { num: bigint; den: bigint };
}

export interface IndexerTuning {
  pollIntervalMs: number;
  /** Most blocks in one batch (one transaction). */
  maxBlocksPerBatch: number;
  /** Batches fetched ahead of the one being written. */
  prefetch: number;
  rpcBatchSize: number;
  rpcTimeoutMs: number;
  rpcRetries: number;
  maxLogRange: number;
}

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

/** Where the data goes and how much is logged: what every command needs. */
export interface DatabaseConfig {
  /** The default database (API keys, and every chain not given one of its own); unset: an embedded PostgreSQL in `dataDir`. */
  databaseUrl: string | undefined;
  /** Chain name → URL of the database that holds that chain's data alone (`--database-url chain=url`). */
  chainDatabaseUrls: Readonly<Record<string, string>>;
  dataDir: string;
  logLevel: LogLevel;
}

export interface Config extends DatabaseConfig {
  chains: ChainConfig[];
  tuning: IndexerTuning;
  /** Connections the indexers read through (each chain also writes through one of its own). */
  indexerPoolSize: number;
  /** Days the live event stream keeps its events (see stream-config.ts). */
  streamRetentionDays: number;
}

/** Raw values as they come from flags; a per-chain value is `N` (every chain) or `name=N`. */
export interface ConfigInput {
  chain?: string[];
  rpcUrl?: string[];
  chainId?: string[];
  nativeSymbol?: string[];
  startBlock?: string[];
  confirmations?: string[];
  contractDiscovery?: string[];
  ownershipHistory?: string[];
  nativePegged?: string[];
  ratePools?: string[];
  usdTokens?: string[];
  rateWindow?: string[];
  rateMinDepth?: string[];
  rateJump?: string[];
  /** `url` (the default database) or `chain=url`, repeatable. */
  databaseUrl?: string | string[];
  dataDir?: string;
  logLevel?: string;
  pollInterval?: string;
  batchBlocks?: string;
  prefetch?: string;
  rpcBatchSize?: string;
  rpcTimeout?: string;
  rpcRetries?: string;
  maxLogRange?: string;
  indexerPoolSize?: string;
  /** Days of the live event stream kept (`index` and `start`). */
  streamRetention?: string;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

const NAME_RE = /^[a-z][a-z0-9-]*$/;

const uint = (label: string) =>
  z
    .string()
    .regex(/^\d+$/, `${label} must be a whole number`)
    .transform(Number)
    .refine(Number.isSafeInteger, `${label} is too large`);

const ADDRESS_RE = /^0x[0-9a-f]{40}$/;

/** A comma-separated list, trimmed and lower-cased, empty items dropped. */
const list = z.string().transform((v) =>
  v
    .split(",")
    .map((a) => a.trim().toLowerCase())
    .filter((a) => a !== ""),
);

const addressList = list
  .refine((items) => items.every((a) => ADDRESS_RE.test(a)), "must be 0x addresses, comma-separated")
  .transform((items) => items as `0x${string}`[]);

const poolList = list
  .refine(
    (items) => items.every((p) => /^v[23]:0x[0-9a-f]{40}$/.test(p)),
    "must be v2:0x… or v3:0x… pools, comma-separated",
  )
  .transform((items) =>
    items.map((p): RatePoolReference => {
      const [kind, address] = p.split(":");
      return { kind: kind as "v2" | "v3", address: address as `0x${string}` };
    }),
  );

/** A duration: seconds, or a number with s, m or h. */
const duration = z
  .string()
  .regex(/^\d+[smh]?$/, "must be a duration such as 1800, 90s, 30m or 1h")
  .transform((v) => {
    const unit = v.at(-1);
    const scale = unit === "h" ? 3600 : unit === "m" ? 60 : 1;
    return Number.parseInt(v, 10) * scale;
  })
  .refine(Number.isSafeInteger, "is too large");

/** A decimal number as an exact fraction (`1.5` is 3/2). */
const DECIMAL_RE = /^\d+(\.\d+)?$/;
function decimalFraction(v: string): { num: bigint; den: bigint } {
  const [whole = "0", fraction = ""] = v.split(".");
  const den = 10n ** BigInt(fraction.length);
  return { num: BigInt(whole) * den + BigInt(fraction || "0"), den };
}

/** Whole native coins, decimals allowed down to the wei, as wei. */
const coins = z
  .string()
  .regex(DECIMAL_RE, "must be a number of native coins, such as 10 or 0.5")
  .refine((v) => (v.split(".")[1]?.length ?? 0) <= 18, "has more than 18 decimals")
  .transform((v) => {
    const { num, den } = decimalFraction(v);
    return (num * 10n ** 18n) / den;
  });

const jumpFactor = z
  .string()
  .regex(DECIMAL_RE, "must be a factor such as 2 or 1.5")
  .transform(decimalFraction)
  .refine((f) => f.num > f.den, "must be more than 1");

const rpcUrl = z
  .string()
  .refine((v) => /^https?:\/\/./.test(v) && URL.canParse(v), "rpc url must be an http(s) URL");

/**
 * Parses flags and environment once into a validated configuration. Every problem is
 * collected, so one run tells the operator everything that is wrong.
 */
export function parseConfig(input: ConfigInput, env: Variables): Config {
  const problems: string[] = [];
  const field = fieldParser(problems);

  const chainSpecs = input.chain?.length ? input.chain : splitList(env.MINTLENS_CHAINS);
  const chains: ChainConfig[] = [];
  const seenNames = new Set<string>();
  const seenIds = new Set<number>();
  if (chainSpecs.length === 0)
    problems.push("chain: name at least one chain (--chain ethereum=https://node.example)");

  for (const spec of chainSpecs) {
    const eq = spec.indexOf("=");
    const name = (eq < 0 ? spec : spec.slice(0, eq)).trim().toLowerCase();
    const inlineUrl = eq < 0 ? undefined : spec.slice(eq + 1).trim();
    if (!NAME_RE.test(name)) {
      problems.push(`chain: "${name}" is not a valid chain name (lower-case letters, digits and dashes)`);
      continue;
    }
    if (seenNames.has(name)) problems.push(`chain: ${name} is given twice`);
    seenNames.add(name);
    const preset = CHAIN_PRESETS[name];
    const envKey = (key: string) => env[`MINTLENS_${name.toUpperCase().replaceAll("-", "_")}_${key}`];
    const pick = (values: string[] | undefined, key: string) => perChain(values, name) ?? envKey(key);

    const rawUrl =
      inlineUrl ??
      pick(input.rpcUrl, "RPC_URL") ??
      (chainSpecs.length === 1 ? env.MINTLENS_RPC_URL : undefined);
    const url = rawUrl === undefined ? undefined : field(`${name} rpc url`, rpcUrl, rawUrl);
    if (rawUrl === undefined) {
      problems.push(
        `${name} rpc url: missing (--chain ${name}=URL, --rpc-url or MINTLENS_${name.toUpperCase().replaceAll("-", "_")}_RPC_URL)`,
      );
    }
    const chainIdRaw = pick(input.chainId, "CHAIN_ID");
    const chainId =
      chainIdRaw !== undefined ? field(`${name} chain id`, uint("chain id"), chainIdRaw) : preset?.chainId;
    if (chainId === undefined && chainIdRaw === undefined) {
      problems.push(`${name} chain id: unknown chain, give --chain-id ${name}=N`);
    }
    if (chainId !== undefined && seenIds.has(chainId))
      problems.push(`${name} chain id: ${chainId} is used twice`);
    if (chainId !== undefined) seenIds.add(chainId);
    const nativeSymbol = pick(input.nativeSymbol, "NATIVE_SYMBOL") ?? preset?.nativeSymbol;
    if (nativeSymbol === undefined)
      problems.push(`${name} native symbol: unknown chain, give --native-symbol ${name}=SYMBOL`);
    const startRaw = pick(input.startBlock, "START_BLOCK");
    const startBlock =
      startRaw === undefined ? 0 : field(`${name} start block`, uint("start block"), startRaw);
    const confRaw = pick(input.confirmations, "CONFIRMATIONS");
    const confirmations =
      confRaw === undefined
        ? (preset?.confirmations ?? 12)
        : field(`${name} confirmations`, uint("confirmations"), confRaw);
    const discovery = field(
      `${name} contract discovery`,
      z.enum(["auto", "traces", "receipts", "events"]),
      pick(input.contractDiscovery, "CONTRACT_DISCOVERY") ?? "auto",
    );
    const ownershipHistory = field(
      `${name} ownership history`,
      z.enum(["off", "logs"]),
      pick(input.ownershipHistory, "OWNERSHIP_HISTORY") ?? "off",
    );
    const peggedRaw = pick(input.nativePegged, "NATIVE_PEGGED");
    const nativePegged =
      peggedRaw === undefined ? undefined : field(`${name} native-pegged tokens`, addressList, peggedRaw);
    const poolsRaw = pick(input.ratePools, "RATE_POOLS");
    const ratePools = poolsRaw === undefined ? undefined : field(`${name} rate pools`, poolList, poolsRaw);
    const usdRaw = pick(input.usdTokens, "USD_TOKENS");
    const usdTokens = usdRaw === undefined ? undefined : field(`${name} usd tokens`, addressList, usdRaw);
    const windowRaw = pick(input.rateWindow, "RATE_WINDOW");
    const rateWindowSeconds =
      windowRaw === undefined ? undefined : field(`${name} rate window`, duration, windowRaw);
    const depthRaw = pick(input.rateMinDepth, "RATE_MIN_DEPTH");
    const rateMinDepth =
      depthRaw === undefined ? undefined : field(`${name} rate min depth`, coins, depthRaw);
    const jumpRaw = pick(input.rateJump, "RATE_JUMP");
    const rateJump = jumpRaw === undefined ? undefined : field(`${name} rate jump`, jumpFactor, jumpRaw);
    if (
      url !== undefined &&
      chainId !== undefined &&
      nativeSymbol !== undefined &&
      startBlock !== undefined &&
      confirmations !== undefined &&
      discovery !== undefined &&
      ownershipHistory !== undefined
    ) {
      chains.push({
        name,
        chainId,
        nativeSymbol,
        rpcUrl: url,
        startBlock,
        confirmations,
        contractDiscovery: discovery,
        ownershipHistory,
        ...(nativePegged !== undefined ? { nativePegged } : {}),
        ...(ratePools !== undefined ? { ratePools } : {}),
        ...(usdTokens !== undefined ? { usdTokens } : {}),
        ...(rateWindowSeconds !== undefined ? { rateWindowSeconds } : {}),
        ...(rateMinDepth !== undefined ? { rateMinDepth } : {}),
        ...(rateJump !== undefined ? { rateJump } : {}),
      });
    }
  }

  const num = (label: string, flag: string | undefined, envName: string, fallback: number, min: number) => {
    const raw = flag ?? env[envName];
    if (raw === undefined) return fallback;
    const value = field(label, uint(label), raw);
    if (value !== undefined && value < min) problems.push(`${label}: must be at least ${min}`);
    return value ?? fallback;
  };
  const tuning: IndexerTuning = {
    pollIntervalMs: num("poll interval", input.pollInterval, "MINTLENS_POLL_INTERVAL_MS", 2000, 50),
    maxBlocksPerBatch: num("batch blocks", input.batchBlocks, "MINTLENS_BATCH_BLOCKS", 2000, 1),
    prefetch: num("prefetch", input.prefetch, "MINTLENS_PREFETCH", 3, 1),
    rpcBatchSize: num("rpc batch size", input.rpcBatchSize, "MINTLENS_RPC_BATCH_SIZE", 100, 1),
    rpcTimeoutMs: num("rpc timeout", input.rpcTimeout, "MINTLENS_RPC_TIMEOUT_MS", 30_000, 100),
    rpcRetries: num("rpc retries", input.rpcRetries, "MINTLENS_RPC_RETRIES", 8, 0),
    maxLogRange: num("max log range", input.maxLogRange, "MINTLENS_MAX_LOG_RANGE", 2000, 1),
  };

  // Each chain reads for the batches it fetches ahead and for the one it prepares, a few at once.
  const indexerPoolSize = num(
    "indexer pool size",
    input.indexerPoolSize,
    "MINTLENS_INDEXER_POOL_SIZE",
    4 * Math.max(1, chains.length) + 4,
    1,
  );

  const database = databaseFields(input, env, problems);
  checkChainNames(
    { default: database.databaseUrl, chains: database.chainDatabaseUrls },
    chainSpecs.map((spec) => spec.split("=")[0]?.trim().toLowerCase() ?? ""),
    "database url",
    problems,
  );
  const streamRetentionDays = parseStreamRetention(input, env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...database, chains, tuning, indexerPoolSize, streamRetentionDays };
}

/** The database and logging part of the configuration alone, for commands that index nothing. */
export function parseDatabaseConfig(
  input: Pick<ConfigInput, "databaseUrl" | "dataDir" | "logLevel">,
  env: Variables,
): DatabaseConfig {
  const problems: string[] = [];
  const database = databaseFields(input, env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return database;
}

function databaseFields(
  input: Pick<ConfigInput, "databaseUrl" | "dataDir" | "logLevel">,
  env: Variables,
  problems: string[],
): DatabaseConfig {
  const urls = parseDatabaseUrls(input.databaseUrl, env.DATABASE_URL, "database url", problems);
  const logLevel = fieldParser(problems)(
    "log level",
    z.enum(["fatal", "error", "warn", "info", "debug", "trace"]),
    input.logLevel ?? env.MINTLENS_LOG_LEVEL ?? "info",
  );
  return {
    databaseUrl: urls.default,
    chainDatabaseUrls: urls.chains,
    dataDir: input.dataDir ?? env.MINTLENS_DATA_DIR ?? ".mintlens",
    logLevel: logLevel ?? "info",
  };
}

/** Parses one value, adding what is wrong with it to `problems`. */
function fieldParser(problems: string[]) {
  return <T>(label: string, schema: z.ZodType<T>, value: unknown): T | undefined => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) problems.push(`${label}: ${issue.message}`);
    return undefined;
  };
}

/** A per-chain flag value: the last `name=value` for this chain, else the last bare value. */
function perChain(values: string[] | undefined, name: string): string | undefined {
  if (!values) return undefined;
  let bare: string | undefined;
  let named: string | undefined;
  for (const value of values) {
    const eq = value.indexOf("=");
    const prefix = eq < 0 ? "" : value.slice(0, eq);
    if (eq > 0 && NAME_RE.test(prefix) && !prefix.includes(":")) {
      if (prefix === name) named = value.slice(eq + 1);
    } else {
      bare = value;
    }
  }
  return named ?? bare;
}

function splitList(value: string | undefined): string[] {
  return value
    ? value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}
