import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "../../src/config/config.ts";
import { DEFAULT_STREAM_RETENTION_DAYS, parseStreamRetention } from "../../src/config/stream-config.ts";

test("the stream's retention: seven days unless the flag or the environment says otherwise, the flag first", () => {
  assert.equal(parseStreamRetention({}, {}), DEFAULT_STREAM_RETENTION_DAYS);
  assert.equal(DEFAULT_STREAM_RETENTION_DAYS, 7);
  assert.equal(parseStreamRetention({}, { MINTLENS_STREAM_RETENTION: "30" }), 30);
  assert.equal(parseStreamRetention({ streamRetention: "0.5" }, { MINTLENS_STREAM_RETENTION: "30" }), 0.5);
});

test("a retention that is not a number of days is refused with the flag named", () => {
  for (const raw of ["0", "-1", "abc", "7d", "", "1e3", "3651"]) {
    assert.throws(
      () => parseStreamRetention({ streamRetention: raw }, {}),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes("--stream-retention") &&
        error.message.includes("MINTLENS_STREAM_RETENTION"),
      raw,
    );
  }
});
