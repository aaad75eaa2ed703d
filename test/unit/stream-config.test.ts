import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, parseConfig } from "../../src/config/config.ts";
import { DEFAULT_STREAM_RETENTION_DAYS } from "../../src/config/stream-config.ts";

const CHAIN = { chain: ["ethereum=https://node.example"] };

test("the stream's retention: seven days unless the flag or the environment says otherwise, the flag first", () => {
  assert.equal(DEFAULT_STREAM_RETENTION_DAYS, 7);
  assert.equal(parseConfig(CHAIN, {}).streamRetentionDays, 7);
  assert.equal(parseConfig(CHAIN, { MINTLENS_STREAM_RETENTION: "30" }).streamRetentionDays, 30);
  assert.equal(
    parseConfig({ ...CHAIN, streamRetention: "0.5" }, { MINTLENS_STREAM_RETENTION: "30" })
      .streamRetentionDays,
    0.5,
  );
});

test("a retention that is not a number of days is refused with the flag named, among the other problems", () => {
  for (const raw of ["0", "-1", "abc", "7d", "", "1e3", "3651"]) {
    assert.throws(
      () => parseConfig({ ...CHAIN, streamRetention: raw, pollInterval: "5" }, {}),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.length === 2 &&
        error.problems.some((p) => p.startsWith("poll interval")) &&
        error.problems.some(
          (p) =>
            p.includes("--stream-retention") && p.includes("MINTLENS_STREAM_RETENTION") && p.includes(raw),
        ),
      raw,
    );
  }
});
