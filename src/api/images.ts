/**
 * The cached images as `/images/<sha256>` serves them: small ones from memory, the rest streamed
 * from the store, never read whole. A bounded LRU keeps the small images asked for most (an image
 * never changes: its name is its hash), so a hot image does not reach the store; reads of the
 * store under way at once are bounded, and one more is refused as busy, so a flood of requests
 * cannot exhaust memory, file descriptors or the object store.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { LRUCache } from "lru-cache";
import type { BlobStore } from "../media/blobs.ts";

export type ServedImage =
  | { kind: "bytes"; bytes: Buffer; mimeType: string }
  | { kind: "stream"; stream: Readable; size: number | undefined; mimeType: string };

export interface ImageServer {
  /** The image named `sha256`, undefined when none is stored; throws `ImagesBusyError` when too many are being read. */
  get(sha256: string): Promise<ServedImage | undefined>;
}

export interface ImageServerOptions {
  blobs: BlobStore;
  /** Memory for small images, in bytes (default 32 MiB); 0 keeps none. */
  cacheBytes?: number;
  /** Largest image kept in memory, in bytes (default 1 MiB). */
  entryMaxBytes?: number;
  /** Reads of the store under way at once, streams included (default 32). */
  maxReads?: number;
}

export const IMAGE_DEFAULTS = { cacheBytes: 32 * 1024 * 1024, entryMaxBytes: 1024 * 1024, maxReads: 32 };

/** Too many images are being read from the store at once: retry in a moment. */
export class ImagesBusyError extends Error {
  override readonly name = "ImagesBusyError";
}

/** A stored image whose bytes do not hash to its name: the store holds a damaged file. */
export class DamagedImageError extends Error {
  override readonly name = "DamagedImageError";
}

interface Cached {
  bytes: Buffer;
  mimeType: string;
}

async function readAll(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    length += buffer.length;
    if (length > limit) {
      stream.destroy();
      throw new DamagedImageError(`the stored image is longer than the ${limit} bytes the store said`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, length);
}

export function createImageServer(options: ImageServerOptions): ImageServer {
  const { blobs } = options;
  const cacheBytes = options.cacheBytes ?? IMAGE_DEFAULTS.cacheBytes;
  const entryMaxBytes = Math.min(options.entryMaxBytes ?? IMAGE_DEFAULTS.entryMaxBytes, cacheBytes);
  const maxReads = options.maxReads ?? IMAGE_DEFAULTS.maxReads;
  const cache =
    cacheBytes > 0
      ? new LRUCache<string, Cached>({
          maxSize: cacheBytes,
          sizeCalculation: (value) => Math.max(1, value.bytes.length),
          maxEntrySize: Math.max(1, entryMaxBytes),
        })
      : undefined;
  /** Small images being read into the cache: later askers wait for the same read. */
  const loading = new Map<string, Promise<Cached>>();
  let reads = 0;

  const load = async (sha: string, stream: Readable, size: number, mimeType: string): Promise<Cached> => {
    const bytes = await readAll(stream, size);
    // Checked where it costs little (the bytes are in memory anyway): a damaged file is not
    // served as the immutable image its name promises.
    if (createHash("sha256").update(bytes).digest("hex") !== sha) {
      throw new DamagedImageError(`the stored image ${sha} does not hash to its name`);
    }
    const entry = { bytes, mimeType };
    cache?.set(sha, entry);
    return entry;
  };

  return {
    async get(sha) {
      const hit = cache?.get(sha) ?? (await loading.get(sha));
      if (hit !== undefined) return { kind: "bytes", ...hit };
      if (reads >= maxReads) throw new ImagesBusyError("too many images are being read; retry in a moment");
      reads++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        reads--;
      };
      try {
        const opened = await blobs.open(sha);
        if (opened === undefined) {
          release();
          return undefined;
        }
        const { stream, size, mimeType } = opened;
        if (cache !== undefined && size !== undefined && size <= entryMaxBytes) {
          const pending = load(sha, stream, size, mimeType).finally(() => {
            loading.delete(sha);
            release();
          });
          loading.set(sha, pending);
          return { kind: "bytes", ...(await pending) };
        }
        // The slot is held until the stream is done with: read to the end, failed, or destroyed.
        stream.once("close", release);
        return { kind: "stream", stream, size, mimeType };
      } catch (error) {
        release();
        throw error;
      }
    },
  };
}
