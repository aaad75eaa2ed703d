/**
 * The image cache in an S3-compatible object store (AWS S3, MinIO, Cloudflare R2, Ceph…), laid out
 * like the directory one: the object `<prefix><first two hex digits>/<sha256>`, whose
 * `Content-Type` is the media type sniffed when the image was fetched. An object is written whole
 * or not at all, so nothing beside it is needed.
 *
 * Failures are sorted by what the caller should do: a store that cannot be reached, times out,
 * answers 5xx or throttles is `BlobStoreUnavailableError` (try again later: the API answers 503);
 * a store that refuses the request as configured (credentials, permissions, no such bucket, wrong
 * region) is `BlobStoreRefusedError` (the operator must fix the configuration: the API answers 500
 * and logs why). The credentials need s3:ListBucket besides s3:GetObject and s3:PutObject: without
 * it S3 answers 403 rather than 404 for a key that is not there, and a missing image could not be
 * told from a refused request.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import {
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { errorMessage, TransientError, UserFacingError } from "../core/errors.ts";
import type { BlobStore } from "./blobs.ts";

export interface S3BlobStoreOptions {
  /** The store's URL (`http://127.0.0.1:9000`); unset: AWS S3 itself, at the endpoint of `region`. */
  endpoint?: string | undefined;
  bucket: string;
  /** Put before every key as it is (`images/`); none by default. */
  prefix?: string | undefined;
  region: string;
  /** Unset: the SDK's default chain (environment, shared config files, SSO, container and instance roles). */
  credentials?:
    | { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined }
    | undefined;
  /** The bucket in the path (`http://host/bucket/key`), as MinIO and most self-hosted stores expect, not in the host name. */
  forcePathStyle: boolean;
}

export interface S3BlobStore extends BlobStore {
  /** Where the images are, as the operator wrote it: `s3://bucket/prefix`. */
  readonly location: string;
  /** Resolves when the bucket answers with these credentials; throws what `get` would throw. */
  check(): Promise<void>;
  /** Closes the client's idle connections. */
  close(): void;
}

/** The store cannot be reached or is failing (refused or reset connection, timeout, 5xx, throttling): try again later. */
export class BlobStoreUnavailableError extends TransientError {
  override readonly name = "BlobStoreUnavailableError";
}

/** The store refuses the request as configured (credentials, permissions, no such bucket, wrong region): fix the configuration. */
export class BlobStoreRefusedError extends UserFacingError {}

const SHA256 = /^[0-9a-f]{64}$/;
const THROTTLING = new Set(["SlowDown", "Throttling", "ThrottlingException", "RequestTimeout"]);

/** What the SDK's errors carry: the service's error code as `name`, and the HTTP status when there was an answer. */
interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const statusOf = (error: unknown): number | undefined =>
  (error as SdkError | null)?.$metadata?.httpStatusCode;

/** Why an answer was refused, in words: a HEAD's answer has no body, so S3 names nothing but the status. */
function refusalReason(status: number, error: unknown): string {
  const name = (error as SdkError).name ?? "";
  const known = name !== "" && name !== "Unknown" && !/^\d+$/.test(name);
  if (status === 403) {
    return `access denied${known ? ` (${name})` : ""}: check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the default AWS profile or role) and that they may read and write the bucket`;
  }
  if (status === 404 || name === "NoSuchBucket") return "no such bucket";
  if (status === 301 || name === "PermanentRedirect") return "the bucket is in another region: set ?region=";
  return `HTTP ${status}${known ? ` ${name}` : ""}: ${errorMessage(error)}`;
}

export function createS3BlobStore(options: S3BlobStoreOptions): S3BlobStore {
  const { bucket } = options;
  const prefix = options.prefix ?? "";
  const location = `s3://${bucket}${prefix === "" ? "" : `/${prefix}`}`;
  const client = new S3Client({
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    // Checksums only where S3 requires them: stores that are compatible with S3 but older than
    // its default checksums (some MinIO, Ceph and R2 versions) refuse or mangle such uploads. The
    // key is the content's own hash, and `get` hands back what the store holds.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    // An endpoint that drops packets must not hold a request to the API for minutes.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
  });
  const keyOf = (sha: string) => `${prefix}${sha.slice(0, 2)}/${sha}`;

  /** The error to throw for a failed request, with the SDK's error as its cause. */
  const failure = (doing: string, error: unknown): Error => {
    const status = statusOf(error);
    const name = (error as SdkError | null)?.name ?? "";
    if (status === undefined || status >= 500 || status === 429 || THROTTLING.has(name)) {
      const why = status === undefined ? errorMessage(error) : `HTTP ${status} ${name}`.trim();
      return new BlobStoreUnavailableError(`image store ${location}: ${doing} failed: ${why}`, {
        cause: error,
      });
    }
    return new BlobStoreRefusedError(
      `image store ${location}: ${doing} refused: ${refusalReason(status, error)}`,
      {
        cause: error,
      },
    );
  };

  const exists = async (key: string): Promise<boolean> => {
    try {
      await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw failure("looking up an image", error);
    }
  };

  return {
    location,
    async put(bytes, mimeType) {
      const sha = createHash("sha256").update(bytes).digest("hex");
      const key = keyOf(sha);
      // The same image is shared by many tokens: a HEAD is cheaper than uploading it again.
      if (await exists(key)) return sha;
      try {
        await client.send(
          new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentType: mimeType }),
        );
      } catch (error) {
        throw failure("storing an image", error);
      }
      return sha;
    },
    async get(sha) {
      if (!SHA256.test(sha)) return undefined;
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: keyOf(sha) }));
        if (answer.Body === undefined) return undefined;
        const bytes = Buffer.from(await answer.Body.transformToByteArray());
        return { bytes, mimeType: answer.ContentType ?? "application/octet-stream" };
      } catch (error) {
        // A missing bucket is the operator's to fix, not a missing image.
        if (statusOf(error) === 404 && (error as SdkError).name !== "NoSuchBucket") return undefined;
        throw failure("reading an image", error);
      }
    },
    async open(sha) {
      if (!SHA256.test(sha)) return undefined;
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: keyOf(sha) }));
        if (answer.Body === undefined) return undefined;
        // In Node the body is the response's own stream: read as it is sent on, never held whole.
        const body: unknown = answer.Body;
        const stream =
          body instanceof Readable
            ? body
            : Readable.from([Buffer.from(await answer.Body.transformToByteArray())]);
        return {
          stream,
          size: answer.ContentLength,
          mimeType: answer.ContentType ?? "application/octet-stream",
        };
      } catch (error) {
        if (statusOf(error) === 404 && (error as SdkError).name !== "NoSuchBucket") return undefined;
        throw failure("reading an image", error);
      }
    },
    async check() {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
      } catch (error) {
        throw failure("opening the bucket", error);
      }
    },
    close() {
      client.destroy();
    },
  };
}
