/**
 * `mintlens index` with a node or a database it cannot use: a node on another chain, a node or a
 * database it cannot reach; one clear message each and exit code 1. Run in the test's own process;
 * test/process/cli.test.ts checks what the process itself prints and exits with.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { runCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

/** The last line of stderr that is not a structured log line. */
function message(stderr: string): string {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("mintlens:") || l.startsWith("  - "))
    .join("\n");
}

describe("mintlens index: a node or database it cannot use gives one clear message and a non-zero exit", () => {
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

  test("a node that serves another chain is refused", async () => {
    const { code, stderr } = await runCommand([
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
    const { code, stderr } = await runCommand([
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
    const { code, stderr } = await runCommand([
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
});
