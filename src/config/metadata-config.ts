/** The metadata worker's configuration: gateways, the allow-list of private addresses, concurrency, connections. */
import { ConfigError } from "./config.ts";
import type { Variables } from "./environment.ts";
import { listOption, wholeNumber } from "./option-values.ts";

export interface MetadataConfig {
  ipfsGateway: string;
  arweaveGateway: string;
  /** Addresses or ranges (optionally with a port) fetches may reach although private: a local gateway. */
  allow: string[];
  /** Tokens worked on at once per chain, and at once against one host. */
  concurrency: number;
  perHost: number;
  /** Tokens of one contract worked on at once per chain, so one collection cannot take every slot. */
  perContract: number;
  /** Connections the workers of all chains take and store tokens through: their own, apart from the API's. */
  poolSize: number;
}

export interface MetadataConfigInput {
  ipfsGateway?: string;
  arweaveGateway?: string;
  metadataAllow?: string[];
  metadataConcurrency?: string;
  metadataPerHost?: string;
  metadataPerContract?: string;
  metadataPoolSize?: string;
}

export const METADATA_DEFAULTS = {
  ipfsGateway: "https://ipfs.io",
  arweaveGateway: "https://arweave.net",
  concurrency: 32,
  perHost: 8,
  perContract: 16,
  poolSize: 8,
};

export function parseMetadataConfig(input: MetadataConfigInput, env: Variables): MetadataConfig {
  const problems: string[] = [];
  const gateway = (label: string, value: string) => {
    if (!/^https?:\/\/[^/]/.test(value) || !URL.canParse(value))
      problems.push(`${label}: ${value} is not an http(s) URL`);
    return value.replace(/\/+$/, "");
  };
  const count = (label: string, value: string | undefined, fallback: number) =>
    wholeNumber(problems, label, value, fallback, { min: 1, max: 9999 });
  const config: MetadataConfig = {
    ipfsGateway: gateway(
      "ipfs gateway",
      input.ipfsGateway ?? env.MINTLENS_IPFS_GATEWAY ?? METADATA_DEFAULTS.ipfsGateway,
    ),
    arweaveGateway: gateway(
      "arweave gateway",
      input.arweaveGateway ?? env.MINTLENS_ARWEAVE_GATEWAY ?? METADATA_DEFAULTS.arweaveGateway,
    ),
    allow: listOption(input.metadataAllow, env.MINTLENS_METADATA_ALLOW),
    concurrency: count(
      "metadata concurrency",
      input.metadataConcurrency ?? env.MINTLENS_METADATA_CONCURRENCY,
      METADATA_DEFAULTS.concurrency,
    ),
    perHost: count(
      "metadata per host",
      input.metadataPerHost ?? env.MINTLENS_METADATA_PER_HOST,
      METADATA_DEFAULTS.perHost,
    ),
    perContract: count(
      "metadata per contract",
      input.metadataPerContract ?? env.MINTLENS_METADATA_PER_CONTRACT,
      METADATA_DEFAULTS.perContract,
    ),
    poolSize: count(
      "metadata pool size",
      input.metadataPoolSize ?? env.MINTLENS_METADATA_POOL_SIZE,
      METADATA_DEFAULTS.poolSize,
    ),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
