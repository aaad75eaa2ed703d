/**
 * The image cache: content-addressed files under one directory, `<dir>/<first two hex digits>/<sha256>`,
 * each with its media type (as sniffed when it was fetched) beside it in `<sha256>.type`. The same
 * image of many tokens is stored once; files are written to a temporary name and renamed, the type
 * first, so a reader never sees half of one or one without its type.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface BlobStore {
  /** Stores `bytes` of media type `mimeType`, returns their SHA-256 in hex. */
  put(bytes: Uint8Array, mimeType: string): Promise<string>;
  /** A stored blob and its media type; undefined when there is none. */
  get(sha256: string): Promise<{ bytes: Buffer; mimeType: string } | undefined>;
}

const SHA256 = /^[0-9a-f]{64}$/;

export function createBlobStore(dir: string): BlobStore {
  const pathOf = (sha: string) => join(dir, sha.slice(0, 2), sha);
  const write = async (path: string, data: Uint8Array | string) => {
    const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, data);
    await rename(temporary, path);
  };
  return {
    async put(bytes, mimeType) {
      const sha = createHash("sha256").update(bytes).digest("hex");
      const path = pathOf(sha);
      await mkdir(join(dir, sha.slice(0, 2)), { recursive: true });
      await write(`${path}.type`, mimeType);
      await write(path, bytes);
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
  };
}
