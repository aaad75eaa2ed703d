/**
 * A listener that cannot bind is one line saying which, where, and the flag that moves it, with
 * exit code 1: a REST, gRPC or metrics port another process holds, a host this machine does not
 * have. The commands run in the test's own process.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ensureChain } from "../../src/store/tables/chain-state.ts";
import { runCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

let db: TestDatabase;
let dataDir: string;
let holder: Server;
/** A port another process holds. */
let held: number;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "mintlens-listeners-"));
  db = await createTestDatabase();
  await ensureChain(db.sql, { chainId: 31337, name: "dev", nativeSymbol: "ETH", startBlock: 0 });
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  held = (holder.address() as { port: number }).port;
});
after(async () => {
  await new Promise((resolve) => holder.close(resolve));
  await db?.close();
  await stopTestServer();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The lines Mintlens itself prints on stderr (not the structured log lines). */
function messages(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.startsWith("mintlens:"));
}

describe("a listener that cannot bind", () => {
  const serve = (ports: string[]) => [
    "serve",
    "--database-url",
    db.url,
    "--data-dir",
    dataDir,
    "--host",
    "127.0.0.1",
    ...ports,
  ];

  for (const [what, ports, expected] of [
    [
      "a REST port in use",
      () => ["--rest-port", String(held), "--grpc-port", "0", "--metrics-port", "off"],
      () =>
        `dev REST listener: 127.0.0.1:${held} is in use by another process; choose another with --rest-port`,
    ],
    [
      "a gRPC port in use",
      () => ["--rest-port", "0", "--grpc-port", String(held), "--metrics-port", "off"],
      () =>
        `dev gRPC listener: 127.0.0.1:${held} is in use by another process; choose another with --grpc-port`,
    ],
    [
      "a metrics port in use",
      () => ["--rest-port", "0", "--grpc-port", "0", "--metrics-port", String(held)],
      () =>
        `metrics listener: 127.0.0.1:${held} is in use by another process; choose another with --metrics-port (or off)`,
    ],
  ] as const) {
    test(`serve with ${what}: one line naming it and the flag, exit code 1`, async () => {
      const { code, stderr } = await runCommand(serve(ports()));
      assert.equal(code, 1, stderr);
      assert.deepEqual(messages(stderr), [`mintlens: ${expected()}`]);
    });
  }

  test("an address this machine does not have is named with the flag that moves it", async () => {
    const { code, stderr } = await runCommand(
      // TEST-NET-1: reserved for documentation, never an address of this machine.
      serve(["--rest-port", "0", "--grpc-port", "0", "--metrics-port", "0", "--metrics-host", "192.0.2.1"]),
    );
    assert.equal(code, 1, stderr);
    assert.deepEqual(messages(stderr), [
      "mintlens: metrics listener: 192.0.2.1:0 is not an address of this machine; choose another with --metrics-host",
    ]);
  });

  test("index with its metrics port in use says so before it reaches for the node", async () => {
    const { code, stderr } = await runCommand([
      "index",
      "--chain",
      "dev=http://127.0.0.1:9",
      "--chain-id",
      "dev=31337",
      "--native-symbol",
      "dev=ETH",
      "--database-url",
      db.url,
      "--metrics-port",
      String(held),
    ]);
    assert.equal(code, 1, stderr);
    assert.deepEqual(messages(stderr), [
      `mintlens: metrics listener: 127.0.0.1:${held} is in use by another process; choose another with --metrics-port (or off)`,
    ]);
  });
});
