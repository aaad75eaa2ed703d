/**
 * `mintlens serve` through PgBouncer in transaction pooling mode, as a process of its own: every
 * operation answers as the API over a direct connection does, many requests at once share two
 * server connections, and the statement timeout still cancels a statement that runs too long.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { connectDatabase } from "../../src/store/pg/database.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";
import { commandVariables } from "../support/cli.ts";
import { pgbouncerMissing, type RunningPgBouncer, startPgBouncer } from "../support/pgbouncer.ts";
import { openSseStream } from "../support/stream-clients.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const missing = pgbouncerMissing();
/** Server connections PgBouncer lends, fewer than the API's own pool opens. */
const SERVER_POOL = 2;
const API_POOL = 6;
const STATEMENT_TIMEOUT_MS = 2_000;
const TIMEOUT_MESSAGE =
  "the query took longer than this server allows (its statement timeout): retry later, or ask for less";

let f: ApiFixture;
let bouncer: RunningPgBouncer;
let serve: ChildProcess | undefined;
let pooledUrl: string;
let dataDir: string;
/** Each operation of the OpenAPI document, by its path template, with the request asked of it. */
let examples: Map<string, string>;

/** `mintlens serve` through the pooler, up once it prints where REST listens (bounded). */
async function startServe(databaseUrl: string): Promise<{ child: ChildProcess; restUrl: string }> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/main.ts",
      "serve",
      "--database-url",
      databaseUrl,
      "--database-pooler",
      "transaction",
      "--api-pool-size",
      String(API_POOL),
      "--statement-timeout",
      String(STATEMENT_TIMEOUT_MS),
      "--rest-port",
      "0",
      "--grpc-port",
      "0",
      "--metrics-port",
      "off",
      "--rate-limit",
      "0",
      "--data-dir",
      dataDir,
    ],
    {
      cwd: ROOT,
      env: commandVariables({ MINTLENS_LOG_LEVEL: "error" }),
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = /\(chain \d+\): REST (\S+)/.exec(stderr)?.[1];
    if (found) return { child, restUrl: found };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`mintlens serve did not start through PgBouncer:\n${stderr}`);
    }
    await sleep(50);
  }
}

let restUrl: string;

before(async () => {
  if (missing) return;
  f = await startApiFixture({ days: 2, seed: "pooler" });
  bouncer = await startPgBouncer(f.db.url, { poolSize: SERVER_POOL });
  pooledUrl = bouncer.url;
  dataDir = mkdtempSync(join(tmpdir(), "mintlens-pooler-"));
  const started = await startServe(pooledUrl);
  serve = started.child;
  restUrl = started.restUrl;

  // The collection most wallets hold, and its first token still held.
  const [held] = await f.sql<{ contract: string; id: string; holder: string }[]>`
    SELECT '0x' || encode(b.contract, 'hex') AS contract, b.token_id::text AS id,
           '0x' || encode(b.holder, 'hex') AS holder
    FROM token_balances b
    WHERE b.chain_id = ${API_CHAIN_ID} AND b.amount > 0 AND b.contract = (
      SELECT contract FROM collection_holders WHERE chain_id = ${API_CHAIN_ID}
      GROUP BY contract ORDER BY count(*) DESC, contract LIMIT 1)
    ORDER BY b.token_id LIMIT 1`;
  assert.ok(held, "a token somebody holds");
  const punks = f.history.contracts.punks.address.toLowerCase();
  const c = held.contract;
  examples = new Map([
    [
      "/collections/v1beta2/top/{metric}/{duration}",
      "/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_30_DAYS?limit=5",
    ],
    ["/collections/v1beta2/{contract_address}/owners_list", `/collections/v1beta2/${c}/owners_list?limit=5`],
    [
      "/collections/v1beta2/{contract_address}/supply/{duration}/{group_by_period}",
      `/collections/v1beta2/${c}/supply/DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY`,
    ],
    [
      "/collections/v1beta2/{contract_address}/owners_count/{duration}/{group_by_period}",
      `/collections/v1beta2/${c}/owners_count/DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY`,
    ],
    [
      "/collections/v1beta2/{contract_address}/prices/{duration}/{group_by_period}",
      `/collections/v1beta2/${c}/prices/DURATION_7_DAYS/GROUP_BY_PERIOD_1_HOUR`,
    ],
    [
      "/collections/v1beta2/{contract_address}/sales_volume/{duration}/{group_by_period}",
      `/collections/v1beta2/${c}/sales_volume/DURATION_1_DAY/GROUP_BY_PERIOD_15_MINUTES`,
    ],
    [
      "/collections/v1beta2/{contract_address}/metadata",
      `/collections/v1beta2/${c}/metadata?includeStats=true`,
    ],
    ["/collections/v1beta2/{contract_address}/totals", `/collections/v1beta2/${c}/totals`],
    [
      "/collections/v1beta2/{contract_address}/traits/string",
      `/collections/v1beta2/${c}/traits/string?limit=5`,
    ],
    [
      "/collections/v1beta2/{contract_address}/traits/numeric",
      `/collections/v1beta2/${c}/traits/numeric?limit=5`,
    ],
    ["/foundational/v1beta2/contracts", "/foundational/v1beta2/contracts?limit=5"],
    [
      "/foundational/v1beta2/nfts/{contract_address}/{token_id}/details",
      `/foundational/v1beta2/nfts/${c}/${held.id}/details`,
    ],
    [
      "/foundational/v1beta2/nfts/{contract_address}/{token_id}/raw_metadata",
      `/foundational/v1beta2/nfts/${c}/${held.id}/raw_metadata`,
    ],
    [
      "/foundational/v1beta2/nfts/{contract_address}/{token_id}/owners",
      `/foundational/v1beta2/nfts/${c}/${held.id}/owners?limit=5`,
    ],
    [
      "/foundational/v1beta2/transfers/nft",
      `/foundational/v1beta2/transfers/nft?contractAddress=${c}&limit=5`,
    ],
    ["/marketplaces/v1beta2/floors/{contract_address}", `/marketplaces/v1beta2/floors/${punks}`],
    ["/wallets/v1beta2/{address}/nfts", `/wallets/v1beta2/${held.holder}/nfts?limit=5`],
    [
      "/foundational/v1beta2/nfts/by_owner/{address}",
      `/foundational/v1beta2/nfts/by_owner/${held.holder}?limit=5`,
    ],
  ]);
});

after(async () => {
  if (serve?.pid !== undefined && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve?.once("exit", resolve));
    process.kill(serve.pid, "SIGTERM");
    await Promise.race([exited, sleep(5_000)]);
    if (serve.exitCode === null) process.kill(serve.pid, "SIGKILL");
  }
  await bouncer?.stop();
  await f?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** An answer's status and body, with the API's own address (in links) made neutral. */
async function ask(base: string, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${base}${path}`, { headers: { "x-api-key": f.key } });
  const text = (await response.text()).replaceAll(base, "<api>");
  return { status: response.status, text };
}

describe("mintlens serve through PgBouncer in transaction mode", { skip: missing }, () => {
  test("every operation of the OpenAPI document answers as over a direct connection", async () => {
    const openapi = JSON.parse(readFileSync(join(ROOT, "openapi/mintlens.v1beta2.json"), "utf8")) as {
      paths: Record<string, { get: { responses: { "200": { content: Record<string, unknown> } } } }>;
    };
    // Streams never end: the next test follows them through the pooler.
    const answered = Object.entries(openapi.paths).filter(
      ([, item]) => !("text/event-stream" in item.get.responses["200"].content),
    );
    assert.deepEqual([...examples.keys()].sort(), answered.map(([path]) => path).sort());
    for (const path of examples.values()) {
      const direct = await ask(f.restUrl, path);
      assert.equal(direct.status, 200, `${path}: ${direct.text}`);
      const pooled = await ask(restUrl, path);
      assert.equal(pooled.status, 200, `${path} through the pooler: ${pooled.text}`);
      assert.equal(pooled.text, direct.text, path);
    }
  });

  test("the event stream reads through the pooler as over a direct connection", async () => {
    const read = async (base: string) => {
      const stream = await openSseStream(`${base}/v1beta2/stream/events?after=0`, { "x-api-key": f.key });
      try {
        assert.equal(stream.status, 200, stream.body);
        await stream.until("a heartbeat", (m) => m.some((x) => x.event === "heartbeat"), 30_000);
        return stream.messages.filter((m) => m.event !== "heartbeat").map((m) => [m.id, m.event, m.data]);
      } finally {
        stream.close();
      }
    };
    const direct = await read(f.restUrl);
    assert.ok(direct.length > 0);
    assert.deepEqual(await read(restUrl), direct);
  });

  test("requests at once share the pooler's few server connections, each answered as alone", async () => {
    const paths = [...examples.values()];
    const alone = new Map<string, string>();
    for (const path of paths) alone.set(path, (await ask(f.restUrl, path)).text);
    // Three rounds of every operation, a dozen requests in flight at a time.
    const queue = [...paths, ...paths, ...paths];
    const answers: { path: string; status: number; text: string }[] = [];
    const worker = async () => {
      for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
        answers.push({ path, ...(await ask(restUrl, path)) });
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
    assert.equal(answers.length, paths.length * 3);
    for (const a of answers) {
      assert.equal(a.status, 200, `${a.path}: ${a.text}`);
      assert.equal(a.text, alone.get(a.path), a.path);
    }
    const database = new URL(f.db.url).pathname.slice(1);
    const clients = (await bouncer.admin("SHOW CLIENTS")).filter((r) => r.database === database);
    const servers = (await bouncer.admin("SHOW SERVERS")).filter((r) => r.database === database);
    assert.ok(clients.length > SERVER_POOL, `${clients.length} client connections`);
    assert.ok(servers.length <= SERVER_POOL, `${servers.length} server connections`);
  });

  test("the statement timeout cancels a statement through the pooler, and the API answers again", async () => {
    // A page not asked before: an answer the API keeps would be given without reading the table.
    const c = `${examples.get("/collections/v1beta2/{contract_address}/owners_list")?.replace(/\?.*/, "")}?limit=3`;
    const locker = await f.sql.reserve();
    try {
      await locker`BEGIN`;
      await locker`LOCK TABLE collection_holders IN ACCESS EXCLUSIVE MODE`;
      const started = Date.now();
      const answer = await ask(restUrl, c);
      const took = Date.now() - started;
      assert.equal(answer.status, 503, answer.text);
      assert.deepEqual(JSON.parse(answer.text), { code: 14, message: TIMEOUT_MESSAGE, details: [] });
      assert.ok(took >= STATEMENT_TIMEOUT_MS - 100 && took < STATEMENT_TIMEOUT_MS + 3_000, `${took} ms`);
    } finally {
      await locker`COMMIT`;
      locker.release();
    }
    assert.equal((await ask(restUrl, c)).status, 200);
  });

  test("a pool told of the pooler: unnamed statements, and the deadline kept by the client", async () => {
    const sql = await connectDatabase(pooledUrl, { pooler: "transaction", statementTimeoutMs: 300, max: 3 });
    try {
      const started = Date.now();
      const failure = await sql`SELECT pg_sleep(${5})`.then(
        () => undefined,
        (error: unknown) => error as { code?: string },
      );
      assert.equal(failure?.code, "57014");
      assert.ok(Date.now() - started < 3_000);
      // The same statement again and again, with parameters, from connections that share servers.
      const rows = await Promise.all(
        Array.from({ length: 20 }, (_, i) => sql<{ i: number }[]>`SELECT ${i}::int AS i`),
      );
      assert.deepEqual(
        rows.map((r) => r[0]?.i),
        Array.from({ length: 20 }, (_, i) => i),
      );
      // A statement that ends in time is not cancelled afterwards.
      const [slow] = await sql<{ ok: number }[]>`SELECT 1 AS ok FROM pg_sleep(0.1)`;
      await sleep(400);
      assert.equal(slow?.ok, 1);
      assert.equal((await sql`SELECT 1 AS ok`)[0]?.ok, 1);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  test("a pool not told of it is refused at once, saying to give --database-pooler", async () => {
    const started = Date.now();
    await assert.rejects(
      connectDatabase(pooledUrl, { statementTimeoutMs: 1_000 }),
      /unsupported startup parameter: statement_timeout.*--database-pooler transaction/,
    );
    assert.ok(Date.now() - started < 2_000, "not asked again");
  });
});
