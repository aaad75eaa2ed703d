/**
 * What only the process shows: the exit code src/main.ts ends with, and what reaches the terminal.
 * The commands' behaviour is tested in the tests' own process (test/integration/cli-*.test.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { mintlens } from "../support/mintlens-process.ts";

describe("the mintlens process", () => {
  test("every configuration problem is listed at once on stderr, without a stack trace; exit code 1", async () => {
    const { code, stdout, stderr } = await mintlens([
      "index",
      "--chain",
      "mychain",
      "--chain",
      "ethereum=ftp://node",
      "--start-block",
      "ethereum=abc",
      "--poll-interval",
      "5",
    ]);
    assert.equal(code, 1);
    assert.equal(stdout, "");
    assert.match(stderr, /^mintlens: invalid configuration:\n/);
    for (const expected of [
      "mychain rpc url: missing",
      "mychain chain id: unknown chain",
      "mychain native symbol: unknown chain",
      "ethereum rpc url: rpc url must be an http(s) URL",
      "ethereum start block: start block must be a whole number",
      "poll interval: must be at least 50",
    ]) {
      assert.ok(stderr.includes(`  - ${expected}`), `"${expected}" in:\n${stderr}`);
    }
    assert.ok(!stderr.includes("    at "), `no stack trace in:\n${stderr}`);
  });

  test("--help lists the commands on stdout; exit code 0", async () => {
    const { code, stdout, stderr } = await mintlens(["--help"]);
    assert.equal(code, 0, stderr);
    for (const command of ["start", "index", "serve", "metadata", "demo", "migrate", "keys", "call"]) {
      assert.match(stdout, new RegExp(`^  ${command} `, "m"), `${command} in the help`);
    }
  });
});
