/**
 * The event stream's consumers across a server crash: a real `mintlens serve` streams to a gRPC and
 * an SSE consumer while the indexer writes new activity, is killed with SIGKILL mid-stream and
 * started again; each consumer resumes from its own cursor (gRPC's nextCursor, SSE's
 * Last-Event-ID) and ends with exactly the store's holdings and trades: nothing missing or repeated.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { generateKey } from "../../src/api/keys.ts";
import type { StreamEvent } from "../../src/core/stream-events.ts";
import { generateHistory, historyGenesisTimestamp } from "../../src/demo/history.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { readStreamEvents } from "../../src/store/read/stream-events.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";
import { storeTruth } from "../support/reorganising-chain.ts";
import { openGrpcStream, openSseStream } from "../support/stream-clients.ts";
import { StreamConsumer } from "../support/stream-consumer.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHAIN_ID = 31337;

let db: TestDatabase;
let anvil: Anvil;
let dataDir: string;
let key: string;
const children: ChildProcess[] = [];

before(async () => {
  db = await createTestDatabase();
  anvil = await startAnvil({ chainId: CHAIN_ID, timestamp: historyGenesisTimestamp(12) });
  dataDir = mkdtempSync(join(tmpdir(), "mintlens-stream-crash-"));
  const generated = generateKey();
  await insertApiKey(db.sql, { userName: "consumer", keyId: generated.keyId, keyHash: generated.hash });
  key = generated.key;
});
after(async () => {
  for (const child of children) if (child.exitCode === null && child.pid) child.kill("SIGKILL");
  await anvil?.stop();
  await db?.close();
  await stopTestServer();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** `mintlens serve` over the test's store; resolves with its listeners once it announces them. */
async function serve(): Promise<{ child: ChildProcess; rest: string; grpcPort: number }> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/main.ts",
      "serve",
      "--database-url",
      db.url,
      "--data-dir",
      dataDir,
      "--rest-port",
      "0",
      "--grpc-port",
      "0",
      "--metrics-port",
      "off",
      // Both consumers read the whole history with one key: its limit is another test's subject.
      "--rate-limit",
      "0",
    ],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: "", MINTLENS_CHAINS: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout?.resume();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const m = /\(chain \d+\): REST (\S+)\s+gRPC \S+:(\d+)/.exec(stderr);
    if (m) return { child, rest: m[1] as string, grpcPort: Number(m[2]) };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`serve did not announce its listeners:\n${stderr}`);
}

const latest = async () => (await readStreamEvents(db.sql, CHAIN_ID, { after: "now", limit: 1 })).next;

test("killed with -9 mid-stream and restarted, a gRPC and an SSE consumer resume from their cursors with nothing missing or repeated", async () => {
  const indexing = new AbortController();
  const indexer = indexUntil({
    sql: db.sql,
    rpcUrl: anvil.url,
    chainId: CHAIN_ID,
    signal: indexing.signal,
    tuning: { maxBlocksPerBatch: 2, pollIntervalMs: 50 },
  });
  const activity = generateHistory({ rpcUrl: anvil.url, seed: "stream-crash", days: 8 });
  const grpcEvents: StreamEvent[] = [];
  const sseEvents: StreamEvent[] = [];
  let grpcCursor = "0";
  let sseCursor = "0";
  try {
    let server = await serve();
    const cert = readFileSync(join(dataDir, "tls", "grpc-cert.pem"));
    for (let session = 0; session < 2; session++) {
      const g = openGrpcStream(`localhost:${server.grpcPort}`, cert, key, { after: grpcCursor });
      const s = await openSseStream(`${server.rest}/v1beta2/stream/events`, {
        "x-api-key": key,
        "Last-Event-ID": sseCursor,
      });
      assert.equal(s.status, 200, s.body);
      if (session === 0) {
        // Mid-stream: both have received events, and more are being indexed.
        await g.until("gRPC events", (b) => b.some((x) => x.events.length > 0), 60_000);
        await s.until("SSE events", (m) => m.some((x) => x.event !== "heartbeat"), 60_000);
        server.child.kill("SIGKILL");
        await new Promise((resolve) => server.child.once("exit", resolve));
        await g.ended;
        await s.finished;
      } else {
        await activity;
        const head = Number(
          (
            (await (
              await fetch(anvil.url, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
              })
            ).json()) as { result: string }
          ).result,
        );
        for (let i = 0; i < 3_000; i++) {
          const [row] = await db.sql<{ next_block: string }[]>`
            SELECT next_block FROM chains WHERE chain_id = ${CHAIN_ID}`;
          if (Number(row?.next_block ?? 0) > head) break;
          await sleep(20);
        }
        const newest = await latest();
        await g.until("gRPC reaches the newest cursor", (b) => b.some((x) => x.next === newest), 30_000);
        await s.until(
          "SSE reaches the newest cursor",
          (m) => m.some((x) => x.id === newest.toString()),
          30_000,
        );
      }
      grpcEvents.push(...g.batches.flatMap((b) => b.events));
      grpcCursor = g.batches.at(-1)?.next.toString() ?? grpcCursor;
      sseEvents.push(...s.events());
      sseCursor = s.messages.filter((m) => m.id !== undefined).at(-1)?.id ?? sseCursor;
      g.close();
      s.close();
      if (session === 0) server = await serve();
    }
    server.child.kill("SIGTERM");
  } finally {
    indexing.abort();
    await indexer.catch(() => {});
    await activity.catch(() => {});
  }

  const { holdings, trades } = await storeTruth(db.sql, CHAIN_ID, 20);
  for (const [transport, events] of [
    ["gRPC", grpcEvents],
    ["SSE", sseEvents],
  ] as const) {
    const consumer = new StreamConsumer();
    // Throws on a gap in order or an event applied twice.
    consumer.apply(events);
    assert.deepEqual(consumer.units, holdings, `${transport}: the store's holdings`);
    assert.deepEqual(consumer.tradeSummary(), trades, `${transport}: the store's trades`);
  }
  assert.deepEqual(grpcEvents, sseEvents, "both transports carried the same stream");
});
