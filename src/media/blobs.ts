/**
 * The image cache: content-addressed files under one directory, `<dir>/<first two hex digits>/<sha256>`,
 * each with its media type (as sniffed when it was fetched) beside it in `<sha256>.type`. The same
 * image of many tokens is stored once; files are written to a temporary name, flushed to disk and
 * renamed, the type first, then the directory is flushed: a reader never sees half of one or one
 * without its type, and a crash cannot leave a renamed file whose bytes never reached the disk
 * (images are served as immutable for a year: a torn one would stay in every cache).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";

/** A stored blob opened for reading: its bytes as a stream, their length and media type. */
export interface OpenedBlob {
  stream: Readable;
  /** Bytes the stream holds; undefined when the store did not say. */
  size: number | undefined;
  mimeType: string;
}

export interface BlobStore {
  /** Stores `bytes` of media type `mimeType`, returns their SHA-256 in hex. */
  put(bytes: Uint8Array, mimeType: string): Promise<string>;
  /** A stored blob and its media type; undefined when there is none. */
  get(sha256: string): Promise<{ bytes: Buffer; mimeType: string } | undefined>;
  /**
   * A stored blob opened for reading, its bytes not yet read; undefined when there is none. The
   * caller reads or destroys the stream.
   */
  open(sha256: string): Promise<OpenedBlob | undefined>;
}

const SHA256 = /^[0-9a-f]{64}$/;

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Writes `data` to `path` durably: a temporary file, flushed, renamed over `path`. */
async function writeDurably(path: string, data: Uint8Array | string): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const file = await open(temporary, "w");
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
}

/** Flushes a directory's entries (the renames into it) to disk. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function createBlobStore(dir: string): BlobStore {
  const pathOf = (sha: string) => join(dir, sha.slice(0, 2), sha);
  return {
    async put(bytes, mimeType) {
      const sha = createHash("sha256").update(bytes).digest("hex");
      const path = pathOf(sha);
      // The same image is shared by many tokens: once stored (type and bytes), it is not written again.
      if ((await exists(`${path}.type`)) && (await exists(path))) return sha;
      const folder = join(dir, sha.slice(0, 2));
      await mkdir(folder, { recursive: true });
      await writeDurably(`${path}.type`, mimeType);
      await writeDurably(path, bytes);
      await syncDirectory(folder);
      return sha;
    },
    async get(sha) {
      if (!SHA256.test(sha)) return undefined;
      const [bytes, mimeType] = await Promise.all([
        readFile(pathOf(sha)).catch(() => undefined),
        readFile(`${pathOf(sha)}.type`, "utf8").catch(() => undefined),
      ]);
      return bytes === undefined || mimeType === undefined ? undefined : { bytes, mimeType };
    },
    async open(sha) {
      if (!SHA256.test(sha)) return undefined;
      const mimeType = await readFile(`${pathOf(sha)}.type`, "utf8").catch(() => undefined);
      if (mimeType === undefined) return undefined;
      const file = await open(pathOf(sha), "r").catch(() => undefined);
      if (file === undefined) return undefined;
      try {
        const { size } = await file.stat();
        // The stream owns the descriptor from here: it closes it when read to the end or destroyed.
        return { stream: file.createReadStream(), size, mimeType };
      } catch (error) {
        await file.close();
        throw error;
      }
    },
  };
}
