import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseBlobStoreConfig } from "../../src/config/blob-store-config.ts";
import { ConfigError } from "../../src/config/config.ts";

const problems = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  assert.fail("no configuration error");
};

const parse = (blobStore: string, env: Record<string, string> = {}) =>
  parseBlobStoreConfig({ blobStore }, env, "/data/blobs");

describe("image store configuration", () => {
  test("unset: the directory under the data directory", () => {
    assert.deepEqual(parseBlobStoreConfig({}, {}, "/data/blobs"), { kind: "directory", dir: "/data/blobs" });
  });

  test("a path, a file:// URL and --blob-dir are directories", () => {
    assert.deepEqual(parse("./images"), { kind: "directory", dir: "./images" });
    assert.deepEqual(parse("/var/cache/mintlens"), { kind: "directory", dir: "/var/cache/mintlens" });
    assert.deepEqual(parse("file:///var/cache/mint%20lens"), {
      kind: "directory",
      dir: "/var/cache/mint lens",
    });
    assert.deepEqual(parseBlobStoreConfig({ blobDir: "images" }, {}, "/data/blobs"), {
      kind: "directory",
      dir: "images",
    });
  });

  test("s3://bucket is AWS S3 itself: its own endpoint, virtual-host style, the default region", () => {
    assert.deepEqual(parse("s3://nft-images"), {
      kind: "s3",
      bucket: "nft-images",
      prefix: "",
      endpoint: undefined,
      region: "us-east-1",
      forcePathStyle: false,
      credentials: undefined,
    });
  });

  test("a prefix ends with one slash however it is written, and is percent-decoded", () => {
    assert.equal((parse("s3://nft-images/mintlens") as { prefix: string }).prefix, "mintlens/");
    assert.equal((parse("s3://nft-images/mintlens/") as { prefix: string }).prefix, "mintlens/");
    assert.equal((parse("s3://nft-images//a/b//") as { prefix: string }).prefix, "a/b/");
    assert.equal((parse("s3://nft-images/token%20images") as { prefix: string }).prefix, "token images/");
  });

  test("a self-hosted store: its endpoint, path style unless told otherwise, the region asked for", () => {
    assert.deepEqual(parse("s3://images/prod?endpoint=http://127.0.0.1:9000&region=eu-central-1"), {
      kind: "s3",
      bucket: "images",
      prefix: "prod/",
      endpoint: "http://127.0.0.1:9000",
      region: "eu-central-1",
      forcePathStyle: true,
      credentials: undefined,
    });
    const virtualHosts = parse("s3://images?endpoint=https://s3.example.com&path-style=false");
    assert.equal((virtualHosts as { forcePathStyle: boolean }).forcePathStyle, false);
    const pathStyle = parse("s3://images?path-style=true");
    assert.equal((pathStyle as { forcePathStyle: boolean }).forcePathStyle, true);
  });

  test("credentials and the region come from the standard AWS variables; the URL's region wins", () => {
    const env = {
      AWS_ACCESS_KEY_ID: "AKIAEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "secret",
      AWS_SESSION_TOKEN: "token",
      AWS_REGION: "ap-south-1",
    };
    const config = parse("s3://images", env) as { region: string; credentials: unknown };
    assert.equal(config.region, "ap-south-1");
    assert.deepEqual(config.credentials, {
      accessKeyId: "AKIAEXAMPLE",
      secretAccessKey: "secret",
      sessionToken: "token",
    });
    assert.equal((parse("s3://images?region=us-west-2", env) as { region: string }).region, "us-west-2");
    // Half a key pair is left to the SDK's own chain (profiles, roles), which reports what is missing.
    assert.equal(
      (parse("s3://images", { AWS_ACCESS_KEY_ID: "AKIAEXAMPLE" }) as { credentials: unknown }).credentials,
      undefined,
    );
  });

  test("MINTLENS_BLOB_STORE when no flag is given; a flag wins over it", () => {
    const env = { MINTLENS_BLOB_STORE: "s3://from-env" };
    assert.equal((parseBlobStoreConfig({}, env, "/d") as { bucket: string }).bucket, "from-env");
    assert.deepEqual(parseBlobStoreConfig({ blobDir: "here" }, env, "/d"), {
      kind: "directory",
      dir: "here",
    });
    assert.equal(
      (parseBlobStoreConfig({ blobStore: "s3://from-flag" }, env, "/d") as { bucket: string }).bucket,
      "from-flag",
    );
    assert.deepEqual(
      problems(() => parseBlobStoreConfig({}, { MINTLENS_BLOB_STORE: "gs://x" }, "/d")),
      ['MINTLENS_BLOB_STORE: expected s3://bucket[/prefix] or a directory, got "gs://x"'],
    );
  });

  test("another scheme, no bucket or nothing at all: what is expected, naming the option", () => {
    for (const value of [
      "gs://images",
      "https://s3.amazonaws.com/images",
      "s3://",
      "s3:///prefix",
      "",
      " ",
    ]) {
      assert.deepEqual(
        problems(() => parse(value)),
        [`--blob-store: expected s3://bucket[/prefix] or a directory, got ${JSON.stringify(value)}`],
      );
    }
    assert.match(
      problems(() => parse("file://server/share"))[0] ?? "",
      /^--blob-store: expected s3:\/\/bucket/,
    );
  });

  test("every problem of an s3:// URL at once", () => {
    assert.deepEqual(
      problems(() => parse("s3://images?endpoint=ftp://host&region=EU WEST&path-style=yes&acl=public")),
      [
        "--blob-store: unknown setting ?acl= (known: endpoint, region, path-style)",
        '--blob-store: endpoint "ftp://host" is not an http(s) URL',
        '--blob-store: region "EU WEST" is not a region name',
        '--blob-store: path-style must be true or false, got "yes"',
      ],
    );
    assert.deepEqual(
      problems(() => parse("s3://ab")),
      ['--blob-store: "ab" is not a bucket name (3 to 63 letters, digits, . _ -)'],
    );
    assert.deepEqual(
      problems(() => parse("s3://images?region=eu-west-1&region=us-east-1")),
      ["--blob-store: ?region= given more than once"],
    );
    assert.deepEqual(
      problems(() => parse("s3://images/%zz")),
      ['--blob-store: the prefix "/%zz" is not valid percent-encoding'],
    );
  });

  test("keys or a port in the URL are refused without repeating them", () => {
    for (const value of ["s3://AKIA:secret@images", "s3://images:9000/prefix"]) {
      const found = problems(() => parse(value));
      assert.equal(found.length, 1);
      assert.match(found[0] ?? "", /^--blob-store: no user, password or port in an s3:\/\/ URL/);
      assert.doesNotMatch(found[0] ?? "", /secret/);
    }
  });

  test("--blob-store and --blob-dir together, or an empty --blob-dir, are refused", () => {
    assert.deepEqual(
      problems(() => parseBlobStoreConfig({ blobStore: "s3://images", blobDir: "x" }, {}, "/d")),
      ["--blob-store and --blob-dir: give one of them"],
    );
    assert.deepEqual(
      problems(() => parseBlobStoreConfig({ blobDir: "" }, {}, "/d")),
      ["--blob-dir: expected a directory, got nothing"],
    );
  });
});
