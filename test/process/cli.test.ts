import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { mintlens } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

/** The last line of stderr that is not a structured log line. */
function message(stderr: string): string {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("mintlens:") || l.startsWith("  - "))
    .join("\n");
}

describe("mintlens index: wrong configuration gives one clear message and a non-zero exit", () => {
  let anvil: Anvil;
  let db: TestDatabase;
  before(async () => {
    anvil = await startAnvil({ chainId: 31337 });
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("every configuration problem is listed at once", async () => {
    const { code, stderr } = await mintlens([
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
    const text = message(stderr);
    for (const expected of [
      "mychain rpc url: missing",
      "mychain chain id: unknown chain",
      "mychain native symbol: unknown chain",
      "ethereum rpc url: rpc url must be an http(s) URL",
      "ethereum start block: start block must be a whole number",
      "poll interval: must be at least 50",
    ]) {
      assert.ok(text.includes(expected), `"${expected}" in:\n${text}`);
    }
    assert.ok(!stderr.includes("    at "), `no stack trace in:\n${stderr}`);
  });

  test("a node that serves another chain is refused", async () => {
    const { code, stderr } = await mintlens([
      "index",
      "--chain",
      `ethereum=${anvil.url}`,
      "--database-url",
      db.url,
    ]);
    assert.equal(code, 1);
    assert.match(
      message(stderr),
      /^mintlens: ethereum: the node at http:\/\/127\.0\.0\.1:\d+ serves chain id 31337, not 1$/,
    );
  });

  test("an unreachable node is named after the retries", async () => {
    const { code, stderr } = await mintlens([
      "index",
      "--chain",
      "ethereum=http://127.0.0.1:65011/rpc",
      "--rpc-retries",
      "1",
      "--database-url",
      db.url,
    ]);
    assert.equal(code, 1);
    const text = message(stderr);
    assert.match(
      text,
      /^mintlens: ethereum: cannot use the node: eth_chainId to http:\/\/127\.0\.0\.1:65011\/rpc failed after 2 attempts: /,
    );
    assert.equal(text.split("\n").length, 1, `one line: ${text}`);
  });

  test("an unreachable database is named, with its password hidden", async () => {
    const { code, stderr } = await mintlens([
      "index",
      "--chain",
      `ethereum=${anvil.url}`,
      "--database-url",
      "postgres://me:secret@127.0.0.1:9/nothing",
    ]);
    assert.equal(code, 1);
    const text = message(stderr);
    assert.match(
      text,
      /^mintlens: cannot use the database at postgres:\/\/\*\*\*@127\.0\.0\.1:9\/nothing: .*ECONNREFUSED/,
    );
    assert.ok(!text.includes("secret"), "the password is not printed");
  });

  test("--help lists the commands", async () => {
    const { code, stdout } = await mintlens(["--help"]);
    assert.equal(code, 0);
    for (const command of ["index", "demo", "migrate"])
      assert.ok(stdout.includes(command), `${command} in help`);
  });
});
