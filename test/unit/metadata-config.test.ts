import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "../../src/config/config.ts";
import { parseMetadataConfig } from "../../src/config/metadata-config.ts";

test("the metadata worker's connections: 8 by default, from the environment or the flag, checked", () => {
  assert.equal(parseMetadataConfig({}, {}).poolSize, 8);
  assert.equal(parseMetadataConfig({}, { MINTLENS_METADATA_POOL_SIZE: "3" }).poolSize, 3);
  assert.equal(
    parseMetadataConfig({ metadataPoolSize: "20" }, { MINTLENS_METADATA_POOL_SIZE: "3" }).poolSize,
    20,
  );
  assert.throws(
    () => parseMetadataConfig({ metadataPoolSize: "none", metadataConcurrency: "0" }, {}),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.join("\n") ===
        "metadata concurrency: 0 is not a whole number from 1 to 9999\nmetadata pool size: none is not a whole number from 1 to 9999",
  );
});
