/** The parts of s3rver (an S3-compatible server in Node, for tests) that the tests use; it ships no types. */
declare module "s3rver" {
  import type { AddressInfo } from "node:net";

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }

  /** What s3rver emits as `event` for each object created or removed, in the shape of S3's notifications. */
  interface S3rverEvent {
    Records: { eventName: string; s3: { bucket: { name: string }; object: { key: string } } }[];
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    on(event: "event", listener: (event: S3rverEvent) => void): this;
  }
}
