import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EMPTY_METADATA, normaliseMetadata } from "../../src/metadata/normalise.ts";
import {
  type Gateways,
  parseDataUri,
  type Resolved,
  resolveUri,
  substituteId,
} from "../../src/metadata/uri.ts";

const G: Gateways = { ipfs: "https://gw.example/", arweave: "https://ar.example" };
const V0 = "QmYHU3Yc5QLiNHCDGA9Wn5cEW6hiRb64JGLdvUis9xzbk5";
const V1 = "bafybeihbarwrmsai2grajb6az7n6aokbxrtl6dq4lqmcrbmq62poa3smla";
const AR = "ChLP9AlpdPxoGu0zqrIZRRLoneJX1FV_SH4avhTV_oA";

const fetchUrl = (r: Resolved) =>
  r.kind === "fetch" ? r.url : `(${r.kind}${r.kind === "none" ? `: ${r.reason}` : ""})`;
const text = (r: Resolved) => (r.kind === "inline" ? Buffer.from(r.body).toString("utf8") : `(${r.kind})`);

describe("token URIs", () => {
  test("ERC-1155 {id}: 64 lowercase hex digits", () => {
    assert.equal(
      substituteId("https://x.example/{id}.json", 255n),
      `https://x.example/${"0".repeat(62)}ff.json`,
    );
    assert.equal(
      fetchUrl(resolveUri(`ipfs://${V0}/{id}.json`, 1n, G)),
      `https://gw.example/ipfs/${V0}/${"0".repeat(63)}1.json`,
    );
  });

  test("IPFS in every written form goes to the configured gateway", () => {
    for (const [uri, url] of [
      [`ipfs://${V0}`, `https://gw.example/ipfs/${V0}`],
      [`ipfs://${V0}/1`, `https://gw.example/ipfs/${V0}/1`],
      [`ipfs://ipfs/${V0}/a/b.json`, `https://gw.example/ipfs/${V0}/a/b.json`],
      [`ipfs:///${V1}`, `https://gw.example/ipfs/${V1}`],
      [
        `ipns://k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8`,
        "https://gw.example/ipns/k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8",
      ],
      [`https://ipfs.io/ipfs/${V0}/7?x=1`, `https://gw.example/ipfs/${V0}/7?x=1`],
      [`https://gateway.pinata.cloud/ipfs/${V1}`, `https://gw.example/ipfs/${V1}`],
      [`https://${V1}.ipfs.dweb.link/meta/3.json`, `https://gw.example/ipfs/${V1}/meta/3.json`],
      [V0, `https://gw.example/ipfs/${V0}`],
      [`/ipfs/${V0}/2`, `https://gw.example/ipfs/${V0}/2`],
      [`ar://${AR}`, `https://ar.example/${AR}`],
      [`https://arweave.net/${AR}/1.json`, `https://ar.example/${AR}/1.json`],
      [`https://abc.arweave.net/${AR}`, `https://ar.example/${AR}`],
      ["  https://api.example/token/1\u0000\u0000", "https://api.example/token/1"],
      ["http://api.example/t/1", "http://api.example/t/1"],
      ["https://example.com/ipfs/not-a-cid", "https://example.com/ipfs/not-a-cid"],
    ] as const) {
      assert.equal(fetchUrl(resolveUri(uri, 1n, G)), url, uri);
    }
  });

  test("data: URIs decode in place: base64 (padded or not), percent-encoded, raw JSON, SVG, plain text", () => {
    const json = '{"name":"A % B","image":"data:image/svg+xml;utf8,<svg/>"}';
    for (const uri of [
      `data:application/json;base64,${Buffer.from(json).toString("base64")}`,
      `data:application/json;base64,${Buffer.from(json).toString("base64").replace(/=+$/, "")}`,
      `data:application/json;base64,${Buffer.from(json).toString("base64")}#7`,
      `data:application/json;charset=utf-8,${encodeURIComponent(json)}`,
      `data:application/json,${json}`,
      `DATA:Application/JSON;utf8,${json}`,
    ]) {
      const r = resolveUri(uri, 1n, G);
      assert.equal(r.kind, "inline", uri);
      assert.equal(r.kind === "inline" && r.mediaType, "application/json");
      assert.equal(text(r), json, uri);
    }
    assert.equal(text(resolveUri("data:,hello%20world", 1n, G)), "hello world");
    assert.equal(parseDataUri("data:,x")?.mediaType, "text/plain");
    assert.equal(parseDataUri("data:image/svg+xml;base64,PHN2Zy8+")?.mediaType, "image/svg+xml");
    assert.equal(
      fetchUrl(resolveUri("data:application/json;base64,@@@", 1n, G)),
      "(none: a malformed data: URI)",
    );
    assert.equal(fetchUrl(resolveUri("data:no-comma", 1n, G)), "(none: a malformed data: URI)");
  });

  test("nothing else leaves the process: empty, other schemes, malformed", () => {
    for (const uri of [
      "",
      "   ",
      "\u0000",
      "file:///etc/passwd",
      "ftp://x.example/1",
      "javascript:alert(1)",
      "gopher://x",
      "ipfs://",
      "ar://short",
      "https://",
      "token/1",
    ]) {
      assert.equal(resolveUri(uri, 1n, G).kind, "none", JSON.stringify(uri));
    }
  });
});

describe("normalising documents", () => {
  test("the common variants of image, links and attributes", () => {
    const got = normaliseMetadata(
      JSON.stringify({
        name: " Ape #1 ",
        description: "d",
        image_url: "ipfs://x/1.png",
        animationUrl: "https://a.example/1.mp4",
        external_link: "https://e.example",
        attributes: [
          { trait_type: "Fur", value: "Gold" },
          { trait_type: "Level", value: 5, display_type: "number" },
          { traitType: "Rare", value: true },
          { value: "Unnamed" },
          { trait_type: "Nested", value: { a: 1 } },
          "loose",
        ],
      }),
    );
    assert.deepEqual(got, {
      name: "Ape #1",
      description: "d",
      image: "ipfs://x/1.png",
      animationUrl: "https://a.example/1.mp4",
      externalUrl: "https://e.example",
      attributes: [
        { traitType: "Fur", value: "Gold", displayType: "" },
        { traitType: "Level", value: "5", displayType: "number" },
        { traitType: "Rare", value: "true", displayType: "" },
        { traitType: "", value: "Unnamed", displayType: "" },
        { traitType: "", value: "loose", displayType: "" },
      ],
    });
  });

  test("inline SVG, attributes as an object, ERC-1155 properties, the JSON-schema style, a BOM", () => {
    const svg = normaliseMetadata(
      '{"name":"S","image_data":"<svg xmlns=\\"http://www.w3.org/2000/svg\\"/>"}',
    );
    assert.match(svg.image, /^data:image\/svg\+xml;base64,/);
    assert.equal(
      Buffer.from(svg.image.split(",")[1] ?? "", "base64").toString(),
      '<svg xmlns="http://www.w3.org/2000/svg"/>',
    );
    assert.deepEqual(normaliseMetadata('{"attributes":{"Fur":"Gold","Level":3}}').attributes, [
      { traitType: "Fur", value: "Gold", displayType: "" },
      { traitType: "Level", value: "3", displayType: "" },
    ]);
    assert.deepEqual(normaliseMetadata('{"name":"E","properties":{"edition":"1 of 5"}}').attributes, [
      { traitType: "edition", value: "1 of 5", displayType: "" },
    ]);
    const schema = normaliseMetadata(
      '{"title":"Asset Metadata","type":"object","properties":{"name":{"type":"string","description":"Curry Street"},"description":{"type":"string","description":"x"},"image":{"type":"string","description":"https://i.example/1.jpg"}}}',
    );
    assert.deepEqual(
      [schema.name, schema.description, schema.image, schema.attributes],
      ["Curry Street", "x", "https://i.example/1.jpg", []],
    );
    assert.equal(normaliseMetadata('\uFEFF{"name":"bom"}').name, "bom");
  });

  test("anything that is not a JSON object normalises to nothing", () => {
    for (const raw of ["", "not json", "[1,2]", "null", "42", '"text"', "<svg/>"]) {
      assert.deepEqual(normaliseMetadata(raw), EMPTY_METADATA, raw);
    }
  });
});
