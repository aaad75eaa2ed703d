import type { Command } from "commander";
import type { BlobStoreConfig } from "../config/blob-store-config.ts";
import { errorMessage, UserFacingError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { type BlobStore, createBlobStore } from "../media/blobs.ts";
import type { Lifecycle } from "./shutdown.ts";

/** The image cache's flags, for every command that fetches or serves images. */
export function addBlobStoreOptions(command: Command, defaultDir = "<data-dir>/blobs"): Command {
  return command
    .option(
      "--blob-store <url>",
      `where token images are cached: a directory, or s3://bucket[/prefix][?endpoint=url&region=name&path-style=true] (env MINTLENS_BLOB_STORE, default ${defaultDir})`,
    )
    .option("--blob-dir <dir>", "the directory token images are cached in (the same as --blob-store <dir>)");
}

/**
 * The configured image cache, released by `lifecycle`. A bucket is checked before anything uses
 * it: the worker drops an image it cannot store, so wrong credentials would otherwise go unseen
 * until the images were missing.
 */
export async function openBlobStore(
  config: BlobStoreConfig,
  logger: Logger,
  lifecycle: Lifecycle,
): Promise<BlobStore> {
  if (config.kind === "directory") return createBlobStore(config.dir);
  // Loaded only when a bucket is configured: the S3 client is most of a second of every start-up.
  const { createS3BlobStore } = await import("../media/blobs-s3.ts");
  const store = createS3BlobStore(config);
  lifecycle.defer(() => store.close());
  try {
    await store.check();
  } catch (error) {
    throw new UserFacingError(`--blob-store: ${errorMessage(error)}`, { cause: error });
  }
  logger.info(
    { blobStore: store.location, endpoint: config.endpoint ?? "AWS S3" },
    "caching images in a bucket",
  );
  return store;
}
