/**
 * The metadata worker over months: its idle loop leaves no listener behind, work is shared across
 * contracts and hosts, a host that never answers in time is left alone by its breaker, a value the
 * store refuses is a counted `failed` outcome, and every retry budget ends. The node is an
 * in-process stand-in answering each token's URI (the chain does not matter here); the web is two
 * servers on loopback.
 */
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, test } from "node:test";
import { encodeAbiParameters } from "viem";
import type { ChainClient } from "../../src/chain/rpc-types.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import { silentLogger } from "../../src/core/logger.ts";
import { createFetcher } from "../../src/metadata/fetch.ts";
import { parseAllowList } from "../../src/metadata/ssrf.ts";
import {
  MAX_ATTEMPTS,
  MAX_REFUSALS,
  REFUSAL_RETRY_SECONDS,
  runMetadataWorker,
  type TokenStatus,
} from "../../src/metadata/worker.ts";
import {
  type QueuedToken,
  queueTokens,
  TAKE_WINDOW,
  takeDueTokens,
} from "../../src/store/tables/metadata.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const CHAIN_ID = 7;
let db: TestDatabase;
let honest: Server;
let hostile: Server;
let honestPort: number;
let hostilePort: number;
/** Requests each server answered (or held), by path. */
const hits = new Map<string, number>();
const held: { end(): void }[] = [];

const FETCH_TIMEOUT_MS = 500;

/** Requests the hostile host holds open now, and the most it held at once. */
let hostileOpen = 0;
let hostileMostOpen = 0;

before(async () => {
  const count = (url: string | undefined) => hits.set(url ?? "", (hits.get(url ?? "") ?? 0) + 1);
  honest = createServer((req, res) => {
    count(req.url);
    if (req.url?.startsWith("/gone/")) return res.writeHead(404).end();
    const name = req.url?.startsWith("/nul/") ? "bad\\u0000name" : `doc ${req.url}`;
    res.writeHead(200, { "content-type": "application/json" }).end(`{"name":"${name}"}`);
  });
  // Answers nothing within the fetch's deadline: each request is held until the test ends.
  hostile = createServer((req, res) => {
    count(`hostile${req.url}`);
    hostileOpen++;
    hostileMostOpen = Math.max(hostileMostOpen, hostileOpen);
    req.socket.once("close", () => hostileOpen--);
    const timer = setTimeout(() => res.end("{}"), 60_000);
    held.push({ end: () => clearTimeout(timer) });
  });
  await new Promise<void>((r) => honest.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => hostile.listen(0, "127.0.0.1", r));
  honestPort = (honest.address() as AddressInfo).port;
  hostilePort = (hostile.address() as AddressInfo).port;
  db = await createTestDatabase();
});
// Each test starts from an empty queue, whatever an earlier one left behind when it failed.
beforeEach(async () => {
  await db.sql`DELETE FROM metadata_queue WHERE chain_id = ${CHAIN_ID}`;
});

after(async () => {
  await db?.close();
  await stopTestServer();
  for (const h of held) h.end();
  for (const s of [honest, hostile]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** The node: each contract's token URI is `<base>/<id>`, by the bases given. */
function nodeOf(bases: Map<string, string>): Pick<ChainClient, "call"> {
  return {
    async call(to: Address, data: Hex) {
      const base = bases.get(to);
      if (base === undefined) return undefined;
      const id = BigInt(`0x${data.slice(10)}`);
      return encodeAbiParameters([{ type: "string" }], [`${base}/${id}`]);
    },
  };
}

let nextContract = 1;
/** A new ERC-721 contract with `count` tokens queued (due at once, in order), its URIs under `base`. */
async function queueContract(bases: Map<string, string>, base: string, count: number): Promise<Address> {
  const address = `0x${(nextContract++).toString(16).padStart(40, "0")}` as Address;
  const bytes = Buffer.from(address.slice(2), "hex");
  bases.set(address, base);
  await db.sql`
    INSERT INTO contracts (chain_id, address, types, mint_source, discovered_block)
    VALUES (${CHAIN_ID}, ${bytes}, '{TYPE_ERC721}', 'first_event', 1)`;
  await db.sql`
    INSERT INTO tokens (chain_id, contract, token_id, block_number, log_index, seq, tx_hash, block_time)
    SELECT ${CHAIN_ID}, ${bytes}, g, 1, 0, 0, '\\x00', now() FROM generate_series(1, ${count}) g`;
  await db.sql`
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason, due_at)
    SELECT ${CHAIN_ID}, ${bytes}, g, 'mint', now() - interval '1 hour' + g * interval '1 ms'
    FROM generate_series(1, ${count}) g`;
  return address;
}

/** Runs a worker until `until` says so (checked after each token) or `ms` pass; stopped either way. */
async function runWorker(
  o: {
    bases: Map<string, string>;
    idleMs?: number;
    until: (statuses: { token: string; status: TokenStatus; at: number }[]) => boolean;
  },
  ms: number,
): Promise<{ statuses: { token: string; status: TokenStatus; at: number }[]; timedOut: boolean }> {
  const statuses: { token: string; status: TokenStatus; at: number }[] = [];
  const stop = new AbortController();
  const start = performance.now();
  const timer = setTimeout(() => stop.abort(), ms);
  let timedOut = true;
  await runMetadataWorker(
    {
      sql: db.sql,
      chainId: CHAIN_ID,
      client: nodeOf(o.bases),
      fetcher: createFetcher({
        allow: parseAllowList([`127.0.0.1:${honestPort}`, `127.0.0.1:${hostilePort}`]),
        limits: { timeoutMs: FETCH_TIMEOUT_MS },
      }),
      logger: silentLogger(),
      concurrency: 16,
      perHost: 4,
      perContract: 8,
      idleMs: o.idleMs ?? 20,
      onToken: (token, status) => {
        statuses.push({ token: `${token.contract}/${token.tokenId}`, status, at: performance.now() - start });
        if (o.until(statuses)) {
          timedOut = false;
          stop.abort();
        }
      },
    },
    stop.signal,
  );
  clearTimeout(timer);
  return { statuses, timedOut };
}

const hex = (address: Address) => Buffer.from(address.slice(2), "hex");

test("the idle loop adds no lasting listener to the signal, however many rounds it waits", async () => {
  const stop = new AbortController();
  const counted: number[] = [];
  // Nothing queued: every round is an idle wait of 1 ms; the listeners are counted meanwhile.
  const sampler = setInterval(() => counted.push(getEventListeners(stop.signal, "abort").length), 10);
  const deadline = setTimeout(() => stop.abort(), 2_000);
  let rounds = 0;
  const sql = new Proxy(db.sql, {
    apply(target, self, args) {
      rounds++;
      return Reflect.apply(target, self, args);
    },
  });
  await runMetadataWorker(
    {
      sql,
      chainId: 999,
      client: nodeOf(new Map()),
      fetcher: createFetcher({}),
      logger: silentLogger(),
      idleMs: 1,
    },
    stop.signal,
  );
  clearInterval(sampler);
  clearTimeout(deadline);
  // Two statements a round (the take, and the look for newly minted tokens).
  assert.ok(rounds >= 200, `${rounds} statements`);
  assert.ok(counted.length >= 50, `${counted.length} samples`);
  assert.ok(
    counted.every((n) => n <= 1),
    `listeners on the signal over the rounds: ${counted.join(" ")}`,
  );
  assert.equal(getEventListeners(stop.signal, "abort").length, 0);
});

test("a take shares its room round-robin across contracts, cheaply on a skewed queue", async () => {
  const bases = new Map<string, string>();
  const big = await queueContract(bases, "http://unused", 200_000);
  const small: Address[] = [];
  for (let i = 0; i < 300; i++) small.push(await queueContract(bases, "http://unused", 2));
  await db.sql`ANALYZE metadata_queue`;

  // The big contract's tokens are the oldest, yet a take of 40 holds one token of each of 40 contracts,
  // the big one's first (its token waited longest).
  const taken = await takeDueTokens(db.sql, CHAIN_ID, 40, 300, { perContract: 8 });
  assert.equal(taken.length, 40);
  assert.equal(new Set(taken.map((t) => t.contract)).size, 40);
  assert.equal(taken[0]?.contract, big);
  // A contract's room holds; one held at its share is not taken. A take visits at most
  // TAKE_WINDOW contracts: the takes walk on from where the last one stopped until the walk wraps.
  const next: QueuedToken[] = [];
  let after: Address | undefined;
  let takes = 0;
  do {
    takes++;
    next.push(
      ...(await takeDueTokens(db.sql, CHAIN_ID, 1_000, 300, {
        perContract: 8,
        limited: [{ contract: big, room: 0, held: 8 }],
        after,
        onWalked: (walked) => {
          after = walked;
        },
      })),
    );
  } while (after !== undefined && takes < 10);
  assert.equal(takes, Math.ceil(301 / TAKE_WINDOW), "the walk wrapped after a pass over the contracts");
  assert.ok(!next.some((t) => t.contract === big));
  assert.equal(next.length, 300 * 2 - 39, "every small contract's tokens left");
  const withRoom = await takeDueTokens(db.sql, CHAIN_ID, 1_000, 300, {
    perContract: 8,
    limited: [{ contract: big, room: 3, held: 1 }],
  });
  assert.deepEqual(
    withRoom.map((t) => t.contract),
    [big, big, big],
  );

  // The plan reads each contract's first rows from the index, never the big contract's all.
  const [plan] = await db.sql.unsafe<{ "QUERY PLAN": unknown }[]>(`
    EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS)
    WITH RECURSIVE queued_contracts AS (
      (SELECT contract, 1 AS visit FROM metadata_queue WHERE chain_id = ${CHAIN_ID} ORDER BY contract LIMIT 1)
      UNION ALL
      SELECT (SELECT q.contract FROM metadata_queue q
              WHERE q.chain_id = ${CHAIN_ID} AND q.contract > s.contract ORDER BY q.contract LIMIT 1),
             s.visit + 1
      FROM queued_contracts s WHERE s.contract IS NOT NULL AND s.visit < ${TAKE_WINDOW})
    SELECT d.* FROM queued_contracts s CROSS JOIN LATERAL (
      SELECT q.contract, q.token_id, q.due_at FROM metadata_queue q
      WHERE q.chain_id = ${CHAIN_ID} AND q.contract = s.contract AND q.due_at <= now()
      ORDER BY q.due_at LIMIT 8) d`);
  const text = JSON.stringify(plan?.["QUERY PLAN"]);
  assert.doesNotMatch(text, /"Seq Scan"/);
  assert.match(text, /metadata_queue_contract_due/);
  const rowsRead = [...text.matchAll(/"Actual Rows":(\d+)/g)].reduce((n, m) => Math.max(n, Number(m[1])), 0);
  assert.ok(rowsRead < 10_000, `a node read ${rowsRead} rows`);
  await db.sql`DELETE FROM metadata_queue WHERE chain_id = ${CHAIN_ID}`;
});

test("a host that never answers in time holds only its own slots, and its breaker leaves it alone", async () => {
  const honestBase = `http://127.0.0.1:${honestPort}/doc`;
  const hostileBase = `http://127.0.0.1:${hostilePort}/slow`;
  const HONEST = 24;
  const HOSTILE = 60;

  const doneWith = (contract: Address) => (statuses: { token: string; status: TokenStatus }[]) =>
    statuses.filter((s) => s.token.startsWith(contract) && s.status === "ok").length === HONEST;

  // Behind a hostile collection queued first (so due first).
  const bases = new Map<string, string>();
  const spam = await queueContract(bases, hostileBase, HOSTILE);
  const fair = await queueContract(bases, `${honestBase}/b`, HONEST);
  const hostileFetches = () =>
    [...hits].filter(([path]) => path.startsWith("hostile/")).reduce((n, [, c]) => n + c, 0);
  let hostileBeforeDone = -1;
  const run = await runWorker(
    {
      bases,
      until: (statuses) => {
        const done = doneWith(fair)(statuses);
        if (done) hostileBeforeDone = hostileFetches();
        return done;
      },
    },
    20_000,
  );
  assert.equal(run.timedOut, false, "the honest tokens behind the hostile ones were all fetched");
  // The honest tokens did not wait for the hostile ones to be worked through (60 fetches, each to
  // its deadline): by the time the last honest token was stored, the hostile host had been asked
  // at most its first failures and the fetches under way on its 4 slots, and never held more.
  assert.ok(
    hostileBeforeDone <= 5 + 3,
    `${hostileBeforeDone} hostile fetches before the honest tokens were done`,
  );
  assert.ok(hostileMostOpen <= 4, `the hostile host held ${hostileMostOpen} requests at once`);

  // Keep going a few fetch deadlines: the breaker opens after 5 failures and the rest are left alone.
  await runWorker({ bases, until: () => false }, 6 * FETCH_TIMEOUT_MS);
  const fetched = hostileFetches();
  assert.ok(fetched >= 5, `${fetched} hostile fetches`);
  // Each of the two workers (a breaker of its own) lets 5 failures through, and the fetches already
  // under way on the host's 4 slots when the fifth fails: at most 8.
  assert.ok(
    fetched <= 2 * (5 + 3),
    `${fetched} hostile fetches: each worker's breaker lets no more than its first failures through`,
  );
  const [counts] = await db.sql<{ queued: number; over: number }[]>`
    SELECT count(*)::int AS queued, count(*) FILTER (WHERE attempts > 1)::int AS over
    FROM metadata_queue WHERE contract = ${hex(spam)}`;
  assert.equal(counts?.queued, HOSTILE, "the hostile tokens wait in the queue");
  assert.equal(counts?.over, 0, "no hostile token was tried twice");
  await db.sql`DELETE FROM metadata_queue WHERE chain_id = ${CHAIN_ID}`;
});

test("a value the store refuses is a counted failed outcome, not fetched again before its retry", async () => {
  const bases = new Map<string, string>();
  // A NUL in the document's name: the store refuses the text (SQLSTATE 22P05), however it is written.
  await db.sql`
    CREATE OR REPLACE FUNCTION refuse_nul() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.name LIKE 'bad%' THEN RAISE EXCEPTION 'unsupported Unicode escape sequence' USING ERRCODE = '22P05'; END IF;
      RETURN NEW;
    END $$`;
  await db.sql`
    CREATE TRIGGER refuse_nul BEFORE INSERT OR UPDATE ON token_metadata FOR EACH ROW EXECUTE FUNCTION refuse_nul()`;
  try {
    const contract = await queueContract(bases, `http://127.0.0.1:${honestPort}/nul`, 1);
    const statuses: TokenStatus[] = [];
    const run = await runWorker(
      {
        bases,
        until: (s) => {
          statuses.splice(0, statuses.length, ...s.map((x) => x.status));
          return false;
        },
      },
      1_500,
    );
    assert.deepEqual(
      run.statuses.map((s) => s.status),
      ["failed"],
      "worked on once, in the time it would have been fetched again and again",
    );
    assert.equal(hits.get("/nul/1"), 1);
    const [row] = await db.sql<{ status: string; error: string; name: string }[]>`
      SELECT status, error, name FROM token_metadata WHERE contract = ${hex(contract)}`;
    assert.equal(row?.status, "failed");
    assert.equal(row?.name, "");
    assert.match(row?.error ?? "", /^the store refused the outcome: /);
    const [queued] = await db.sql<{ attempts: number; refusals: number; wait: number }[]>`
      SELECT attempts, refusals, round(extract(epoch FROM due_at - now()))::int AS wait
      FROM metadata_queue WHERE contract = ${hex(contract)}`;
    assert.equal(queued?.attempts, 1);
    assert.equal(queued?.refusals, 1);
    assert.ok(
      Math.abs((queued?.wait ?? 0) - (REFUSAL_RETRY_SECONDS[0] ?? 0)) < 60,
      `due in ${queued?.wait} s`,
    );
  } finally {
    await db.sql`DROP TRIGGER refuse_nul ON token_metadata`;
    await db.sql`DELETE FROM metadata_queue WHERE chain_id = ${CHAIN_ID}`;
  }
});

test("refusals and temporary failures end within their budgets; a refresh brings the token back", async () => {
  const bases = new Map<string, string>();
  const gone = await queueContract(bases, `http://127.0.0.1:${honestPort}/gone`, 2);
  // Token 1 at its last refusal, token 2 at its last attempt (a timeout's: the hostile host is slow).
  await db.sql`UPDATE metadata_queue SET refusals = ${MAX_REFUSALS - 1}, attempts = ${MAX_REFUSALS - 1}
               WHERE contract = ${hex(gone)} AND token_id = 1`;
  await db.sql`UPDATE metadata_queue SET attempts = ${MAX_ATTEMPTS - 1} WHERE contract = ${hex(gone)} AND token_id = 2`;
  bases.set(gone, `http://127.0.0.1:${honestPort}/gone`);
  const spent = await queueContract(bases, `http://127.0.0.1:${hostilePort}/spent`, 1);
  await db.sql`UPDATE metadata_queue SET attempts = ${MAX_ATTEMPTS - 1} WHERE contract = ${hex(spent)}`;
  const run = await runWorker({ bases, until: (s) => s.length === 3 }, 10_000);
  assert.equal(run.timedOut, false);
  assert.deepEqual(run.statuses.map((s) => s.status).sort(), ["failed", "failed", "failed"]);
  const left = await db.sql`SELECT 1 FROM metadata_queue WHERE chain_id = ${CHAIN_ID}`;
  assert.equal(left.length, 0, "each token left the queue with its failed row");
  const rows = await db.sql<{ error: string }[]>`
    SELECT error FROM token_metadata WHERE chain_id = ${CHAIN_ID} AND status = 'failed' ORDER BY error`;
  assert.ok(rows.some((r) => r.error === "HTTP 404"));
  assert.ok(rows.some((r) => /no answer within/.test(r.error)));

  // An operator's refresh queues it again with its budgets whole.
  assert.equal(await queueTokens(db.sql, CHAIN_ID, [{ contract: gone, tokenId: 1n }], "refresh"), 1);
  const [again] = await db.sql<{ attempts: number; refusals: number; due: boolean }[]>`
    SELECT attempts, refusals, due_at <= now() AS due FROM metadata_queue WHERE contract = ${hex(gone)}`;
  assert.deepEqual({ ...again }, { attempts: 0, refusals: 0, due: true });
  await db.sql`DELETE FROM metadata_queue WHERE chain_id = ${CHAIN_ID}`;
});
