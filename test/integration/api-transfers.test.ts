/**
 * The NFT transfers list over real sockets, on a history the real indexer wrote from anvil: each
 * filter's answer against a replay of the event tables read here (nft_transfers, sales,
 * sale_payments), paging by offset and by token without repeats or gaps, the refused parameters,
 * gRPC against REST, and the shape of an answer against the original service's recorded one.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { type ApiFixture, startApiFixture } from "../support/api-fixture.ts";

const RECORDED = fileURLToPath(
  new URL("../../../shared/realdata/dashbrd-mnemonic-responses/nft_transfers.json", import.meta.url),
);

type Json = Record<string, unknown>;

let f: ApiFixture;
/** Every transfer as the test expects it, newest first. */
let expected: Expected[];

interface Expected {
  key: [bigint, number, number];
  time: number;
  contract: string;
  tokenId: string;
  from: string;
  to: string;
  json: Json;
}

const ZERO = `0x${"00".repeat(20)}`;
const BURN = new Set([
  ZERO,
  "0x000000000000000000000000000000000000dead",
  "0xdead000000000000000042069420694206942069",
]);
const MARKET: Record<string, string> = {
  seaport: "LABEL_MARKETPLACE_OPENSEA",
  wyvern: "LABEL_MARKETPLACE_OPENSEA",
  blur: "LABEL_MARKETPLACE_BLUR",
  looksrare: "LABEL_MARKETPLACE_LOOKSRARE",
  x2y2: "LABEL_MARKETPLACE_X2Y2",
  cryptopunks: "LABEL_MARKETPLACE_CRYPTOPUNKS",
};
const ORDER = [
  "LABEL_MINT",
  "LABEL_BURN",
  "LABEL_TRANSFER",
  "LABEL_SALE",
  "LABEL_BUNDLE",
  "LABEL_MARKETPLACE_OPENSEA",
  "LABEL_MARKETPLACE_BLUR",
  "LABEL_MARKETPLACE_LOOKSRARE",
  "LABEL_MARKETPLACE_X2Y2",
  "LABEL_MARKETPLACE_CRYPTOPUNKS",
  "LABEL_PAID_MINT",
  "LABEL_RETURN",
  "LABEL_WASH",
  "LABEL_RATE_OUTLIER",
  "LABEL_UNPRICED",
  "LABEL_ORGANIC",
];
const TYPE: Record<string, string> = {
  erc721: "TYPE_ERC721",
  erc2309: "TYPE_ERC721",
  erc1155: "TYPE_ERC1155",
  legacy: "TYPE_ERC721_LEGACY",
  punks: "TYPE_CRYPTOPUNKS",
};

/** Base units as a decimal of `decimals` places, trailing zeros dropped. */
function decimal(units: bigint, decimals: number): string {
  const text = units.toString().padStart(decimals + 1, "0");
  const whole = text.slice(0, text.length - decimals);
  const fraction = text.slice(text.length - decimals).replace(/0+$/, "");
  return fraction === "" ? whole : `${whole}.${fraction}`;
}

function usdText(text: string): string {
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;

const NO_PAYMENT = {
  totalNative: "0",
  totalUsd: "0",
  nativeTransfersTotal: "0",
  fungibleTransfersTotal: "0",
  attributedBy: "ATTRIBUTED_BY_NO_PAYMENTS",
  fungibleTotals: [],
};

async function replay(): Promise<Expected[]> {
  const transfers = await f.sql<
    {
      block_number: string;
      log_index: number;
      seq: number;
      contract: Uint8Array;
      token_id: string;
      from_address: Uint8Array;
      to_address: Uint8Array;
      amount: string;
      tx_hash: Uint8Array;
      block_time: Date;
      standard: string;
    }[]
  >`SELECT block_number::text, log_index, seq, contract, token_id::text, from_address, to_address, amount::text,
           tx_hash, block_time, standard FROM nft_transfers`;
  const sales = await f.sql<
    {
      block_number: string;
      log_index: number;
      seq: number;
      seller: Uint8Array;
      buyer: Uint8Array;
      tx_hash: Uint8Array;
      kind: string;
      market: string;
      flags: string[];
      native_paid: string;
      fungible_paid: string;
      total_native: string;
      total_usd: string | null;
      attributed_by: string;
    }[]
  >`SELECT block_number::text, log_index, seq, seller, buyer, tx_hash, kind, market, flags, native_paid::text,
           fungible_paid::text, total_native::text, total_usd::text, attributed_by FROM sales`;
  const payments = await f.sql<
    {
      block_number: string;
      log_index: number;
      seq: number;
      seller: Uint8Array;
      token: Uint8Array;
      amount: string;
    }[]
  >`SELECT block_number::text, log_index, seq, seller, token, amount::text FROM sale_payments`;
  const decimals = new Map(
    (
      await f.sql<{ address: Uint8Array; decimals: number | null }[]>`SELECT address, decimals FROM contracts`
    ).map((c) => [hex(c.address), c.decimals]),
  );
  const at = (r: { block_number: string; log_index: number; seq: number }) =>
    `${r.block_number}:${r.log_index}:${r.seq}`;
  type Trade = (typeof sales)[number];
  const tradesOf = new Map<string, Trade[]>();
  for (const s of sales) tradesOf.set(at(s), [...(tradesOf.get(at(s)) ?? []), s]);
  const paidBy = new Map<string, (typeof payments)[number][]>();
  for (const p of payments) {
    const k = `${at(p)}:${hex(p.seller)}`;
    paidBy.set(k, [...(paidBy.get(k) ?? []), p]);
  }
  const saleBuys = new Map<string, Set<string>>();
  for (const s of sales.filter((x) => x.kind === "sale")) {
    const k = `${s.block_number}:${hex(s.tx_hash)}:${hex(s.buyer)}`;
    saleBuys.set(k, (saleBuys.get(k) ?? new Set()).add(`${s.log_index}:${s.seq}`));
  }
  const payment = (list: Trade[]) => {
    if (list.length === 0) return NO_PAYMENT;
    assert.equal(list.length, 1, "the history has one trade per delivering transfer");
    const s = list[0] as Trade;
    const paid = (paidBy.get(`${at(s)}:${hex(s.seller)}`) ?? []).sort((a, b) =>
      hex(a.token) < hex(b.token) ? -1 : 1,
    );
    return {
      totalNative: decimal(BigInt(s.total_native), 18),
      totalUsd: s.total_usd === null ? "" : usdText(s.total_usd),
      nativeTransfersTotal: decimal(BigInt(s.native_paid), 18),
      fungibleTransfersTotal: decimal(BigInt(s.fungible_paid), 18),
      attributedBy: s.attributed_by,
      fungibleTotals: paid.map((p) => ({
        contractAddress: hex(p.token),
        totalNormalized: decimal(BigInt(p.amount), decimals.get(hex(p.token)) ?? 0),
      })),
    };
  };
  const rows = transfers.map((t) => {
    const from = hex(t.from_address);
    const to = hex(t.to_address);
    const trades = tradesOf.get(at(t)) ?? [];
    const labels = new Set<string>();
    if (from === ZERO) labels.add("LABEL_MINT");
    if (BURN.has(to)) labels.add("LABEL_BURN");
    for (const s of trades) {
      if (s.kind === "mint") labels.add("LABEL_PAID_MINT");
      if (s.kind === "return") labels.add("LABEL_RETURN");
      if (s.kind !== "sale") continue;
      labels.add("LABEL_SALE");
      if ((saleBuys.get(`${s.block_number}:${hex(s.tx_hash)}:${hex(s.buyer)}`)?.size ?? 0) > 1) {
        labels.add("LABEL_BUNDLE");
      }
      const market = MARKET[s.market];
      if (market) labels.add(market);
      const wash = s.flags.some((x) => x.startsWith("wash"));
      if (wash) labels.add("LABEL_WASH");
      if (s.flags.includes("rate_outlier")) labels.add("LABEL_RATE_OUTLIER");
      if (s.flags.includes("unpriced")) labels.add("LABEL_UNPRICED");
      else if (!wash && !s.flags.includes("rate_outlier")) labels.add("LABEL_ORGANIC");
    }
    if (from !== ZERO && !BURN.has(to) && !labels.has("LABEL_SALE")) labels.add("LABEL_TRANSFER");
    const json: Json = {
      blockchainEvent: {
        txHash: hex(t.tx_hash),
        logIndex: String(t.log_index),
        seqIndex: String(t.seq),
        blockNumber: t.block_number,
        blockTimestamp: t.block_time.toISOString().replace(/\.\d{3}Z$/, "Z"),
      },
      contractAddress: hex(t.contract),
      tokenId: t.token_id,
      tokenType: TYPE[t.standard],
      quantity: t.amount,
      sender: { address: from, type: "TYPE_OWNER" },
      senderReceived: payment(trades.filter((s) => s.kind === "sale")),
      recipient: { address: to, type: "TYPE_OWNER" },
      recipientPaid: payment(trades.filter((s) => s.kind !== "return")),
      labels: ORDER.filter((l) => labels.has(l)),
    };
    return {
      key: [BigInt(t.block_number), t.log_index, t.seq] as [bigint, number, number],
      time: t.block_time.getTime(),
      contract: hex(t.contract),
      tokenId: t.token_id,
      from,
      to,
      json,
    };
  });
  return rows.sort((a, b) =>
    a.key[0] !== b.key[0] ? (a.key[0] < b.key[0] ? 1 : -1) : b.key[1] - a.key[1] || b.key[2] - a.key[2],
  );
}

/** Every page of a query by page token, at most `rounds` pages. */
async function walk(query: string, limit: number, rounds = 200): Promise<Json[]> {
  const listed: Json[] = [];
  let token = "";
  for (let i = 0; i < rounds; i++) {
    const sep = query === "" ? "" : "&";
    const answer = await f.rest(
      `/foundational/v1beta2/transfers/nft?${query}${sep}limit=${limit}${token ? `&pageToken=${token}` : ""}`,
    );
    assert.equal(answer.status, 200, answer.text);
    const body = answer.body as { nftTransfers: Json[]; nextPageToken: string };
    listed.push(...body.nftTransfers);
    if (body.nextPageToken === "") return listed;
    token = body.nextPageToken;
  }
  throw new Error(`more than ${rounds} pages`);
}

before(async () => {
  f = await startApiFixture({ days: 4, seed: "transfers" });
  expected = await replay();
});

after(async () => {
  await f?.close();
});

describe("ListNftTransfers", () => {
  test("the history has what the filters need", () => {
    const labels = new Set(expected.flatMap((e) => e.json.labels as string[]));
    for (const l of ["LABEL_MINT", "LABEL_BURN", "LABEL_TRANSFER", "LABEL_SALE", "LABEL_ORGANIC"]) {
      assert.ok(labels.has(l), `${l} in the history: ${[...labels]}`);
    }
    assert.ok(expected.length > 200, `${expected.length} transfers`);
  });

  test("every transfer, newest first, as the replay of the event tables has it", async () => {
    assert.deepEqual(
      await walk("", 500),
      expected.map((e) => e.json),
    );
  });

  test("each filter's answer", async () => {
    const sold = expected.find((e) => (e.json.labels as string[]).includes("LABEL_SALE"));
    assert.ok(sold);
    const middle = expected[Math.floor(expected.length / 2)] as Expected;
    const later = expected[Math.floor(expected.length / 4)] as Expected;
    const iso = (ms: number) => new Date(ms).toISOString();
    const cases: [string, (e: Expected) => boolean][] = [
      [
        `contractAddress=${sold.contract.toUpperCase().replace("0X", "0x")}`,
        (e) => e.contract === sold.contract,
      ],
      [
        `contractAddress=${sold.contract}&tokenId=${sold.tokenId}`,
        (e) => e.contract === sold.contract && e.tokenId === sold.tokenId,
      ],
      [`senderAddress=${sold.from}`, (e) => e.from === sold.from],
      [`recipientAddress=${sold.to}`, (e) => e.to === sold.to],
      [`senderAddress=${ZERO}`, (e) => e.from === ZERO],
      [
        `blockTimestampGt=${iso(middle.time)}&blockTimestampLt=${iso(later.time)}`,
        (e) => e.time > middle.time && e.time < later.time,
      ],
      [`blockTimestampGt=${iso(middle.time - 500)}`, (e) => e.time > middle.time - 1000],
      [
        `contractAddress=${sold.contract}&labelsAny=LABEL_SALE`,
        (e) => e.contract === sold.contract && has(e, "LABEL_SALE"),
      ],
      [
        `contractAddress=${sold.contract}&senderAddress=${sold.from}`,
        (e) => e.contract === sold.contract && e.from === sold.from,
      ],
      ["labelsAny=LABEL_MINT&labelsAny=LABEL_BURN", (e) => has(e, "LABEL_MINT") || has(e, "LABEL_BURN")],
      ["labelsAny=LABEL_SALE,LABEL_PAID_MINT", (e) => has(e, "LABEL_SALE") || has(e, "LABEL_PAID_MINT")],
      ...ORDER.map((l): [string, (e: Expected) => boolean] => [`labelsAny=${l}`, (e) => has(e, l)]),
    ];
    for (const [query, keep] of cases) {
      const want = expected.filter(keep).map((e) => e.json);
      assert.deepEqual(await walk(query, 500), want, query);
      const asc = await walk(`${query}&sortDirection=SORT_DIRECTION_ASC`, 500);
      assert.deepEqual(asc, [...want].reverse(), `${query}, oldest first`);
    }
  });

  test("paging by token and by offset: every transfer once, in order, whatever the page sizes", async () => {
    const query = "labelsAny=LABEL_SALE,LABEL_TRANSFER,LABEL_MINT";
    const all = expected
      .filter((e) => ["LABEL_SALE", "LABEL_TRANSFER", "LABEL_MINT"].some((l) => has(e, l)))
      .map((e) => e.json);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 6 }),
        async (sizes) => {
          const listed: Json[] = [];
          let token = "";
          // Pages of one need as many requests as there are transfers, and one more says it ended.
          for (let i = 0; i <= all.length; i++) {
            const limit = sizes[i % sizes.length] as number;
            const answer = await f.rest(
              `/foundational/v1beta2/transfers/nft?${query}&limit=${limit}${token ? `&pageToken=${token}` : ""}`,
            );
            const body = answer.body as { nftTransfers: Json[]; nextPageToken: string };
            assert.equal(answer.status, 200, answer.text);
            listed.push(...body.nftTransfers);
            if (body.nextPageToken === "") break;
            token = body.nextPageToken;
          }
          assert.deepEqual(listed, all);
        },
      ),
      { numRuns: 5 },
    );
    const byOffset: Json[] = [];
    for (let offset = 0; offset < all.length + 37; offset += 37) {
      const answer = await f.rest(`/foundational/v1beta2/transfers/nft?${query}&limit=37&offset=${offset}`);
      byOffset.push(...(answer.body as { nftTransfers: Json[] }).nftTransfers);
    }
    assert.deepEqual(byOffset, all);
  });

  test("malformed parameters are 400 naming the field", async () => {
    const cases: [string, string][] = [
      ["contractAddress=0x12", "contract_address"],
      ["senderAddress=nope", "sender_address"],
      ["recipientAddress=0x", "recipient_address"],
      [`contractAddress=${ZERO}&tokenId=-1`, "token_id"],
      ["tokenId=5", "token_id"],
      ["blockTimestampGt=2024-01-01", "block_timestamp_gt"],
      ["blockTimestampLt=yesterday", "block_timestamp_lt"],
      ["labelsAny=LABEL_NOPE", "labels_any"],
      ["labelsAny=LABEL_UNSPECIFIED", "labels_any"],
      ["labelsAny=LABEL_SALE,", "labels_any"],
      ["sortDirection=DESC", "sort_direction"],
      ["limit=501", "limit"],
      ["offset=10001", "offset"],
      ["pageToken=garbage", "page_token"],
      ["offset=3&pageToken=abc", "offset"],
    ];
    for (const [query, field] of cases) {
      const answer = await f.rest(`/foundational/v1beta2/transfers/nft?${query}`);
      assert.equal(answer.status, 400, `${query}: ${answer.text}`);
      const body = answer.body as { code: number; message: string };
      assert.equal(body.code, 3);
      assert.ok(body.message.startsWith(`${field}: `), `${query}: ${body.message}`);
    }
    const first = await f.rest("/foundational/v1beta2/transfers/nft?limit=2");
    const token = (first.body as { nextPageToken: string }).nextPageToken;
    const other = await f.rest(
      `/foundational/v1beta2/transfers/nft?limit=2&labelsAny=LABEL_SALE&pageToken=${token}`,
    );
    assert.equal(other.status, 400, "a token of another list");
  });

  test("gRPC answers as REST does", async () => {
    const sold = expected.find((e) => has(e, "LABEL_SALE"));
    assert.ok(sold);
    const cases: [Json, string][] = [
      [{ limit: 7 }, "limit=7"],
      [
        { contractAddress: sold.contract, labelsAny: ["LABEL_SALE"], sortDirection: "SORT_DIRECTION_ASC" },
        `contractAddress=${sold.contract}&labelsAny=LABEL_SALE&sortDirection=SORT_DIRECTION_ASC`,
      ],
      [{ senderAddress: sold.from, limit: 3, offset: 1 }, `senderAddress=${sold.from}&limit=3&offset=1`],
    ];
    for (const [request, query] of cases) {
      const grpc = await f.grpc("FoundationalService", "ListNftTransfers", request);
      assert.equal(grpc.error, null, grpc.error?.message);
      const rest = await f.rest(`/foundational/v1beta2/transfers/nft?${query}`);
      assert.deepEqual(plain(grpc.response), rest.body, query);
    }
    const refused = await f.grpc("FoundationalService", "ListNftTransfers", { tokenId: "1" });
    assert.equal(refused.error?.code, 3);
    assert.match(refused.error?.details ?? "", /^token_id: /);
  });

  test("the shape of an answer is the original service's", { skip: !existsSync(RECORDED) }, async () => {
    const recorded = JSON.parse(readFileSync(RECORDED, "utf8")) as { nftTransfers: Json[] };
    const ours = (await walk("", 500)) as Json[];
    const recordedShape = shapes(recorded.nftTransfers);
    const ourShape = shapes(ours);
    assert.deepEqual(
      Object.keys(ourShape).sort(),
      Object.keys(recordedShape).sort(),
      "the same keys, nested alike",
    );
    for (const [path, formsSeen] of Object.entries(ourShape)) {
      const theirs = recordedShape[path] ?? new Set();
      for (const form of formsSeen) {
        // Our fungible totals are often empty and our USD empty without a rate ("" as documented).
        if (form === "empty-text" && path.endsWith("totalUsd")) continue;
        assert.ok(theirs.has(form), `${path}: ${form} (the recording has ${[...theirs]})`);
      }
    }
    const enums = (list: Json[], pick: (t: Json) => unknown[]) => new Set(list.flatMap(pick));
    const recordedLabels = enums(recorded.nftTransfers, (t) => t.labels as string[]);
    for (const label of recordedLabels) assert.ok(ORDER.includes(label as string), `${label} is ours too`);
    const attributed = (t: Json) => [
      (t.recipientPaid as Json).attributedBy,
      (t.senderReceived as Json).attributedBy,
    ];
    for (const value of enums(ours, attributed)) assert.match(String(value), /^ATTRIBUTED_BY_[A-Z_]+$/);
  });
});

function has(e: Expected, label: string): boolean {
  return (e.json.labels as string[]).includes(label);
}

function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !k.startsWith("_"))
      .map(([k, v]) => [k, plain(v)]),
  );
}

/** The form of a value as a client parsing it sees it. */
function form(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  if (typeof value !== "string") return typeof value;
  if (value === "") return "empty-text";
  if (/^0x[0-9a-f]{64}$/.test(value)) return "hash";
  if (/^0x[0-9a-f]{40}$/.test(value)) return "address";
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value)) return "timestamp";
  if (/^(0|[1-9][0-9]*)$/.test(value)) return "integer-string";
  if (/^(0|[1-9][0-9]*)\.[0-9]*[1-9]$/.test(value)) return "decimal-string";
  if (/^[A-Z][A-Z0-9_]*$/.test(value)) return "enum";
  return "text";
}

/** Every path of a list of objects (arrays as `[]`) with the forms of the values seen there. */
function shapes(list: unknown[]): Record<string, Set<string>> {
  const found: Record<string, Set<string>> = {};
  const visit = (value: unknown, path: string) => {
    const seen = found[path] ?? new Set<string>();
    const f = form(value);
    // An amount is a decimal whether or not it has a fractional part ("21" and "2.5" alike).
    const amount = /(total\w*|Total)$/.test(path) && /^(integer|decimal)-string$/.test(f);
    seen.add(amount ? "decimal" : f);
    found[path] = seen;
    if (Array.isArray(value)) for (const v of value) visit(v, `${path}[]`);
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) visit(v, `${path}.${k}`);
    }
  };
  for (const item of list) visit(item, "");
  return found;
}
