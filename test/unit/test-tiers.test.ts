/**
 * Each test file is in the tier its imports say it belongs to, so that `npm run test:unit` stays
 * quick and free of servers, and a file that stops starting processes leaves test/process.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  filesOutsideTiers,
  importsOf,
  reachable,
  TEST_DATABASE,
  tierFiles,
} from "../../scripts/test-files.ts";

/** What starts a database server, a chain or a process, wherever in the graph it is imported. */
const STARTS_SOMETHING = [
  TEST_DATABASE,
  "test/support/mintlens-process.ts",
  "src/devchain/anvil.ts",
  "src/store/pg/embedded.ts",
  "node:child_process",
];
/** What serves on loopback from the test itself. */
const SERVES = [
  "node:http",
  "node:https",
  "node:http2",
  "node:net",
  "test/support/s3-server.ts",
  "test/support/fault-proxy.ts",
];
const STARTS_MINTLENS = ["test/support/mintlens-process.ts", "node:child_process"];
/** What drives a browser: only the browser tier does, so that the other tiers need no Chromium. */
const BROWSER = "playwright-core";

describe("test tiers", () => {
  test("every test file is in a tier", () => {
    assert.deepEqual(filesOutsideTiers(), []);
  });

  test("unit tests start no database, chain, server or process", () => {
    const files = tierFiles("unit");
    assert.ok(files.length > 10, `${files.length} unit test files`);
    for (const file of files) {
      const reached = reachable(file);
      assert.deepEqual(
        STARTS_SOMETHING.filter((m) => reached.has(m)),
        [],
        `${file} reaches what starts a server or a process: move it to test/integration`,
      );
      assert.deepEqual(
        SERVES.filter((m) => importsOf(file).includes(m)),
        [],
        `${file} serves on loopback: move it to test/integration`,
      );
    }
  });

  test("integration tests start no process of their own: those are in test/process", () => {
    for (const file of tierFiles("integration")) {
      assert.ok(
        !reachable(file).has("test/support/mintlens-process.ts"),
        `${file} runs mintlens: move it to test/process`,
      );
      assert.ok(
        !importsOf(file).includes("node:child_process"),
        `${file} starts a process: move it to test/process`,
      );
    }
  });

  test("process tests do start processes: the others are in test/integration", () => {
    for (const file of tierFiles("process")) {
      const reached = [...reachable(file)].filter((m) => STARTS_MINTLENS.includes(m));
      const own = importsOf(file).filter((m) => STARTS_MINTLENS.includes(m));
      assert.ok(
        reached.includes("test/support/mintlens-process.ts") || own.length > 0,
        `${file} starts no process`,
      );
    }
  });

  test("browser tests drive a browser, and only they do", () => {
    const files = tierFiles("browser");
    assert.ok(files.length > 0, "the browser tier has tests");
    for (const file of files) assert.ok(reachable(file).has(BROWSER), `${file} drives no browser`);
    for (const tier of ["unit", "integration", "process", "generated"] as const) {
      for (const file of tierFiles(tier)) {
        assert.ok(!reachable(file).has(BROWSER), `${file} drives a browser: move it to test/browser`);
      }
    }
  });
});
