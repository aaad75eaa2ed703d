/**
 * A real S3-compatible server (s3rver) on 127.0.0.1, keeping its objects in a temporary directory,
 * with one bucket made. It takes the access key `S3RVER` (any secret) and refuses unknown keys, as
 * S3 does. Every object written is recorded, so a test can tell an upload from one skipped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

export const S3_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

export interface S3TestServer {
  endpoint: string;
  bucket: string;
  /** The keys written (PUT), in order, since the server started. */
  readonly written: readonly string[];
  close(): Promise<void>;
}

export async function startS3Server(bucket = "images"): Promise<S3TestServer> {
  const directory = mkdtempSync(join(tmpdir(), "mintlens-s3-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const written: string[] = [];
  server.on("event", (event) => {
    for (const record of event.Records) {
      if (record.eventName.startsWith("ObjectCreated:")) written.push(record.s3.object.key);
    }
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    written,
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A port on 127.0.0.1 that nothing listens on: one just given up by a listener of this process. */
export async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const address = listener.address();
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
