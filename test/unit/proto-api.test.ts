import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { create, fromJson, getOption, type JsonObject, toJson } from "@bufbuild/protobuf";
import { http } from "../../src/gen/google/api/annotations_pb.ts";
import { CollectionsService, TopCollectionSchema } from "../../src/gen/mintlens/v1beta2/collections_pb.ts";
import { ContractType } from "../../src/gen/mintlens/v1beta2/contract_type_pb.ts";
import { AttributedBySchema } from "../../src/gen/mintlens/v1beta2/enums_pb.ts";
import {
  BlockchainEventSchema,
  ContractSchema,
  FoundationalService,
  GetNftDetailsResponseSchema,
  PaymentSchema,
} from "../../src/gen/mintlens/v1beta2/foundational_pb.ts";
import { MarketplacesService } from "../../src/gen/mintlens/v1beta2/marketplaces_pb.ts";
import { StreamService } from "../../src/gen/mintlens/v1beta2/stream_pb.ts";
import { WalletsService } from "../../src/gen/mintlens/v1beta2/wallets_pb.ts";

/**
 * The generated API types against the specification: the REST paths of the services' http rules,
 * and the JSON the messages serialise to, compared with recorded answers of the original service.
 */

const SERVICES = [FoundationalService, CollectionsService, MarketplacesService, WalletsService];

/** Mintlens's own operations, beyond the original service's: the live event stream, a server stream over SSE. */
const STREAMS: Record<string, { get: string; query: string[] }> = {
  StreamEvents: {
    get: "/v1beta2/stream/events",
    query: ["kinds", "contractAddresses", "addresses", "after", "mode", "confirmations", "excludeSpam"],
  },
};

/** The seed's nine operations: path template and the query parameters (JSON names) of each. */
const SEED: Record<string, { get: string; query: string[] }> = {
  ListContracts: {
    get: "/foundational/v1beta2/contracts",
    query: ["limit", "offset", "sortDirection", "contractTypes", "blockTimestampGt"],
  },
  GetNftDetails: { get: "/foundational/v1beta2/nfts/{contract_address}/{token_id}/details", query: [] },
  GetNftRawMetadata: {
    get: "/foundational/v1beta2/nfts/{contract_address}/{token_id}/raw_metadata",
    query: [],
  },
  GetTopCollections: { get: "/collections/v1beta2/top/{metric}/{duration}", query: ["limit", "offset"] },
  ListCollectionOwners: {
    get: "/collections/v1beta2/{contract_address}/owners_list",
    query: ["limit", "offset", "sortDirection"],
  },
  GetSupply: {
    get: "/collections/v1beta2/{contract_address}/supply/{duration}/{group_by_period}",
    query: ["timestampLt"],
  },
  GetOwnersCount: {
    get: "/collections/v1beta2/{contract_address}/owners_count/{duration}/{group_by_period}",
    query: ["timestampLt"],
  },
  GetPrices: {
    get: "/collections/v1beta2/{contract_address}/prices/{duration}/{group_by_period}",
    query: ["timestampLt"],
  },
  GetSalesVolume: {
    get: "/collections/v1beta2/{contract_address}/sales_volume/{duration}/{group_by_period}",
    query: ["timestampLt"],
  },
};

/**
 * The original service's operations beyond the seed, at its paths and with its query parameters
 * (`../shared/realdata/dashbrd-mnemonic-responses`).
 */
const ORIGINAL: Record<string, { get: string; query: string[] }> = {
  GetCollectionMetadata: { get: "/collections/v1beta2/{contract_address}/metadata", query: ["includeStats"] },
  GetCollectionTotals: { get: "/collections/v1beta2/{contract_address}/totals", query: [] },
  GetFloorPrice: { get: "/marketplaces/v1beta2/floors/{contract_address}", query: [] },
  ListTokenOwners: {
    get: "/foundational/v1beta2/nfts/{contract_address}/{token_id}/owners",
    query: ["limit", "offset"],
  },
  ListWalletNfts: { get: "/wallets/v1beta2/{address}/nfts", query: ["limit", "offset", "contractAddress"] },
  ListStringTraits: {
    get: "/collections/v1beta2/{contract_address}/traits/string",
    query: ["limit", "offset"],
  },
  ListNumericTraits: {
    get: "/collections/v1beta2/{contract_address}/traits/numeric",
    query: ["limit", "offset"],
  },
  ListNftTransfers: {
    get: "/foundational/v1beta2/transfers/nft",
    query: ["limit", "offset", "sortDirection", "contractAddress", "blockTimestampGt", "labelsAny"],
  },
};

/** Every operation served: the seed's and the original service's others. */
const SERVED = { ...SEED, ...ORIGINAL };

/** Operations the original service also served at another path: each answers at both. */
const ALSO_AT: Record<string, string[]> = {
  ListWalletNfts: ["/foundational/v1beta2/nfts/by_owner/{address}"],
};

/** Query parameters beyond the seed's, added after them: page tokens of the lists, flagged sales counted on request. */
const ADDED: Record<string, string[]> = {
  ListContracts: ["pageToken"],
  ListCollectionOwners: ["pageToken"],
  ListTokenOwners: ["pageToken"],
  ListWalletNfts: ["pageToken", "includeSpam"],
  ListStringTraits: ["pageToken"],
  ListNumericTraits: ["pageToken"],
  ListNftTransfers: ["tokenId", "senderAddress", "recipientAddress", "blockTimestampLt", "pageToken"],
  GetTopCollections: ["pageToken", "includeFlaggedSales"],
  GetPrices: ["includeFlaggedSales"],
  GetSalesVolume: ["includeFlaggedSales"],
};

describe("the services' http rules are the seed's operations", () => {
  const methods = SERVICES.flatMap((service) => service.methods);

  test("the nine seed paths and the original service's others, each a GET bound to one method", () => {
    const rules = Object.fromEntries(
      methods.map((method) => {
        const rule = getOption(method, http);
        assert.equal(rule.pattern.case, "get", `${method.name}: not a GET rule`);
        assert.deepEqual(
          rule.additionalBindings.map((b) => (b.pattern.case === "get" ? b.pattern.value : b.pattern.case)),
          ALSO_AT[method.name] ?? [],
          `${method.name}: additional bindings`,
        );
        assert.equal(rule.body, "", `${method.name}: a GET has no body`);
        return [method.name, rule.pattern.value];
      }),
    );
    assert.deepEqual(rules, Object.fromEntries(Object.entries(SERVED).map(([name, { get }]) => [name, get])));
  });

  test("path parameters are request fields, and the other request fields are the seed's query parameters, then the added ones", () => {
    for (const method of methods) {
      const seed = SERVED[method.name];
      assert.ok(seed, `${method.name} is no operation of the seed or the original service`);
      const inPath = [...seed.get.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
      const fields = method.input.fields;
      for (const name of inPath) {
        assert.ok(
          fields.some((f) => f.name === name),
          `${method.name}: {${name}} is no field of ${method.input.name}`,
        );
      }
      assert.deepEqual(
        fields.filter((f) => !inPath.includes(f.name)).map((f) => f.jsonName),
        [...seed.query, ...(ADDED[method.name] ?? [])],
        `${method.name}: query parameters`,
      );
    }
  });
});

describe("messages serialise to the wire format", () => {
  test("every field of a response is emitted, 64-bit integers as strings, enums by name, decimals as a number", () => {
    const json = toJson(
      ContractSchema,
      create(ContractSchema, { address: "0xab", types: [ContractType.TYPE_ERC721], mintEvent: {} }),
      { alwaysEmitImplicit: true },
    );
    assert.deepEqual(json, {
      address: "0xab",
      name: "",
      symbol: "",
      decimals: 0,
      types: ["TYPE_ERC721"],
      mintEvent: { blockTimestamp: "", txHash: "", minterAddress: "" },
    });
    const details = toJson(
      GetNftDetailsResponseSchema,
      create(GetNftDetailsResponseSchema, { metrics: { quantity: 1n, ownerCount: 1n } }),
      { alwaysEmitImplicit: true },
    );
    assert.deepEqual(
      details,
      { metrics: { quantity: "1", ownerCount: "1" } },
      "unset sub-objects are left out",
    );
  });

  test("a top-collection entry carries only the metric field that was set", () => {
    const entry = create(TopCollectionSchema, {
      contractAddress: "0xab",
      salesCount: 12n,
      collection: { contractAddress: "0xab", name: "" },
      metricValue: "12",
    });
    assert.deepEqual(toJson(TopCollectionSchema, entry, { alwaysEmitImplicit: true }), {
      contractAddress: "0xab",
      contractName: "",
      salesCount: "12",
      collection: { contractAddress: "0xab", name: "" },
      metricValue: "12",
      // What was left out of the metrics: always present.
      flaggedSalesCount: "0",
      flaggedVolume: "",
      unpricedSalesCount: "0",
    });
  });
});

describe("the OpenAPI document describes the same operations", () => {
  const document = JSON.parse(
    readFileSync(new URL("../../openapi/mintlens.v1beta2.json", import.meta.url), "utf8"),
  ) as JsonObject;

  test("the nine seed paths and the original service's others, GET only, each with its parameters and the error answers", () => {
    const paths = document.paths as Record<string, { get: JsonObject }>;
    assert.deepEqual(
      Object.keys(paths).sort(),
      [
        ...Object.values(SERVED).map((s) => s.get),
        ...Object.values(ALSO_AT).flat(),
        ...Object.values(STREAMS).map((s) => s.get),
      ].sort(),
    );
    const bindings = Object.entries(SERVED).flatMap(([name, seed]) => [
      { name, seed, operationId: name },
      ...(ALSO_AT[name] ?? []).map((get, i) => ({
        name,
        seed: { ...seed, get },
        operationId: `${name}${i + 2}`,
      })),
    ]);
    for (const { name, seed, operationId } of bindings) {
      const item = paths[seed.get] as Record<string, JsonObject>;
      assert.deepEqual(Object.keys(item), ["get"], seed.get);
      const operation = item.get as JsonObject;
      assert.equal(operation.operationId, operationId);
      const parameters = operation.parameters as JsonObject[];
      const inPath = [...seed.get.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
      assert.deepEqual(
        parameters.filter((p) => p.in === "path").map((p) => p.name),
        inPath,
      );
      assert.deepEqual(
        parameters.filter((p) => p.in === "query").map((p) => p.name),
        [...seed.query, ...(ADDED[name] ?? [])],
      );
      assert.deepEqual(
        parameters.at(-1),
        { $ref: "#/components/parameters/MinBlock" },
        `${operationId}: every operation takes minBlock`,
      );
      const ok = (operation.responses as Record<string, JsonObject>)["200"];
      assert.deepEqual(Object.keys(ok?.headers as JsonObject), [
        "Mintlens-Block",
        "Mintlens-Block-Hash",
        "Mintlens-Block-Time",
      ]);
      const statuses = Object.keys(operation.responses as JsonObject);
      const notFound = [
        "GetNftDetails",
        "GetNftRawMetadata",
        "GetCollectionMetadata",
        "GetCollectionTotals",
        "GetFloorPrice",
        "ListTokenOwners",
        "ListStringTraits",
        "ListNumericTraits",
      ].includes(name);
      assert.deepEqual(statuses, ["200", "400", "401", ...(notFound ? ["404"] : []), "429", "500", "503"]);
    }
    assert.deepEqual(document.security, [{ ApiKey: [] }]);
    const components = document.components as JsonObject;
    assert.deepEqual((components.securitySchemes as JsonObject).ApiKey, {
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
      description: "The user's API key.",
    });
  });

  test("the event stream is a GET answering Server-Sent Events, resumable by Last-Event-ID, with the error answers", () => {
    const paths = document.paths as Record<string, { get: JsonObject }>;
    for (const [name, stream] of Object.entries(STREAMS)) {
      const method = StreamService.methods.find((m) => m.name === name);
      assert.equal(method?.methodKind, "server_streaming");
      assert.equal(getOption(method, http).pattern.value, stream.get);
      assert.deepEqual(
        method.input.fields.map((f) => f.jsonName),
        stream.query,
      );
      const operation = paths[stream.get]?.get as JsonObject;
      assert.equal(operation.operationId, name);
      const parameters = operation.parameters as JsonObject[];
      assert.deepEqual(
        parameters.map((p) => [p.in, p.name]),
        [...stream.query.map((q) => ["query", q]), ["header", "Last-Event-ID"]],
      );
      const responses = operation.responses as Record<string, JsonObject>;
      assert.deepEqual(Object.keys(responses), ["200", "400", "401", "429", "500", "503"]);
      const content = responses["200"]?.content as Record<string, JsonObject>;
      assert.deepEqual(Object.keys(content), ["text/event-stream"]);
      assert.deepEqual(content["text/event-stream"]?.["x-event-data"], {
        $ref: "#/components/schemas/StreamEvent",
      });
      for (const framing of ["id: <cursor>", "event: heartbeat", "event: end", "Last-Event-ID"]) {
        assert.ok(String(responses["200"]?.description).includes(framing), framing);
      }
    }
  });

  test("every reference resolves, and fields have their JSON form", () => {
    const text = JSON.stringify(document);
    for (const [, target] of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
      let node: unknown = document;
      for (const key of (target as string).split("/")) node = (node as JsonObject)[key];
      assert.ok(node !== undefined, `#/${target} does not resolve`);
    }
    const schemas = (document.components as JsonObject).schemas as Record<string, JsonObject>;
    const blockchainEvent = schemas.BlockchainEvent?.properties as Record<string, JsonObject>;
    assert.equal(blockchainEvent.logIndex?.type, "string", "uint64 is a JSON string");
    const contract = schemas.Contract?.properties as Record<string, JsonObject>;
    assert.equal(contract.decimals?.type, "integer");
    assert.deepEqual(
      schemas.AttributedBy?.enum,
      AttributedBySchema.values.map((v) => v.name),
    );
    const paths = document.paths as Record<string, { get: { parameters: JsonObject[] } }>;
    const top = paths["/collections/v1beta2/top/{metric}/{duration}"];
    assert.ok(top);
    const metric = top.get.parameters.find((p) => p.name === "metric");
    assert.ok(metric);
    assert.deepEqual(
      (metric.schema as JsonObject).enum,
      ["METRIC_SALES_VOLUME", "METRIC_SALES_QUANTITY", "METRIC_MAX_PRICE", "METRIC_AVG_PRICE"],
      "a parameter lists the values a request may send, never METRIC_UNSPECIFIED",
    );
    assert.deepEqual(schemas.Status?.required, ["code", "message", "details"]);
  });
});

const RECORDED = new URL("../../../shared/realdata/dashbrd-mnemonic-responses/", import.meta.url);
const recorded = existsSync(RECORDED)
  ? {}
  : { skip: "../shared/realdata/dashbrd-mnemonic-responses is absent (GPL data, read in place)" };

function readRecorded(name: string): JsonObject {
  return JSON.parse(readFileSync(new URL(name, RECORDED), "utf8")) as JsonObject;
}

/** The JSON text of a value: equal texts mean the same names, values and order of fields. */
const text = (value: unknown) => JSON.stringify(value);

describe("messages read and write the original service's recorded answers unchanged", () => {
  test("the blockchain events and payments of Moonbirds #8304's 18 transfers", recorded, () => {
    const transfers = readRecorded("nft_transfers.json").nftTransfers as JsonObject[];
    assert.equal(transfers.length, 18);
    const seen = new Set<string>();
    for (const transfer of transfers) {
      const event = fromJson(BlockchainEventSchema, transfer.blockchainEvent ?? null);
      assert.equal(
        text(toJson(BlockchainEventSchema, event, { alwaysEmitImplicit: true })),
        text(transfer.blockchainEvent),
      );
      for (const paid of [transfer.recipientPaid, transfer.senderReceived]) {
        const payment = fromJson(PaymentSchema, paid ?? null);
        seen.add(AttributedBySchema.value[payment.attributedBy]?.name ?? "");
        assert.equal(text(toJson(PaymentSchema, payment, { alwaysEmitImplicit: true })), text(paid));
      }
    }
    assert.deepEqual([...seen].sort(), [
      "ATTRIBUTED_BY_NO_PAYMENTS",
      "ATTRIBUTED_BY_RECIPIENT_NO_PAYMENT",
      "ATTRIBUTED_BY_SAME_CONTRACT_AVERAGE",
      "ATTRIBUTED_BY_SINGLE_TRANSFER",
    ]);
  });

  test(
    "an NFT's last sale, built from a recorded Blur sale paid in WETH, has the recorded fields",
    recorded,
    () => {
      const transfers = readRecorded("nft_transfers.json").nftTransfers as JsonObject[];
      const sale = transfers.find(
        (t) => ((t.recipientPaid as JsonObject).fungibleTotals as JsonObject[]).length > 0,
      ) as JsonObject;
      const response = create(GetNftDetailsResponseSchema, {
        nft: {
          contractAddress: sale.contractAddress as string,
          tokenId: sale.tokenId as string,
          type: ContractType.TYPE_ERC721,
        },
        lastSale: {
          blockchainEvent: fromJson(BlockchainEventSchema, sale.blockchainEvent ?? null),
          recipientPaid: fromJson(PaymentSchema, sale.recipientPaid ?? null),
        },
      });
      const json = toJson(GetNftDetailsResponseSchema, response, { alwaysEmitImplicit: true }) as JsonObject;
      assert.equal(
        text(json.lastSale),
        // Mintlens adds the sale's flags after the recorded fields: empty for an organic sale.
        text({ blockchainEvent: sale.blockchainEvent, recipientPaid: sale.recipientPaid, flags: [] }),
      );
      const nft = json.nft as JsonObject;
      assert.deepEqual(
        [nft.contractAddress, nft.tokenId, nft.type],
        [sale.contractAddress, sale.tokenId, sale.tokenType],
      );
    },
  );

  test("a contract's name and types are those of the recorded collection", recorded, () => {
    const collection = readRecorded("nft_metadata.json");
    const contract = create(ContractSchema, { name: "Moonbirds", types: [ContractType.TYPE_ERC721] });
    const json = toJson(ContractSchema, contract, { alwaysEmitImplicit: true }) as JsonObject;
    assert.deepEqual(
      { name: json.name, types: json.types },
      { name: collection.name, types: collection.types },
    );
  });
});
