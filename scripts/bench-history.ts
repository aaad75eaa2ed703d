/**
 * What the ownership history before a start block (`--ownership-history logs`) costs in JSON-RPC,
 * against indexing the same blocks in full: calls by method and bytes each way, per block of the
 * history. A generated demo history on anvil; the indexer talks to it through a counting proxy in
 * this process (only the node's traffic is measured, not CPU).
 *
 *   flock /tmp/mintlens-cpu.lock npm run bench:history -- [--days 12] [--seed bench-history]
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { createTestDatabase, stopTestServer } from "../test/support/database.ts";
import { startHistoryChain } from "../test/support/histories.ts";
import { indexUntil } from "../test/support/indexing.ts";

interface Traffic {
  requests: number;
  calls: Record<string, number>;
  bytesSent: number;
  bytesReceived: number;
}

/** A JSON-RPC proxy that counts calls by method and the bytes of requests and answers. */
async function countingProxy(upstream: string) {
  let traffic: Traffic = { requests: 0, calls: {}, bytesSent: 0, bytesReceived: 0 };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    traffic.requests++;
    traffic.bytesSent += body.length;
    const parsed = JSON.parse(body.toString("utf8")) as { method: string } | { method: string }[];
    for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
      traffic.calls[call.method] = (traffic.calls[call.method] ?? 0) + 1;
    }
    const answer = await fetch(upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const bytes = Buffer.from(await answer.arrayBuffer());
    traffic.bytesReceived += bytes.length;
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    take(): Traffic {
      const taken = traffic;
      traffic = { requests: 0, calls: {}, bytesSent: 0, bytesReceived: 0 };
      return taken;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const { values } = parseArgs({
  options: { days: { type: "string", default: "12" }, seed: { type: "string", default: "bench-history" } },
});
const chainId = 31337;
const { anvil } = await startHistoryChain({
  chainId,
  seed: values.seed,
  days: Number(values.days),
  genesis: "recent",
});
const proxy = await countingProxy(anvil.url);
try {
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
  const start = Math.floor(head / 2);
  const rpcUrl = proxy.url;

  // Blocks [0, start) indexed in full: logs, headers, traces, inspections.
  const full = await createTestDatabase();
  proxy.take();
  let began = performance.now();
  await indexUntil({ sql: full.sql, rpcUrl, chainId, startBlock: 0, untilBlock: start - 1 });
  const fullMs = performance.now() - began;
  const fullTraffic = proxy.take();
  await full.close();

  // From the start block, then the history of [0, start) alone.
  const partial = await createTestDatabase();
  await indexUntil({ sql: partial.sql, rpcUrl, chainId, startBlock: start, untilBlock: head });
  const [collections] = await partial.sql<{ n: string }[]>`
    SELECT count(*)::text AS n FROM contracts WHERE mint_source = 'first_event'
      AND types && '{TYPE_ERC721,TYPE_ERC1155,TYPE_ERC721_LEGACY,TYPE_CRYPTOPUNKS}'`;
  proxy.take();
  began = performance.now();
  await indexUntil({
    sql: partial.sql,
    rpcUrl,
    chainId,
    startBlock: start,
    untilBlock: head,
    ownershipHistory: "logs",
  });
  const historyMs = performance.now() - began;
  const historyTraffic = proxy.take();
  const [read] = await partial.sql<{ transfers: string }[]>`
    SELECT coalesce(sum(transfers), 0)::text AS transfers FROM ownership_histories`;
  await partial.close();

  const row = (name: string, t: Traffic, ms: number) => ({
    run: name,
    blocks: start,
    requests: t.requests,
    calls: Object.values(t.calls).reduce((a, b) => a + b, 0),
    callsPerKBlock: Math.round((Object.values(t.calls).reduce((a, b) => a + b, 0) / start) * 1000 * 10) / 10,
    bytesReceived: t.bytesReceived,
    bytesPerBlock: Math.round(t.bytesReceived / start),
    bytesSent: t.bytesSent,
    seconds: Math.round(ms / 100) / 10,
    byMethod: t.calls,
  });
  console.log(
    JSON.stringify(
      {
        head,
        startBlock: start,
        collectionsOlderThanStart: Number(collections?.n),
        historyTransfersRead: Number(read?.transfers),
        full: row("full index of [0, start)", fullTraffic, fullMs),
        history: row("ownership history of [0, start), logs only", historyTraffic, historyMs),
      },
      null,
      2,
    ),
  );
} finally {
  await proxy.close();
  await anvil.stop();
  await stopTestServer();
}
