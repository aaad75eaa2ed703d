import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, test } from "node:test";
import postgres from "postgres";
import { connectDatabase } from "../../src/store/pg/database.ts";
import { startEmbeddedPostgres } from "../../src/store/pg/embedded.ts";
import { openNoDelaySocket } from "../../src/store/pg/socket.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

after(stopTestServer);

function listen(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.end());
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve({ server, port: typeof address === "object" && address ? address.port : 0 });
    });
  });
}

/**
 * Whether Nagle's algorithm is off on a socket. Node keeps the setting on the socket (it applies
 * it to the handle when the connection opens) but has no public getter for it.
 */
function noDelayOf(socket: Socket): boolean {
  const key = Object.getOwnPropertySymbols(socket).find((s) => s.description === "kSetNoDelay");
  assert.ok(key, "this Node keeps the noDelay setting where the test looks for it");
  return (socket as unknown as Record<symbol, unknown>)[key] === true;
}

/** A port nothing listens on: one just released by a server. */
async function closedPort(): Promise<number> {
  const { server, port } = await listen();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("database connections", () => {
  test("the hosts of a multi-host address are tried in order", async () => {
    const { server, port } = await listen();
    const refused = await closedPort();
    try {
      const socket = await openNoDelaySocket({ host: ["127.0.0.1", "127.0.0.1"], port: [refused, port] });
      assert.equal(socket.remotePort, port);
      socket.destroy();
    } finally {
      server.close();
    }
  });

  test("when no host answers, the last error is reported", async () => {
    const refused = await closedPort();
    await assert.rejects(openNoDelaySocket({ host: ["127.0.0.1"], port: [refused] }), /ECONNREFUSED/);
  });

  describe("against PostgreSQL", () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase();
    });
    after(async () => {
      await db?.close();
    });

    /**
     * A COPY's last message is tiny and follows its data. With Nagle's algorithm on, it waits
     * for the server's delayed acknowledgement (40 ms on Linux), so every COPY would sit idle
     * that long. What decides it is the connection's setting, read here rather than timed.
     */
    test("small COPYs one after the other do not wait for delayed acknowledgements", async () => {
      const port = Number(new URL(db.url).port);
      const opened: Socket[] = [];
      const onSocket = (message: unknown) => opened.push((message as { socket: Socket }).socket);
      subscribe("net.client.socket", onSocket);
      const sql = await connectDatabase(db.url, { max: 1 });
      try {
        await sql`CREATE TABLE copy_latency (n integer, label text)`;
        const rows = Array.from({ length: 50 }, (_, i) => `${i}\trow ${i}\n`).join("");
        for (let i = 0; i < 20; i++) {
          const stream = await sql`COPY copy_latency (n, label) FROM STDIN`.writable();
          await new Promise<void>((resolve, reject) => stream.end(rows, () => resolve()).on("error", reject));
          // The COPY is complete once the next statement's answer comes back on the same connection.
          await sql`SELECT 1`;
        }
        const [count] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM copy_latency`;
        assert.equal(count?.n, "1000");
        const toDatabase = opened.filter((s) => s.remotePort === port);
        assert.ok(toDatabase.length > 0, "the connections were seen opening");
        assert.deepEqual(
          toDatabase.map(noDelayOf),
          toDatabase.map(() => true),
          "Nagle's algorithm is off on every one",
        );
      } finally {
        unsubscribe("net.client.socket", onSocket);
        await sql.end({ timeout: 5 });
      }
    });
  });

  test("the embedded PostgreSQL starts in a data directory given by a relative path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mintlens-relative-pg-"));
    try {
      const embedded = await startEmbeddedPostgres({ dataDir: relative(process.cwd(), dir) });
      try {
        const sql = postgres(embedded.url, { max: 1, onnotice: () => {} });
        const [row] = await sql<{ one: number }[]>`SELECT 1 AS one`;
        await sql.end();
        assert.equal(row?.one, 1);
      } finally {
        await embedded.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
