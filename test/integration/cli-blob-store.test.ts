/**
 * `--blob-store` from the command line: every command that fetches or serves images takes it and
 * refuses a malformed one before starting anything, and a bucket that refuses the credentials
 * stops the command at start with the store's reason, before the database is touched.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runCommand } from "../support/cli.ts";
import { type S3TestServer, startS3Server } from "../support/s3-server.ts";

let s3: S3TestServer;
/** Well formed, and nothing listens there: a command that reached the database would say so. */
const DATABASE_URL = "postgres://mintlens@127.0.0.1:9/nothing";
const dataDir = join(mkdtempSync(join(tmpdir(), "mintlens-cli-blobs-")), "data");

before(async () => {
  s3 = await startS3Server();
});

after(async () => {
  await s3.close();
  rmSync(join(dataDir, ".."), { recursive: true, force: true });
});

describe("--blob-store on the command line", () => {
  test("start, serve, metadata and demo refuse a value that is neither a bucket nor a directory", async () => {
    const chain = ["--chain", "ethereum=http://127.0.0.1:9"];
    for (const args of [["start", ...chain], ["metadata", ...chain], ["serve"], ["demo"]]) {
      const { code, stderr } = await runCommand(
        [...args, "--data-dir", dataDir, "--blob-store", "gs://images/nft"],
        { DATABASE_URL },
      );
      assert.equal(code, 1, `${args[0]}: ${stderr}`);
      assert.equal(
        stderr,
        'mintlens: invalid configuration:\n  - --blob-store: expected s3://bucket[/prefix] or a directory, got "gs://images/nft"\n',
        args[0],
      );
    }
    assert.equal(existsSync(dataDir), false, "nothing was started");
  });

  test("a bucket that refuses the credentials stops serve at start, naming the option and the bucket", async () => {
    const { code, stderr } = await runCommand(
      ["serve", "--data-dir", dataDir, "--blob-store", `s3://${s3.bucket}/nft?endpoint=${s3.endpoint}`],
      { DATABASE_URL, AWS_ACCESS_KEY_ID: "NOT-A-KEY", AWS_SECRET_ACCESS_KEY: "x" },
    );
    assert.equal(code, 1, stderr);
    assert.match(
      stderr,
      /^mintlens: --blob-store: image store s3:\/\/images\/nft\/: opening the bucket refused: access denied: check the credentials/m,
    );
    assert.doesNotMatch(stderr, /database/);
    assert.equal(existsSync(dataDir), false, "nothing was started");
  });
});
