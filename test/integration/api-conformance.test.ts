/**
 * Conformance with the original service's recorded answers (`../shared/realdata/
 * dashbrd-mnemonic-responses`): where our answers carry the same objects (a sale's
 * `blockchainEvent` and `recipientPaid` with its `fungibleTotals`, a price's totals, a collection's
 * metadata), they have the same field names, the same nesting and the same forms of values.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { create, toJson } from "@bufbuild/protobuf";
import {
  CollectionMetadataItem_TypeSchema,
  GetCollectionMetadataResponseSchema,
} from "../../src/gen/mintlens/v1beta2/collections_pb.ts";
import { API_CHAIN_ID, type ApiFixture, startApiFixture } from "../support/api-fixture.ts";

const RECORDED = fileURLToPath(
  new URL("../../../shared/realdata/dashbrd-mnemonic-responses", import.meta.url),
);
const present = existsSync(RECORDED);
const skip = present ? false : `the recorded answers are not here (${RECORDED})`;

type Json = Record<string, unknown>;

/** The form of a value, as a client parsing it sees it. */
function form(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  if (typeof value === "number") return Number.isInteger(value) ? "json-integer" : "json-float";
  if (typeof value !== "string") return typeof value;
  if (/^0x[0-9a-f]{64}$/.test(value)) return "hash";
  if (/^0x[0-9a-f]{40}$/.test(value)) return "address";
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value)) return "timestamp";
  if (/^(0|[1-9][0-9]*)$/.test(value)) return "integer-string";
  if (/^(0|[1-9][0-9]*)\.[0-9]*[1-9]$/.test(value)) return "decimal-string";
  if (/^[A-Z][A-Z0-9_]*$/.test(value)) return "enum";
  return "text";
}

/** Amounts are integer-looking or decimal strings by their value, so both are one form. */
const AMOUNT = new Set(["integer-string", "decimal-string"]);
function sameForm(ours: unknown, theirs: unknown, where: string): void {
  const a = form(ours);
  const b = form(theirs);
  if (AMOUNT.has(a) && AMOUNT.has(b)) return;
  assert.equal(
    a,
    b,
    `${where}: ours ${JSON.stringify(ours)} (${a}), recorded ${JSON.stringify(theirs)} (${b})`,
  );
}

/** Field names, nesting and value forms of `ours` against a recorded object of the same message. */
function conforms(ours: Json, theirs: Json, where: string): void {
  assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort(), `${where}: field names`);
  for (const [name, value] of Object.entries(theirs)) {
    const mine = ours[name];
    sameForm(mine, value, `${where}.${name}`);
    if (Array.isArray(value) && Array.isArray(mine)) {
      for (const [i, item] of value.entries()) {
        for (const myItem of mine) conforms(myItem as Json, item as Json, `${where}.${name}[${i}]`);
      }
    } else if (form(value) === "object") {
      conforms(mine as Json, value as Json, `${where}.${name}`);
    }
  }
}

describe("conformance with the original service's answers", { skip }, () => {
  let f: ApiFixture;
  let transfers: Json[] = [];
  before(async () => {
    f = await startApiFixture({ days: 15, seed: "conformance" });
    if (present) {
      transfers = (
        JSON.parse(readFileSync(`${RECORDED}/nft_transfers.json`, "utf8")) as { nftTransfers: Json[] }
      ).nftTransfers;
    }
  });
  after(async () => f?.close());

  async function lastSales(withTokens: boolean): Promise<Json[]> {
    const rows = await f.sql<{ contract: string; token_id: string }[]>`
      SELECT DISTINCT '0x' || encode(s.contract, 'hex') AS contract, s.token_id::text
      FROM sales s
      WHERE s.chain_id = ${API_CHAIN_ID} AND s.kind = 'sale'
        AND ${withTokens} = EXISTS (SELECT 1 FROM sale_payments p WHERE p.chain_id = s.chain_id AND p.contract = s.contract
                                      AND p.block_number = s.block_number AND p.log_index = s.log_index AND p.seq = s.seq)
      LIMIT 15`;
    const sales: Json[] = [];
    for (const row of rows) {
      const answer = await f.rest(`/foundational/v1beta2/nfts/${row.contract}/${row.token_id}/details`);
      assert.equal(answer.status, 200);
      const sale = (answer.body as Json).lastSale as Json | null;
      if (sale !== null) sales.push(sale);
    }
    return sales;
  }

  /** Fields of a sale the original service did not have. */
  const ADDED = new Set(["flags"]);

  test("a sale's blockchainEvent and recipientPaid: the recorded field names, nesting and value forms", async () => {
    const recordedSales = transfers.filter((t) => (t.labels as string[]).includes("LABEL_SALE"));
    assert.ok(recordedSales.length >= 5);
    const ours = [...(await lastSales(false)), ...(await lastSales(true))];
    assert.ok(ours.length >= 5);
    let priced = 0;
    for (const sale of ours) {
      // Our sale is the recorded transfer's sale part: each of its fields is one the recorded answer
      // has, or one of the fields Mintlens adds (documented as additive: old clients ignore them).
      for (const name of Object.keys(sale))
        assert.ok(name in (recordedSales[0] as Json) || ADDED.has(name), name);
      const paid = sale.recipientPaid as Json;
      // totalUsd is "" when no dollar rate was known at the block, which the recorded answers never show.
      if (paid.totalUsd === "") continue;
      priced++;
      for (const recorded of recordedSales) {
        conforms(sale.blockchainEvent as Json, recorded.blockchainEvent as Json, "lastSale.blockchainEvent");
        conforms(paid, recorded.recipientPaid as Json, "lastSale.recipientPaid");
      }
    }
    assert.ok(priced >= 3, "sales with a dollar value were compared");
  });

  test("fungibleTotals: the recorded form of each token's part", async () => {
    const recorded = transfers
      .flatMap((t) => ((t.recipientPaid as Json).fungibleTotals as Json[]) ?? [])
      .filter((x) => x !== undefined);
    assert.ok(recorded.length >= 1);
    const ours = (await lastSales(true)).flatMap((s) => (s.recipientPaid as Json).fungibleTotals as Json[]);
    assert.ok(ours.length >= 1, "sales paid in ERC-20 tokens");
    for (const mine of ours) for (const theirs of recorded) conforms(mine, theirs, "fungibleTotals[]");
  });

  test("amounts: the recorded decimal forms (no exponent, no trailing zeros) in every amount we write", async () => {
    const price = (JSON.parse(readFileSync(`${RECORDED}/nft_floor_price.json`, "utf8")) as { price: Json })
      .price;
    const recordedAmounts = [
      price.totalNative,
      price.totalUsd,
      ...transfers.flatMap((t) =>
        Object.values(t.recipientPaid as Json).filter((v) => typeof v === "string" && /^\d/.test(v)),
      ),
    ];
    for (const amount of recordedAmounts) assert.ok(AMOUNT.has(form(amount)), `recorded ${amount}`);
    const top = (await f.rest("/collections/v1beta2/top/METRIC_AVG_PRICE/DURATION_30_DAYS?limit=500"))
      .body as {
      collections: Json[];
    };
    const prices = (
      (
        await f.rest(
          `/collections/v1beta2/${f.history.contracts.erc721.address}/prices/DURATION_30_DAYS/GROUP_BY_PERIOD_1_DAY`,
        )
      ).body as { dataPoints: Json[] }
    ).dataPoints;
    const ours = [
      ...top.collections.map((c) => c.avgPrice),
      ...prices.flatMap((p) => [p.min, p.max, p.avg]),
      ...(await lastSales(true)).flatMap((s) =>
        Object.values(s.recipientPaid as Json).filter((v) => typeof v === "string" && /^\d/.test(v)),
      ),
    ];
    assert.ok(ours.length > 10);
    for (const amount of ours) assert.ok(AMOUNT.has(form(amount)), `ours ${amount}`);
  });

  /** Fields of a collection's metadata the original service did not have, and their JSON types. */
  const ADDED_TO_METADATA = new Map([
    ["symbol", "string"],
    ["spam", "object"],
  ]);

  test("a collection's metadata: the recorded field names, nesting and value forms, with and without stats", async () => {
    const recorded = JSON.parse(readFileSync(`${RECORDED}/nft_metadata.json`, "utf8")) as Json;
    const contract = f.history.contracts.erc721.address;
    const plain = await f.rest(`/collections/v1beta2/${contract}/metadata`);
    assert.equal(plain.status, 200, plain.text);
    const ours = plain.body as Json;
    const shared = Object.fromEntries(Object.entries(ours).filter(([k]) => !ADDED_TO_METADATA.has(k)));
    for (const [name, type] of ADDED_TO_METADATA) assert.equal(typeof ours[name], type, name);
    // The recorded answer was asked without stats: the same "0", "0" and "".
    conforms(shared, recorded, "metadata");
    assert.deepEqual([shared.tokensCount, shared.ownersCount, shared.salesVolume], ["0", "0", ""]);
    assert.deepEqual([recorded.tokensCount, recorded.ownersCount, recorded.salesVolume], ["0", "0", ""]);
    const withStats = (await f.rest(`/collections/v1beta2/${contract}/metadata?includeStats=true`))
      .body as Json;
    assert.deepEqual(Object.keys(withStats).sort(), Object.keys(ours).sort());
    for (const name of ["tokensCount", "ownersCount", "salesVolume"]) {
      assert.ok(AMOUNT.has(form(withStats[name])), `${name}: ${withStats[name]}`);
    }
    assert.ok(BigInt(withStats.tokensCount as string) > 0n);
    // Our list of links is empty; its items, once there, are written as the recorded ones: every
    // recorded kind is a value of ours, and the recorded list goes through our message unchanged.
    const items = recorded.metadata as { type: string; value: string }[];
    assert.ok(items.length >= 8);
    const typeNumber = (name: string) => {
      const value = CollectionMetadataItem_TypeSchema.values.find((v) => v.name === name && v.number !== 0);
      assert.ok(value, `${name} is a kind of metadata item`);
      return value.number;
    };
    const message = create(GetCollectionMetadataResponseSchema, {
      metadata: items.map((item) => ({ type: typeNumber(item.type), value: item.value })),
    });
    const json = toJson(GetCollectionMetadataResponseSchema, message, { alwaysEmitImplicit: true }) as Json;
    assert.deepEqual(json.metadata, items);
  });
});
