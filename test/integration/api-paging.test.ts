/**
 * Page tokens and the offset cap of the contracts and owners lists, over real sockets (REST with
 * fetch, gRPC with a client built from the published `.proto`), on a store filled with the shapes
 * that break keyset paging: runs of contracts minted in the same second, contracts whose mint time
 * is unknown, contracts of two types, and runs of holders with the same units.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { ContractType } from "../../src/core/types.ts";
import { type ApiClient, createApiFixtureOn } from "../support/api-client.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const CHAIN_ID = 31337;
/** Rows of another chain, which no list of this one may show. */
const OTHER_CHAIN_ID = 10;
const BASE_SECONDS = 1_700_000_000;

interface StoredContract {
  address: string;
  types: ContractType[];
  /** Whole seconds; null when unknown. */
  mintTime: number | null;
}

interface StoredHolder {
  address: string;
  units: bigint;
}

const addressOf = (label: string) => `0x${createHash("sha256").update(label).digest("hex").slice(0, 40)}`;

const TYPE_CYCLE: ContractType[][] = [
  ["TYPE_ERC20"],
  ["TYPE_ERC721"],
  ["TYPE_ERC20"],
  ["TYPE_ERC1155"],
  ["TYPE_ERC721", "TYPE_ERC1155"],
  ["TYPE_ERC721_LEGACY"],
  ["TYPE_ERC721"],
];

/** 260 contracts: nine per second of mint time, every twentieth of unknown mint time, types in a cycle. */
const contracts: StoredContract[] = Array.from({ length: 260 }, (_, i) => ({
  address: addressOf(`contract ${i}`),
  types: i === 77 || i === 201 ? ["TYPE_CRYPTOPUNKS"] : (TYPE_CYCLE[i % TYPE_CYCLE.length] as ContractType[]),
  mintTime: i % 20 === 0 ? null : BASE_SECONDS + Math.floor(i / 9),
}));

const COLLECTION = addressOf("collection");
const OTHER_COLLECTION = addressOf("other collection");
/** 233 holders: long runs of equal units (1, 2, 3, 7), a few large ones. */
const holders: StoredHolder[] = Array.from({ length: 233 }, (_, i) => ({
  address: addressOf(`holder ${i}`),
  units: i < 100 ? 1n : i < 160 ? 2n : i < 200 ? 3n : i < 224 ? 7n : 10n ** 15n + BigInt(i % 3),
}));

/** The contracts list as it must read: by mint time, unknown last, ties by address; DESC the reverse. */
function expectedContracts(
  direction: "asc" | "desc",
  filter: { types?: ContractType[]; after?: number } = {},
): string[] {
  const key = (c: StoredContract) => c.mintTime ?? Number.POSITIVE_INFINITY;
  const rows = contracts
    .filter((c) => filter.types === undefined || c.types.some((t) => filter.types?.includes(t)))
    .filter((c) => filter.after === undefined || (c.mintTime !== null && c.mintTime > filter.after))
    .sort((a, b) => key(a) - key(b) || (a.address < b.address ? -1 : 1))
    .map((c) => c.address);
  return direction === "asc" ? rows : rows.reverse();
}

/** The owners list as it must read: most units first, ties by address; ASC the exact reverse. */
function expectedOwners(direction: "asc" | "desc"): string[] {
  const rows = [...holders]
    .sort((a, b) => (a.units === b.units ? (a.address < b.address ? -1 : 1) : a.units > b.units ? -1 : 1))
    .map((h) => h.address);
  return direction === "desc" ? rows : rows.reverse();
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

let db: TestDatabase;
let api: ApiClient;

async function insertContracts(rows: readonly StoredContract[], chainId = CHAIN_ID): Promise<void> {
  await db.sql`
    INSERT INTO contracts (chain_id, address, types, mint_time, mint_source, discovered_block)
    SELECT ${chainId}, decode(a, 'hex'), string_to_array(t, ',')::text[], to_timestamp(m), 'trace', 1
    FROM unnest(${rows.map((c) => c.address.slice(2))}::text[], ${rows.map((c) => c.types.join(","))}::text[],
                ${rows.map((c) => c.mintTime)}::bigint[]) AS x(a, t, m)`;
}

before(async () => {
  db = await createTestDatabase();
  await insertContracts(contracts);
  await insertContracts(
    contracts.slice(0, 40).map((c) => ({ ...c, address: addressOf(`elsewhere ${c.address}`) })),
    OTHER_CHAIN_ID,
  );
  const holderRows = [
    ...holders.map((h) => ({ ...h, contract: COLLECTION })),
    ...holders.slice(0, 30).map((h) => ({ ...h, contract: OTHER_COLLECTION })),
  ];
  await db.sql`
    INSERT INTO collection_holders (chain_id, contract, holder, units)
    SELECT ${CHAIN_ID}, decode(c, 'hex'), decode(h, 'hex'), u::numeric
    FROM unnest(${holderRows.map((h) => h.contract.slice(2))}::text[], ${holderRows.map((h) => h.address.slice(2))}::text[],
                ${holderRows.map((h) => h.units.toString())}::text[]) AS x(c, h, u)`;
  api = await createApiFixtureOn(db.sql, CHAIN_ID);
});

after(async () => {
  await api?.close();
  await db?.close();
  await stopTestServer();
});

interface Page {
  rows: string[];
  next: string;
}

async function restPage(path: string): Promise<Page> {
  const answer = await api.get(path);
  assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
  const body = answer.body as {
    contracts?: { address: string }[];
    owner?: { address: string }[];
    nextPageToken: string;
  };
  assert.equal(typeof body.nextPageToken, "string", "nextPageToken is always present");
  return { rows: (body.contracts ?? body.owner ?? []).map((r) => r.address), next: body.nextPageToken };
}

/**
 * Every page of a list from the first, each asked with the previous one's token, until a page
 * without one. Every page but the last is full; the last one may be full too.
 */
async function walk(limit: number, page: (token: string | undefined) => Promise<Page>): Promise<string[]> {
  const rows: string[] = [];
  let token: string | undefined;
  for (let pages = 0; ; pages++) {
    assert.ok(pages <= 1000, "the walk ends");
    const got = await page(token);
    assert.ok(got.rows.length <= limit, "no page is longer than its limit");
    rows.push(...got.rows);
    if (got.next === "") return rows;
    assert.equal(got.rows.length, limit, "a page with a next one is full");
    token = got.next;
  }
}

function contractsPath(query: Record<string, string | number | string[] | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
  }
  return `/foundational/v1beta2/contracts?${params}`;
}

const ownersPath = (contract: string, query: string) =>
  `/collections/v1beta2/${contract}/owners_list?${query}`;

function assertRefused(answer: { status: number; body: unknown }, field: string, message: RegExp): void {
  assert.equal(answer.status, 400, JSON.stringify(answer.body));
  const body = answer.body as { code: number; message: string; details: unknown[] };
  assert.equal(body.code, 3);
  assert.ok(body.message.startsWith(`${field}: `), body.message);
  assert.match(body.message, message);
  assert.deepEqual(body.details, []);
}

describe("contracts list by page token", () => {
  for (const direction of ["asc", "desc"] as const) {
    const sortDirection = direction === "asc" ? "SORT_DIRECTION_ASC" : "SORT_DIRECTION_DESC";
    test(`${direction}: every contract once, in order, ties and unknown mint times included, at any page size`, async () => {
      const expected = expectedContracts(direction);
      assert.equal(expected.length, 260);
      // 20 (the default) and 13 divide 260: the last page is full and still says it is the last.
      for (const limit of [1, 9, 13, 20, 259, 260, 500]) {
        const rows = await walk(limit, (pageToken) =>
          restPage(contractsPath({ limit: limit === 20 ? undefined : limit, sortDirection, pageToken })),
        );
        assert.deepEqual(rows, expected, `pages of ${limit}`);
      }
    });

    test(`${direction}: contractTypes and blockTimestampGt, alone and together`, async () => {
      const tie = BASE_SECONDS + 11; // nine contracts were minted in that second
      const cases: { types?: ContractType[]; after?: number }[] = [
        { types: ["TYPE_CRYPTOPUNKS"] },
        { types: ["TYPE_ERC1155"] },
        { types: ["TYPE_ERC721", "TYPE_ERC1155"] },
        { types: ["TYPE_ERC721", "TYPE_ERC1155", "TYPE_ERC721_LEGACY", "TYPE_CRYPTOPUNKS"] },
        { after: tie },
        { after: BASE_SECONDS - 1 },
        { types: ["TYPE_ERC721", "TYPE_CRYPTOPUNKS"], after: tie },
        { types: ["TYPE_ERC20"], after: BASE_SECONDS + 25 },
      ];
      for (const filter of cases) {
        const expected = expectedContracts(direction, filter);
        assert.ok(expected.length >= 2, JSON.stringify(filter));
        for (const limit of [1, 7]) {
          const rows = await walk(limit, (pageToken) =>
            restPage(
              contractsPath({
                limit,
                sortDirection,
                contractTypes: filter.types,
                blockTimestampGt: filter.after === undefined ? undefined : iso(filter.after),
                pageToken,
              }),
            ),
          );
          assert.deepEqual(rows, expected, `${JSON.stringify(filter)} in pages of ${limit}`);
        }
      }
    });
  }

  test("the page size may change from page to page; a page by offset gives the token after it", async () => {
    const expected = expectedContracts("asc");
    const first = await restPage(contractsPath({ limit: 3 }));
    const second = await restPage(contractsPath({ limit: 50, pageToken: first.next }));
    assert.deepEqual([...first.rows, ...second.rows], expected.slice(0, 53));
    const byOffset = await restPage(contractsPath({ limit: 10, offset: 100 }));
    assert.deepEqual(byOffset.rows, expected.slice(100, 110));
    const rest = await walk(40, (pageToken) =>
      restPage(contractsPath({ limit: 40, pageToken: pageToken ?? byOffset.next })),
    );
    assert.deepEqual(rest, expected.slice(110));
  });
});

describe("owners list by page token", () => {
  for (const direction of ["desc", "asc"] as const) {
    test(`${direction}: every holder once, in order, through runs of equal units, at any page size`, async () => {
      const expected = expectedOwners(direction);
      const sortDirection = direction === "asc" ? "&sortDirection=SORT_DIRECTION_ASC" : "";
      for (const limit of [1, 6, 100, 233, 500]) {
        const rows = await walk(limit, (token) =>
          restPage(
            ownersPath(
              COLLECTION,
              `${limit === 500 ? "" : `limit=${limit}`}${sortDirection}${token ? `&pageToken=${token}` : ""}`,
            ),
          ),
        );
        assert.deepEqual(rows, expected, `pages of ${limit}`);
      }
    });
  }

  test("an unknown collection: no holders, no next page", async () => {
    assert.deepEqual(await restPage(ownersPath(addressOf("nobody"), "")), { rows: [], next: "" });
  });
});

describe("over gRPC", () => {
  type Request = Record<string, unknown>;
  async function grpcPage(
    service: "FoundationalService" | "CollectionsService",
    method: string,
    request: Request,
  ): Promise<Page> {
    const answer = await api.grpc(service, method, request);
    assert.equal(answer.error, null, answer.error?.message);
    const response = answer.response as {
      contracts?: { address: string }[];
      owner?: { address: string }[];
      nextPageToken: string;
    };
    return {
      rows: (response.contracts ?? response.owner ?? []).map((r) => r.address),
      next: response.nextPageToken,
    };
  }

  test("the same pages and tokens as REST, and a token of either protocol serves the other", async () => {
    const filter = { types: ["TYPE_ERC721", "TYPE_ERC1155"] as ContractType[], after: BASE_SECONDS + 4 };
    const request = {
      limit: 6,
      sortDirection: "SORT_DIRECTION_DESC",
      contractTypes: filter.types,
      blockTimestampGt: iso(filter.after),
    };
    const rows = await walk(6, (pageToken) =>
      grpcPage("FoundationalService", "ListContracts", { ...request, ...(pageToken ? { pageToken } : {}) }),
    );
    assert.deepEqual(rows, expectedContracts("desc", filter));
    const restFirst = await restPage(
      contractsPath({ ...request, limit: 6, contractTypes: filter.types, pageToken: undefined }),
    );
    const grpcFirst = await grpcPage("FoundationalService", "ListContracts", request);
    assert.deepEqual(grpcFirst, restFirst);
    const grpcSecond = await grpcPage("FoundationalService", "ListContracts", {
      ...request,
      pageToken: restFirst.next,
    });
    const restSecond = await restPage(contractsPath({ ...request, pageToken: grpcFirst.next }));
    assert.deepEqual(grpcSecond, restSecond);

    const owners = await walk(17, (pageToken) =>
      grpcPage("CollectionsService", "ListCollectionOwners", {
        contractAddress: COLLECTION,
        limit: 17,
        sortDirection: "SORT_DIRECTION_ASC",
        ...(pageToken ? { pageToken } : {}),
      }),
    );
    assert.deepEqual(owners, expectedOwners("asc"));
  });

  test("bad and foreign tokens, an offset beside a token, an offset past the cap: INVALID_ARGUMENT naming the field", async () => {
    const first = await grpcPage("FoundationalService", "ListContracts", { limit: 5 });
    const cases: [string, Request, string, RegExp][] = [
      ["ListContracts", { pageToken: "not a token" }, "page_token", /not a page token/],
      [
        "ListContracts",
        { pageToken: first.next, sortDirection: "SORT_DIRECTION_DESC" },
        "page_token",
        /another list/,
      ],
      ["ListContracts", { pageToken: first.next, offset: 5 }, "offset", /not allowed with page_token/],
      ["ListContracts", { offset: 10_001 }, "offset", /at most 10000; page further with page_token/],
      [
        "ListCollectionOwners",
        { contractAddress: COLLECTION, pageToken: first.next },
        "page_token",
        /another list/,
      ],
    ];
    for (const [method, request, field, message] of cases) {
      const service = method === "ListContracts" ? "FoundationalService" : "CollectionsService";
      const answer = await api.grpc(service, method, request);
      assert.equal(answer.error?.code, grpc.status.INVALID_ARGUMENT, `${method} ${JSON.stringify(request)}`);
      assert.ok(answer.error?.details.startsWith(`${field}: `), answer.error?.details);
      assert.match(answer.error?.details ?? "", message);
    }
  });
});

describe("refused over REST", () => {
  test("a malformed token: 400 naming page_token", async () => {
    const first = await restPage(contractsPath({ limit: 5 }));
    const cut = first.next.slice(0, -4);
    const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    for (const token of [
      "x",
      "%25%25",
      cut,
      `${first.next}AAAA`,
      "A".repeat(2000),
      json([1, "fingerprint", "1", "0x00"]),
      json({ page: 2 }),
    ]) {
      assertRefused(
        await api.get(contractsPath({ pageToken: token })),
        "page_token",
        /not a page token|another list/,
      );
      assertRefused(
        await api.get(ownersPath(COLLECTION, `pageToken=${encodeURIComponent(token)}`)),
        "page_token",
        /not a page token|another list/,
      );
    }
  });

  test("a token of another query: 400 naming page_token", async () => {
    const asc = await restPage(contractsPath({ limit: 5 }));
    const typed = await restPage(contractsPath({ limit: 5, contractTypes: ["TYPE_ERC721"] }));
    const since = await restPage(contractsPath({ limit: 5, blockTimestampGt: iso(BASE_SECONDS + 2) }));
    const owners = await restPage(ownersPath(COLLECTION, "limit=5"));
    const foreign: [string, string][] = [
      [contractsPath({ pageToken: asc.next, sortDirection: "SORT_DIRECTION_DESC" }), "direction"],
      [contractsPath({ pageToken: asc.next, contractTypes: ["TYPE_ERC721"] }), "types added"],
      [contractsPath({ pageToken: typed.next }), "types dropped"],
      [contractsPath({ pageToken: typed.next, contractTypes: ["TYPE_ERC1155"] }), "other types"],
      [contractsPath({ pageToken: since.next, blockTimestampGt: iso(BASE_SECONDS + 3) }), "other time"],
      [contractsPath({ pageToken: since.next }), "time dropped"],
      [contractsPath({ pageToken: owners.next }), "an owners token"],
      [ownersPath(OTHER_COLLECTION, `pageToken=${owners.next}`), "another collection"],
      [ownersPath(COLLECTION, `pageToken=${owners.next}&sortDirection=SORT_DIRECTION_ASC`), "direction"],
      [ownersPath(COLLECTION, `pageToken=${asc.next}`), "a contracts token"],
    ];
    for (const [path, what] of foreign) {
      const answer = await api.get(path);
      assertRefused(answer, "page_token", /another list/);
      assert.ok(answer.status === 400, what);
    }
    // The same token with the same query in other words still serves.
    const sameInOtherWords = await api.get(
      contractsPath({ page_token: since.next, blockTimestampGt: "2023-11-14T22:13:22+00:00" }),
    );
    assert.equal(sameInOtherWords.status, 200, JSON.stringify(sameInOtherWords.body));
  });

  test("an offset beside a token: 400 naming offset; offset 0 beside it is no offset", async () => {
    const first = await restPage(contractsPath({ limit: 5 }));
    assertRefused(
      await api.get(contractsPath({ pageToken: first.next, offset: 1 })),
      "offset",
      /not allowed with page_token/,
    );
    const zero = await restPage(contractsPath({ limit: 5, pageToken: first.next, offset: 0 }));
    assert.deepEqual(zero.rows, expectedContracts("asc").slice(5, 10));
    const owners = await restPage(ownersPath(COLLECTION, "limit=5"));
    assertRefused(
      await api.get(ownersPath(COLLECTION, `pageToken=${owners.next}&offset=3`)),
      "offset",
      /not allowed with page_token/,
    );
  });

  test("offset: 10,000 is served on the three lists that take it; 10,001 is 400 pointing to page_token", async () => {
    const lists = [
      "/foundational/v1beta2/contracts",
      ownersPath(COLLECTION, ""),
      "/collections/v1beta2/top/METRIC_SALES_VOLUME/DURATION_7_DAYS",
    ];
    for (const list of lists) {
      const join = list.includes("?") ? "&" : "?";
      const atCap = await api.get(`${list}${join}offset=10000`);
      assert.equal(atCap.status, 200, `${list}: ${JSON.stringify(atCap.body)}`);
      for (const beyond of ["10001", "2147483647", "99999999999999999999"]) {
        assertRefused(
          await api.get(`${list}${join}offset=${beyond}`),
          "offset",
          /^offset: must be at most 10000; page further with page_token/,
        );
      }
    }
    const lastByOffset = await restPage(contractsPath({ limit: 10, offset: 255 }));
    assert.deepEqual(lastByOffset, { rows: expectedContracts("asc").slice(255), next: "" });
  });
});

describe("a list that changes between pages", () => {
  test("contracts added before the position are not shown, those after it are, and nothing repeats", async () => {
    const first = await restPage(contractsPath({ limit: 100 }));
    const earlier: StoredContract = {
      address: addressOf("added early"),
      types: ["TYPE_ERC721"],
      mintTime: BASE_SECONDS,
    };
    const later: StoredContract = {
      address: addressOf("added late"),
      types: ["TYPE_ERC721"],
      mintTime: BASE_SECONDS + 27,
    };
    await insertContracts([earlier, later]);
    contracts.push(earlier, later);
    const rest = await walk(100, (pageToken) =>
      restPage(contractsPath({ limit: 100, pageToken: pageToken ?? first.next })),
    );
    const expected = expectedContracts("asc");
    assert.deepEqual(
      [...first.rows, ...rest],
      expected.filter((a) => a !== earlier.address),
    );
    assert.ok(rest.includes(later.address));
  });
});
