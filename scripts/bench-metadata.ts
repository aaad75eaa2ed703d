/**
 * Metadata worker benchmark: 20,000 tokens queued (`--tokens`), their documents served by a local
 * HTTP server that answers each request after 20 ms (`--latency`), one host for all of them. It
 * measures how fast the worker fetches, sniffs, normalises and stores them (tokens/s), the CPU of
 * this process and of PostgreSQL per 1,000 tokens, and the most requests the server saw at once,
 * which must stay within the worker's per-host limit (`--per-host`, 32 here; the default is 8).
 *
 * The contract's answers to `tokenURI` come from an in-process stand-in for the node, so the figure
 * is the worker's own: a node answers `eth_call`s at its own pace. Images are not fetched (no blob
 * store), so each token is one request.
 *
 * Usage: npm run bench:metadata [-- --tokens 20000 --latency 20 --per-host 32 --concurrency 64]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import type { Address, Hex } from "../src/core/hex.ts";
import { silentLogger } from "../src/core/logger.ts";
import { createFetcher } from "../src/metadata/fetch.ts";
import { parseAllowList } from "../src/metadata/ssrf.ts";
import { runMetadataWorker } from "../src/metadata/worker.ts";
import { connectDatabase } from "../src/store/pg/database.ts";
import { migrate } from "../src/store/pg/migrate.ts";
import { openMetadataClient } from "../src/store/tables/metadata.ts";
import { processTreeCpu } from "./bench/process-cpu.ts";
import { openBenchServer } from "./bench-api/server.ts";

const { values: args } = parseArgs({
  options: {
    tokens: { type: "string", default: "20000" },
    latency: { type: "string", default: "20" },
    "per-host": { type: "string", default: "32" },
    concurrency: { type: "string", default: "64" },
  },
});
const TOKENS = Number(args.tokens);
const LATENCY_MS = Number(args.latency);
const PER_HOST = Number(args["per-host"]);
const CONCURRENCY = Number(args.concurrency);
const CHAIN_ID = 1;
const CONTRACT = `0x${"ab".repeat(20)}` as Address;
const say = (line: string) => process.stdout.write(`${line}\n`);

/** `tokenURI` answered as a contract would: an ABI-encoded string. */
function encodeString(text: string): Hex {
  const bytes = Buffer.from(text, "utf8");
  const padded = Buffer.alloc(Math.ceil(bytes.length / 32) * 32);
  bytes.copy(padded);
  return `0x${(32).toString(16).padStart(64, "0")}${bytes.length.toString(16).padStart(64, "0")}${padded.toString("hex")}` as Hex;
}

let active = 0;
let mostAtOnce = 0;
let served = 0;
const http = createServer((req, res) => {
  active++;
  mostAtOnce = Math.max(mostAtOnce, active);
  const id = /^\/meta\/(\d+)$/.exec(req.url ?? "")?.[1];
  setTimeout(() => {
    active--;
    served++;
    if (id === undefined) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        name: `Token #${id}`,
        description: "A token of the metadata benchmark.",
        image: `ipfs://QmYHU3Yc5QLiNHCDGA9Wn5cEW6hiRb64JGLdvUis9xzbk5/${id}.png`,
        attributes: [
          { trait_type: "Background", value: ["Blue", "Red", "Green"][Number(id) % 3] },
          { trait_type: "Level", value: Number(id) % 50, display_type: "number" },
        ],
      }),
    );
  }, LATENCY_MS);
});
await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
const port = (http.address() as AddressInfo).port;

const server = await openBenchServer(undefined);
try {
  const url = await server.createDatabase("mintlens_bench_metadata");
  await migrate(url);
  const sql = await connectDatabase(url, { max: 10 });
  await sql`INSERT INTO chains (chain_id, name, native_symbol, start_block, next_block) VALUES (${CHAIN_ID}, 'bench', 'ETH', 0, 0)`;
  await sql`
    INSERT INTO contracts (chain_id, address, types, name, symbol, mint_source, discovered_block)
    VALUES (${CHAIN_ID}, ${Buffer.from(CONTRACT.slice(2), "hex")}, ${["TYPE_ERC721"]}, 'Bench', 'BNCH', 'first_event', 0)`;
  await sql`
    INSERT INTO metadata_queue (chain_id, contract, token_id, reason)
    SELECT ${CHAIN_ID}, ${Buffer.from(CONTRACT.slice(2), "hex")}, g, 'mint' FROM generate_series(1, ${TOKENS}) g`;
  say(
    `${TOKENS.toLocaleString("en")} tokens queued; documents served by http://127.0.0.1:${port} after ${LATENCY_MS} ms each`,
  );

  const client = {
    call: async (_to: Address, data: Hex) =>
      encodeString(`http://127.0.0.1:${port}/meta/${BigInt(`0x${data.slice(10)}`)}`),
  };
  const stop = new AbortController();
  let done = 0;
  const cpuBefore = { self: process.cpuUsage(), postgres: server.pid ? processTreeCpu(server.pid) : 0 };
  const started = performance.now();
  const writer = openMetadataClient(sql, 10);
  const worker = runMetadataWorker(
    {
      sql: writer,
      chainId: CHAIN_ID,
      client,
      fetcher: createFetcher({ allow: parseAllowList([`127.0.0.1:${port}`]) }),
      logger: silentLogger(),
      concurrency: CONCURRENCY,
      perHost: PER_HOST,
      idleMs: 20,
      onToken: () => {
        done++;
        if (done === TOKENS) stop.abort();
      },
    },
    stop.signal,
  );
  const limit = setTimeout(() => stop.abort(), 600_000);
  await worker;
  clearTimeout(limit);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore.self);
  const selfCpu = (cpu.user + cpu.system) / 1e6;
  const postgresCpu = server.pid ? processTreeCpu(server.pid) - cpuBefore.postgres : Number.NaN;
  const [stored] = await sql<
    { ok: number }[]
  >`SELECT count(*)::int AS ok FROM token_metadata WHERE status = 'ok'`;
  say(
    `stored ${stored?.ok.toLocaleString("en")} documents in ${seconds.toFixed(2)} s: ${Math.round(done / seconds).toLocaleString("en")} tokens/s`,
  );
  say(
    `requests served ${served.toLocaleString("en")}; most at once ${mostAtOnce} (per-host limit ${PER_HOST}, concurrency ${CONCURRENCY})`,
  );
  say(
    `CPU per 1,000 tokens: this process ${((selfCpu / done) * 1000).toFixed(3)} s, PostgreSQL ${((postgresCpu / done) * 1000).toFixed(3)} s`,
  );
  say(mostAtOnce <= PER_HOST ? "PASS  per-host limit kept" : "FAIL  per-host limit exceeded");
  say(done / seconds >= 1000 ? "PASS  at least 1,000 tokens/s" : "FAIL  under 1,000 tokens/s");
  await writer.end({ timeout: 5 });
  await sql.end({ timeout: 5 });
} finally {
  http.closeAllConnections();
  http.close();
  await server.stop();
}
