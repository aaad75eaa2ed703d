/**
 * Block tags and `minBlock`, over real sockets, on data the real indexer wrote from anvil: every
 * operation's answer (REST headers, gRPC initial metadata) names the indexed head by number, hash
 * and time, as anvil has that block; a request with `minBlock` waits for a block mined and indexed
 * meanwhile, is refused once its wait passes, and is ended at once by a shutdown; tags a client
 * sees never go back while the indexer follows the chain.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { createDataVersion } from "../../src/api/data-version.ts";
import { UnavailableError } from "../../src/api/errors.ts";
import { generateKey } from "../../src/api/keys.ts";
import { restRoutes } from "../../src/api/routes.ts";
import { createApiService } from "../../src/api/service.ts";
import { silentLogger } from "../../src/core/logger.ts";
import type { Sql } from "../../src/store/pg/database.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";
import { rawRpc } from "../support/chain-fixture.ts";
import { countingSql } from "../support/counting-sql.ts";
import { createTestDatabase } from "../support/database.ts";
import { loadPublishedProto } from "../support/grpc-client.ts";
import { indexUntil } from "../support/indexing.ts";

let f: ApiFixture;
before(async () => {
  f = await startApiFixture({ days: 1, seed: "links" });
});
after(async () => f?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;

interface Tag {
  number: string;
  hash: string | undefined;
  time: string | undefined;
}

/** The newest block the store holds, with the hash and time anvil gives that block. */
async function indexedHead(sql: Sql = f.sql): Promise<Tag & { next: bigint }> {
  const [row] = await sql<{ next: string }[]>`
    SELECT next_block::text AS next FROM chains WHERE chain_id = ${API_CHAIN_ID}`;
  assert.ok(row, "the chain is indexed");
  const number = BigInt(row.next) - 1n;
  const block = await rawRpc<{ hash: string; timestamp: string }>(f.anvil.url, "eth_getBlockByNumber", [
    `0x${number.toString(16)}`,
    false,
  ]);
  const time = new Date(Number(BigInt(block.timestamp)) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  return { number: number.toString(), hash: block.hash, time, next: BigInt(row.next) };
}

const restTag = (headers: Headers): Tag | undefined => {
  const number = headers.get("mintlens-block");
  if (number === null) return undefined;
  return {
    number,
    hash: headers.get("mintlens-block-hash") ?? undefined,
    time: headers.get("mintlens-block-time") ?? undefined,
  };
};

const grpcTag = (metadata: grpc.Metadata | undefined): Tag | undefined => {
  const number = metadata?.get("mintlens-block")[0];
  if (number === undefined) return undefined;
  return {
    number: number.toString(),
    hash: metadata?.get("mintlens-block-hash")[0]?.toString(),
    time: metadata?.get("mintlens-block-time")[0]?.toString(),
  };
};

type ServiceName = "FoundationalService" | "CollectionsService" | "MarketplacesService" | "WalletsService";

interface GrpcResult {
  error: grpc.ServiceError | null;
  response: Record<string, unknown> | undefined;
  /** The response's initial metadata, if any was sent. */
  headers: grpc.Metadata | undefined;
}

/** A gRPC client of `address` that sends `metadata` beside the key and keeps the initial metadata. */
function grpcClient(address: string) {
  const proto = loadPublishedProto() as unknown as {
    mintlens: { v1beta2: Record<string, grpc.ServiceClientConstructor> };
  };
  const credentials = grpc.credentials.createSsl(f.tls.cert);
  const clients = new Map<string, grpc.Client>();
  return {
    call(
      service: ServiceName,
      method: string,
      request: Record<string, unknown>,
      metadata: Record<string, string> = {},
    ): Promise<GrpcResult> {
      let client = clients.get(service);
      if (client === undefined) {
        const Constructor = proto.mintlens.v1beta2[service];
        assert.ok(Constructor, service);
        client = new Constructor(`localhost:${address.split(":").at(-1)}`, credentials);
        clients.set(service, client);
      }
      const sent = new grpc.Metadata();
      sent.set("x-api-key", f.key);
      for (const [name, value] of Object.entries(metadata)) sent.set(name, value);
      const unary = (client as unknown as Record<string, (...args: unknown[]) => grpc.ClientUnaryCall>)[
        method
      ];
      assert.ok(unary, `${service}.${method}`);
      return new Promise((resolve) => {
        let headers: grpc.Metadata | undefined;
        const call = unary.call(
          client,
          request,
          sent,
          { deadline: Date.now() + 20_000 },
          (error: grpc.ServiceError | null, response?: Record<string, unknown>) =>
            resolve({ error, response, headers }),
        );
        call.on("metadata", (received) => {
          headers = received;
        });
      });
    },
    close() {
      for (const client of clients.values()) client.close();
    },
  };
}

/** Another API over the fixture's store (or `sql`), with its own `--min-block-wait`. */
function serve(minBlockWaitMs: number, sql?: Sql, versionPollMs?: number) {
  return f.serveAgain({
    minBlockWaitMs,
    ...(sql === undefined ? {} : { sql }),
    ...(versionPollMs === undefined ? {} : { versionPollMs }),
  });
}

async function get(
  base: string,
  path: string,
  key: string = f.key,
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const response = await fetch(`${base}${path}`, { headers: { "x-api-key": key } });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? undefined : JSON.parse(text),
  };
}

// Every operation's routes, as the server builds them from the `.proto` rules.
const ROUTES = restRoutes(
  createApiService({
    sql: (() => {
      throw new Error("not used");
    }) as never,
    chainId: API_CHAIN_ID,
    version: {
      current: async () => ({ chain: "", metadata: "", spam: "", head: undefined }),
      reach: async () => ({ reached: true, version: { chain: "", metadata: "", spam: "", head: undefined } }),
      close() {},
    },
    cache: { get: (_key, read) => read() },
  }).values(),
);

/** Values for every path field of every operation: an ERC-721 collection, one of its tokens and its holder. */
async function pathValues(): Promise<Record<string, string>> {
  const [held] = await f.sql<{ contract: Uint8Array; token_id: string; holder: Uint8Array }[]>`
    SELECT b.contract, b.token_id::text, b.holder FROM token_balances b
    JOIN contracts c ON c.chain_id = b.chain_id AND c.address = b.contract
    WHERE b.chain_id = ${API_CHAIN_ID} AND c.types @> '{TYPE_ERC721}'::text[] AND b.amount > 0
      AND NOT c.types @> '{TYPE_ERC1155}'::text[]
    ORDER BY b.contract, b.token_id LIMIT 1`;
  assert.ok(held, "a held ERC-721 token");
  return {
    contract_address: hex(held.contract),
    token_id: held.token_id,
    address: hex(held.holder),
    metric: "METRIC_SALES_VOLUME",
    duration: "DURATION_7_DAYS",
    group_by_period: "GROUP_BY_PERIOD_1_DAY",
  };
}

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

describe("tags", () => {
  test("every operation's answer carries the indexed head over REST and gRPC, uncached and cached", async () => {
    const values = await pathValues();
    const head = await indexedHead();
    const { number, hash, time } = head;
    const client = grpcClient(f.grpcAddress);
    try {
      const seen = new Set<string>();
      for (const route of ROUTES) {
        const path = route.template.replace(/\{([a-z_0-9]+)\}/g, (_, name: string) => {
          const value = values[name];
          assert.ok(value !== undefined, `a value for the path field ${name} of ${route.template}`);
          return value;
        });
        for (const round of ["uncached", "cached"]) {
          const answer = await f.rest(path);
          assert.ok(
            answer.status === 200 || answer.status === 404,
            `${path}: ${answer.status} ${answer.text}`,
          );
          assert.deepEqual(restTag(answer.headers), { number, hash, time }, `${path}, ${round}`);
        }
        const { method } = route.operation;
        seen.add(method.name);
        const request = Object.fromEntries(route.pathFields.map((name) => [camel(name), values[name]]));
        for (const round of ["uncached", "cached"]) {
          const answer = await client.call(method.parent.name as ServiceName, method.name, request);
          assert.ok(
            answer.error === null || answer.error.code === grpc.status.NOT_FOUND,
            `${method.name}: ${answer.error?.message}`,
          );
          assert.deepEqual(grpcTag(answer.headers), { number, hash, time }, `${method.name}, ${round}`);
        }
      }
      assert.equal(seen.size, new Set(ROUTES.map((r) => r.operation.method.name)).size);
      assert.ok(seen.size >= 17, "every operation of the four services");

      // An error reached after the version is read carries it too: a token never minted.
      const missing = `/foundational/v1beta2/nfts/${values.contract_address}/999999999999/details`;
      const notFound = await f.rest(missing);
      assert.equal(notFound.status, 404);
      assert.deepEqual(restTag(notFound.headers), { number, hash, time });
      const grpcMissing = await client.call("FoundationalService", "GetNftDetails", {
        contractAddress: values.contract_address,
        tokenId: "999999999999",
      });
      assert.equal(grpcMissing.error?.code, grpc.status.NOT_FOUND);
      assert.deepEqual(grpcTag(grpcMissing.headers), { number, hash, time });
      // An answer refused before any data is read carries none.
      const malformed = await f.rest("/collections/v1beta2/0x12/totals");
      assert.equal(malformed.status, 400);
      assert.equal(restTag(malformed.headers), undefined);
    } finally {
      client.close();
    }
  });

  test("a malformed minBlock is refused naming min_block, over REST and gRPC", async () => {
    const client = grpcClient(f.grpcAddress);
    try {
      for (const bad of [
        "abc",
        "-1",
        "+1",
        "1e3",
        "0x10",
        "1.5",
        "1 2",
        "9223372036854775808",
        "1".repeat(30),
      ]) {
        for (const name of ["minBlock", "min_block"]) {
          const answer = await f.rest(`/foundational/v1beta2/contracts?${name}=${encodeURIComponent(bad)}`);
          assert.equal(answer.status, 400, `${name}=${bad}`);
          assert.match((answer.body as { message: string }).message, /^min_block: /);
        }
        const call = await client.call(
          "FoundationalService",
          "ListContracts",
          {},
          { "mintlens-min-block": bad },
        );
        assert.equal(call.error?.code, grpc.status.INVALID_ARGUMENT, bad);
        assert.match(call.error?.details ?? "", /^min_block: /);
      }
      const twice = await f.rest("/foundational/v1beta2/contracts?minBlock=1&minBlock=2");
      assert.equal(twice.status, 400);
      assert.match((twice.body as { message: string }).message, /^min_block: /);
      // Reached already, empty or repeated alike: answered at once.
      for (const query of ["minBlock=0", "minBlock=", "minBlock=1&min_block=1"]) {
        assert.equal((await f.rest(`/foundational/v1beta2/contracts?${query}`)).status, 200, query);
      }
    } finally {
      client.close();
    }
  });
});

describe("minBlock", () => {
  test("behind past the wait: 503 with Retry-After and how far behind; gRPC UNAVAILABLE with a retry-after trailer", async () => {
    const api = await serve(300);
    const client = grpcClient(api.chains[0]?.grpcAddress ?? "");
    try {
      const head = await indexedHead();
      const ask = head.next + 4n;
      const started = Date.now();
      const answer = await get(api.restUrl, `/foundational/v1beta2/contracts?minBlock=${ask}`);
      const elapsed = Date.now() - started;
      assert.equal(answer.status, 503);
      assert.equal(answer.headers.get("retry-after"), "1");
      assert.ok(elapsed >= 280 && elapsed < 5_000, `answered after ${elapsed} ms`);
      const body = answer.body as { code: number; message: string; details: unknown[] };
      assert.equal(body.code, 14);
      assert.deepEqual(body.details, []);
      assert.match(body.message, new RegExp(`reaches block ${head.number}, 5 short of min_block ${ask}`));
      assert.deepEqual(restTag(answer.headers), { number: head.number, hash: head.hash, time: head.time });

      const call = await client.call(
        "FoundationalService",
        "ListContracts",
        {},
        { "mintlens-min-block": String(ask) },
      );
      assert.equal(call.error?.code, grpc.status.UNAVAILABLE);
      assert.equal(call.error?.metadata.get("retry-after")[0], "1");
      assert.match(call.error?.details ?? "", /5 short of min_block/);
      assert.equal(grpcTag(call.headers)?.number, head.number);
    } finally {
      client.close();
      await api.close();
    }
  });

  test("minBlock = head + 1 waits, and is answered with the new block's data once it is mined and indexed", async () => {
    const api = await serve(15_000);
    const client = grpcClient(api.chains[0]?.grpcAddress ?? "");
    try {
      const head = await indexedHead();
      const values = await pathValues();
      const contract = values.contract_address as string;
      const owner = values.address as string;
      const tokenId = BigInt(values.token_id as string);
      const recipient = `0x${"5e".repeat(20)}`;
      const path = `/foundational/v1beta2/transfers/nft?contractAddress=${contract}&tokenId=${tokenId}&limit=1&minBlock=${head.next}`;
      const started = Date.now();
      const rest = get(api.restUrl, path);
      const viaGrpc = client.call(
        "FoundationalService",
        "ListNftTransfers",
        { contractAddress: contract, tokenId: tokenId.toString(), limit: 1 },
        { "mintlens-min-block": head.next.toString() },
      );
      let settled = false;
      void Promise.all([rest, viaGrpc]).then(() => {
        settled = true;
      });
      await sleep(400);
      assert.equal(settled, false, "the requests wait for their block");

      // The holder sends the token on, in a block of its own, which the indexer then commits.
      await rawRpc(f.anvil.url, "anvil_impersonateAccount", [owner]);
      await rawRpc(f.anvil.url, "anvil_setBalance", [owner, "0x56bc75e2d63100000"]);
      const data = `0x23b872dd${[owner, recipient].map((a) => a.slice(2).padStart(64, "0")).join("")}${tokenId.toString(16).padStart(64, "0")}`;
      const tx = await rawRpc<string>(f.anvil.url, "eth_sendTransaction", [
        { from: owner, to: contract, data, gas: "0x100000" },
      ]);
      // The history's anvil may not mine by itself.
      if (BigInt(await rawRpc<string>(f.anvil.url, "eth_blockNumber", [])) < head.next) {
        await rawRpc(f.anvil.url, "evm_mine", []);
      }
      const receipt = await rawRpc<{ status: string; blockNumber: string }>(
        f.anvil.url,
        "eth_getTransactionReceipt",
        [tx],
      );
      assert.equal(receipt.status, "0x1", "the transfer succeeded");
      const mined = BigInt(receipt.blockNumber);
      assert.ok(mined >= head.next, "in a new block");
      const indexedAt = Date.now();
      await indexUntil({ sql: f.sql, rpcUrl: f.anvil.url, chainId: API_CHAIN_ID, untilBlock: Number(mined) });

      const [restAnswer, grpcAnswer] = await Promise.all([rest, viaGrpc]);
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= indexedAt - started, `answered after the block was mined (${elapsed} ms)`);
      assert.ok(elapsed < 15_000, `answered within the wait (${elapsed} ms)`);
      const now = await indexedHead();
      assert.equal(restAnswer.status, 200, JSON.stringify(restAnswer.body));
      assert.deepEqual(restTag(restAnswer.headers), { number: now.number, hash: now.hash, time: now.time });
      type Transfers = {
        nftTransfers: { blockchainEvent: { blockNumber: string }; recipient: { address: string } }[];
      };
      const [transfer] = (restAnswer.body as Transfers).nftTransfers;
      assert.equal(transfer?.blockchainEvent.blockNumber, mined.toString());
      assert.equal(transfer?.recipient.address, recipient);

      assert.equal(grpcAnswer.error, null);
      assert.equal(grpcTag(grpcAnswer.headers)?.hash, now.hash);
      const [viaGrpcTransfer] = (grpcAnswer.response as Transfers).nftTransfers;
      assert.equal(viaGrpcTransfer?.blockchainEvent.blockNumber, mined.toString());
    } finally {
      client.close();
      await api.close();
    }
  });

  test("a shutdown ends the requests waiting for a block at once", async () => {
    const api = await serve(30_000);
    const head = await indexedHead();
    const waiting = Array.from({ length: 5 }, () =>
      get(api.restUrl, `/foundational/v1beta2/contracts?minBlock=${head.next + 1000n}`),
    );
    await sleep(200);
    const started = Date.now();
    await api.close();
    const answers = await Promise.all(waiting);
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 3_000, `ended ${elapsed} ms after the shutdown began`);
    for (const answer of answers) {
      assert.equal(answer.status, 503);
      assert.match((answer.body as { message: string }).message, /shutting down/);
    }
  });

  test("with nothing indexed: answers carry no block, and minBlock is refused saying so", async () => {
    const empty = await createTestDatabase();
    const key = generateKey();
    await insertApiKey(empty.sql, { userName: "tester", keyId: key.keyId, keyHash: key.hash });
    const api = await serve(100, empty.sql);
    try {
      const plain = await get(api.restUrl, "/foundational/v1beta2/contracts", key.key);
      assert.equal(plain.status, 200);
      assert.equal(restTag(plain.headers), undefined);
      const waited = await get(api.restUrl, "/foundational/v1beta2/contracts?minBlock=0", key.key);
      assert.equal(waited.status, 503);
      assert.equal(waited.headers.get("retry-after"), "1");
      assert.match((waited.body as { message: string }).message, /no block of the chain indexed yet/);
      assert.equal(restTag(waited.headers), undefined);
    } finally {
      await api.close();
      await empty.close();
    }
  });
});

test("requests waiting for a block share one poll, are bounded in number, expire, and end at a close", async () => {
  const counting = countingSql(f.sql, "recent_blocks");
  const version = createDataVersion({
    sql: counting.sql,
    chainId: API_CHAIN_ID,
    logger: silentLogger(),
    pollMs: 60_000,
    waitingPollMs: 50,
    maxWaiting: 40,
  });
  try {
    const head = (await version.current()).head;
    assert.ok(head);
    const reached = await version.reach(head.number, 10_000);
    assert.equal(reached.reached, true, "a block already indexed is reached at once");
    const before = counting.count();
    const started = Date.now();
    const waits = Array.from({ length: 40 }, () => version.reach(head.number + 1000n, 600));
    await assert.rejects(version.reach(head.number + 1000n, 600), (error: unknown) => {
      assert.ok(error instanceof UnavailableError);
      assert.equal(error.retryAfterSeconds, 1);
      assert.match(error.message, /too many requests wait/);
      return true;
    });
    const outcomes = await Promise.all(waits);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 580 && elapsed < 5_000, `expired after ${elapsed} ms`);
    for (const outcome of outcomes) {
      assert.equal(outcome.reached, false);
      assert.equal(outcome.version.head?.number, head.number);
    }
    // One read at once and one every 50 ms for all forty, not forty each: about thirteen in 600 ms.
    const reads = counting.count() - before;
    assert.ok(reads >= 3 && reads <= Math.ceil(elapsed / 50) + 3, `${reads} reads in ${elapsed} ms`);
    // None wait now: the faster poll has stopped.
    const idle = counting.count();
    await sleep(300);
    assert.equal(counting.count(), idle, "no read while none waits");

    const pending = version.reach(head.number + 1000n, 60_000);
    await sleep(50);
    const closing = Date.now();
    version.close();
    await assert.rejects(pending, /shutting down/);
    assert.ok(Date.now() - closing < 500, "a close ends a wait at once");
    await assert.rejects(version.reach(head.number + 1000n, 60_000), /shutting down/);
  } finally {
    version.close();
  }
});

test("the tags a client of one process sees never go back while the indexer follows the chain", async () => {
  const stop = new AbortController();
  const follower = indexUntil({
    sql: f.sql,
    rpcUrl: f.anvil.url,
    chainId: API_CHAIN_ID,
    signal: stop.signal,
  });
  const miner = (async () => {
    for (let i = 0; i < 300 && !stop.signal.aborted; i++) {
      await rawRpc(f.anvil.url, "evm_mine", []);
      await sleep(60);
    }
  })();
  const client = grpcClient(f.grpcAddress);
  const seen: Tag[] = [];
  try {
    // Until the head has moved a few times under the client, however busy the machine is.
    const deadline = Date.now() + 20_000;
    const moved = () => new Set(seen.map((t) => t.number)).size >= 4;
    // Paced, so that the count does not run out before a slow indexer has moved the head.
    for (let i = 0; i < 2000 && Date.now() < deadline && (i < 80 || !moved()); i++) {
      if (i > 0) await sleep(10);
      if (i % 2 === 0) {
        const answer = await f.rest("/foundational/v1beta2/contracts?limit=1");
        assert.equal(answer.status, 200);
        const tag = restTag(answer.headers);
        assert.ok(tag);
        seen.push(tag);
      } else {
        const answer = await client.call("FoundationalService", "ListContracts", { limit: 1 });
        assert.equal(answer.error, null);
        const tag = grpcTag(answer.headers);
        assert.ok(tag);
        seen.push(tag);
      }
    }
  } finally {
    stop.abort();
    await miner;
    await follower;
    client.close();
  }
  const numbers = seen.map((t) => BigInt(t.number));
  for (let i = 1; i < numbers.length; i++) {
    assert.ok(
      (numbers[i] as bigint) >= (numbers[i - 1] as bigint),
      `tag ${i}: ${numbers[i]} after ${numbers[i - 1]}`,
    );
  }
  const distinct = [...new Map(seen.map((t) => [t.number, t])).values()];
  assert.ok(distinct.length >= 3, `the head moved while the client read (${distinct.length} blocks seen)`);
  // Each block named is the chain's own: its hash is anvil's.
  for (const tag of distinct) {
    const block = await rawRpc<{ hash: string }>(f.anvil.url, "eth_getBlockByNumber", [
      `0x${BigInt(tag.number).toString(16)}`,
      false,
    ]);
    assert.equal(tag.hash, block.hash, `block ${tag.number}`);
  }
});

test("a client that reads with minBlock = the highest block it has seen never goes back across two servers, one lagging", async () => {
  // The second server reads the version every 5 s: without minBlock its answers lag the first's.
  const lagging = await serve(5_000, undefined, 5_000);
  const stop = new AbortController();
  const follower = indexUntil({
    sql: f.sql,
    rpcUrl: f.anvil.url,
    chainId: API_CHAIN_ID,
    signal: stop.signal,
  });
  const miner = (async () => {
    for (let i = 0; i < 200 && !stop.signal.aborted; i++) {
      await rawRpc(f.anvil.url, "evm_mine", []);
      await sleep(80);
    }
  })();
  const servers = [f.restUrl, lagging.restUrl];
  let highest = 0n;
  const seen: bigint[] = [];
  try {
    // Until the head has moved a few times under the client, however busy the machine is.
    const deadline = Date.now() + 20_000;
    // Paced, so that the count does not run out before a slow indexer has moved the head.
    for (let i = 0; i < 1_000 && Date.now() < deadline && (i < 40 || new Set(seen).size < 4); i++) {
      if (i > 0) await sleep(20);
      const server = servers[i % 2] as string;
      const answer = await get(server, `/foundational/v1beta2/contracts?limit=1&minBlock=${highest}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const tag = restTag(answer.headers);
      assert.ok(tag);
      const number = BigInt(tag.number);
      assert.ok(number >= highest, `request ${i} to ${server}: block ${number} after ${highest}`);
      highest = number;
      seen.push(number);
    }
  } finally {
    stop.abort();
    await miner;
    await follower;
    await lagging.close();
  }
  assert.ok(new Set(seen).size >= 3, "the head moved while the client read");
});
