/**
 * Where token images are cached: a directory (`--blob-dir`, or `--blob-store` given a path or a
 * `file://` URL), or a bucket of an S3-compatible store (`--blob-store s3://bucket/prefix`, with
 * `?endpoint=`, `?region=` and `?path-style=` for stores other than AWS S3 itself).
 */
import { fileURLToPath } from "node:url";
import { ConfigError } from "./config.ts";
import type { Variables } from "./environment.ts";

export type BlobStoreConfig =
  | { kind: "directory"; dir: string }
  | {
      kind: "s3";
      bucket: string;
      /** Empty, or ending with `/`. */
      prefix: string;
      /** Unset: AWS S3 itself. */
      endpoint: string | undefined;
      region: string;
      forcePathStyle: boolean;
      /** Unset: the SDK's default chain (shared config files, SSO, container and instance roles). */
      credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
    };

export interface BlobStoreConfigInput {
  blobStore?: string;
  blobDir?: string;
}

/** Where a region is needed but none is given; a store with its own endpoint mostly ignores it. */
export const DEFAULT_S3_REGION = "us-east-1";

const BUCKET = /^[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]$/;
const REGION = /^[a-z0-9-]{1,40}$/;
const QUERY_KEYS = new Set(["endpoint", "region", "path-style"]);

/**
 * The image cache's configuration from the flags, then `MINTLENS_BLOB_STORE`; unset, the directory
 * `defaultDir`. Credentials come from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with
 * `AWS_SESSION_TOKEN`) when both are set, the region from `AWS_REGION` when the URL names none.
 */
export function parseBlobStoreConfig(
  input: BlobStoreConfigInput,
  env: Variables,
  defaultDir: string,
): BlobStoreConfig {
  if (input.blobStore !== undefined && input.blobDir !== undefined) {
    throw new ConfigError(["--blob-store and --blob-dir: give one of them"]);
  }
  if (input.blobDir !== undefined) {
    if (input.blobDir === "") throw new ConfigError(["--blob-dir: expected a directory, got nothing"]);
    return { kind: "directory", dir: input.blobDir };
  }
  const fromFlag = input.blobStore !== undefined;
  const value = input.blobStore ?? env.MINTLENS_BLOB_STORE;
  if (value === undefined) return { kind: "directory", dir: defaultDir };
  const label = fromFlag ? "--blob-store" : "MINTLENS_BLOB_STORE";
  const expected = `${label}: expected s3://bucket[/prefix] or a directory, got ${JSON.stringify(value)}`;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(value)?.[1]?.toLowerCase();
  if (value.trim() === "" || (scheme !== undefined && scheme !== "s3" && scheme !== "file")) {
    throw new ConfigError([expected]);
  }
  if (scheme === undefined) return { kind: "directory", dir: value };
  if (scheme === "file") {
    try {
      return { kind: "directory", dir: fileURLToPath(value) };
    } catch (error) {
      throw new ConfigError([`${expected} (${(error as Error).message})`]);
    }
  }
  return parseS3Url(value, label, expected, env);
}

function parseS3Url(value: string, label: string, expected: string, env: Variables): BlobStoreConfig {
  if (!URL.canParse(value)) throw new ConfigError([expected]);
  const url = new URL(value);
  const problems: string[] = [];
  const bucket = url.hostname;
  if (bucket === "") throw new ConfigError([expected]);
  if (url.username !== "" || url.password !== "" || url.port !== "") {
    // Keys written into the URL would end up in process listings and shell histories.
    problems.push(
      `${label}: no user, password or port in an s3:// URL (credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the store's address from ?endpoint=)`,
    );
  } else if (!BUCKET.test(bucket)) {
    problems.push(
      `${label}: ${JSON.stringify(bucket)} is not a bucket name (3 to 63 letters, digits, . _ -)`,
    );
  }
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    path = url.pathname;
    problems.push(`${label}: the prefix ${JSON.stringify(url.pathname)} is not valid percent-encoding`);
  }
  const trimmed = path.replace(/^\/+/, "").replace(/\/+$/, "");
  const prefix = trimmed === "" ? "" : `${trimmed}/`;

  for (const key of new Set(url.searchParams.keys())) {
    if (!QUERY_KEYS.has(key)) {
      problems.push(`${label}: unknown setting ?${key}= (known: endpoint, region, path-style)`);
    } else if (url.searchParams.getAll(key).length > 1) {
      problems.push(`${label}: ?${key}= given more than once`);
    }
  }
  const endpoint = url.searchParams.get("endpoint") ?? undefined;
  if (endpoint !== undefined && (!/^https?:\/\/[^/]/.test(endpoint) || !URL.canParse(endpoint))) {
    problems.push(`${label}: endpoint ${JSON.stringify(endpoint)} is not an http(s) URL`);
  }
  const region = url.searchParams.get("region") ?? (env.AWS_REGION || undefined) ?? DEFAULT_S3_REGION;
  if (!REGION.test(region)) problems.push(`${label}: region ${JSON.stringify(region)} is not a region name`);
  const pathStyle = url.searchParams.get("path-style");
  if (pathStyle !== null && pathStyle !== "true" && pathStyle !== "false") {
    problems.push(`${label}: path-style must be true or false, got ${JSON.stringify(pathStyle)}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  const sessionToken = env.AWS_SESSION_TOKEN || undefined;
  return {
    kind: "s3",
    bucket,
    prefix,
    endpoint,
    region,
    // Self-hosted stores rarely have a DNS name per bucket; AWS S3 wants the bucket in the host.
    forcePathStyle: pathStyle === null ? endpoint !== undefined : pathStyle === "true",
    credentials:
      accessKeyId && secretAccessKey
        ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
        : undefined,
  };
}
