/**
 * What of a fetched body is kept, and how it normalises, when the body is hostile: NULs, binary
 * files the sniffer does not know, documents built to be costly to parse, fields of any length.
 * The JSON scan that guards parsing must judge every text as `JSON.parse` does (property-based).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { DOCUMENT_LIMITS, readDocument } from "../../src/metadata/document.ts";
import { scanJson } from "../../src/metadata/json-scan.ts";
import { NORMALISED_LIMITS, normaliseMetadata } from "../../src/metadata/normalise.ts";
import { sniffMediaType } from "../../src/metadata/sniff.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** The values and depth of a parsed value, counted the slow way. */
function shapeOf(value: unknown, depth = 0): { values: number; depth: number } {
  if (typeof value !== "object" || value === null) return { values: 1, depth };
  const items = Array.isArray(value) ? value : Object.values(value);
  let values = 1;
  let deepest = depth + 1;
  for (const item of items) {
    const inner = shapeOf(item, depth + 1);
    values += inner.values;
    deepest = Math.max(deepest, inner.depth);
  }
  return { values, depth: deepest };
}

describe("the JSON scan", () => {
  test("takes what JSON.parse takes, and measures it as parsing would build it", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 6 }), (text) => {
        assert.deepEqual(scanJson(text), shapeOf(JSON.parse(text)), text);
      }),
      { numRuns: 500 },
    );
  });

  test("refuses what JSON.parse refuses, however the text is broken", () => {
    const broken = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc
        .tuple(
          fc.json({ maxDepth: 3 }),
          fc.nat(),
          fc.constantFrom("", ",", "]", "}", "{", "[", '"', "\\", "\0", "0", "-", "."),
        )
        .map(([text, at, c]) => {
          const i = text.length === 0 ? 0 : at % text.length;
          return `${text.slice(0, i)}${c}${text.slice(i + 1)}`;
        }),
      fc.constantFrom(
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "+1",
        '"\\x"',
        '"\\u12"',
        "[1,]",
        '{"a":1,}',
        "{1:2}",
        "nul",
        "tru",
        "[] []",
        '"a\nb"',
        "\uFEFF[]",
      ),
    );
    fc.assert(
      fc.property(broken, (text) => {
        assert.equal(scanJson(text) !== undefined, parses(text.replace(/^\uFEFF/, "")), JSON.stringify(text));
      }),
      { numRuns: 2_000 },
    );
  });

  test("measures a megabyte of nesting without recursing", () => {
    const deep = `${"[".repeat(500_000)}${"]".repeat(500_000)}`;
    assert.deepEqual(scanJson(deep), { values: 500_000, depth: 500_000 });
    assert.equal(scanJson(`${"[".repeat(500_000)}${"]".repeat(499_999)}`), undefined);
  });
});

describe("a fetched body as a document", () => {
  test("binary files the sniffer does not know are not kept as text", () => {
    const zip = Buffer.concat([Buffer.from("504b0304140000000800", "hex"), Buffer.from("name.json")]);
    const pdf = Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "latin1");
    const wav = Buffer.concat([
      Buffer.from("RIFF"),
      Buffer.from([0x24, 8, 0, 0]),
      Buffer.from("WAVEfmt "),
      Buffer.from([16, 0, 0, 0, 1, 0, 2, 0]),
    ]);
    const invalid = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    for (const [what, body] of [
      ["zip", zip],
      ["pdf", pdf],
      ["wav", wav],
      ["not UTF-8", invalid],
    ] as const) {
      const read = readDocument(body, sniffMediaType(body));
      assert.ok("refused" in read, what);
      assert.match(read.refused, /^not a text document \(.+, \d+ bytes\)$/, what);
    }
  });

  test("NUL bytes: padding dropped, one inside replaced; JSON's \\u0000 escape kept as written", () => {
    const padded = readDocument(bytes('{"name":"Ape"}\0\0\0'), "text/plain");
    assert.deepEqual(padded, { text: '{"name":"Ape"}' });
    assert.deepEqual(readDocument(bytes("a\0b\0"), "text/plain"), { text: "a\uFFFDb" });
    const escaped = '{"name":"Ape\\u0000\\u0000","description":"x\\u0000y"}';
    assert.deepEqual(readDocument(bytes(escaped), "application/json"), { text: escaped });
    assert.equal(sniffMediaType(bytes("text\0\0")), "text/plain");
  });

  test("a JSON document is refused beyond its values or its depth, before it is parsed", () => {
    const many = `[${"0,".repeat(DOCUMENT_LIMITS.maxValues)}0]`;
    assert.match(
      (readDocument(bytes(many), "application/json") as { refused: string }).refused,
      /^a JSON document of more than 100000 values \(100002\)$/,
    );
    const deep = `${"[".repeat(65)}${"]".repeat(65)}`;
    assert.match(
      (readDocument(bytes(deep), "application/json") as { refused: string }).refused,
      /deeper than 64 \(65\)/,
    );
    assert.deepEqual(readDocument(bytes(`${"[".repeat(64)}${"]".repeat(64)}`), "application/json"), {
      text: `${"[".repeat(64)}${"]".repeat(64)}`,
    });
    // The same bounds guard normalising on its own.
    assert.deepEqual(normaliseMetadata(`{"name":"x","a":${many}}`).name, "");
  });
});

describe("normalised fields are bounded and storable", () => {
  test("NULs from bytes32 names are dropped, lone surrogates replaced", () => {
    const n = normaliseMetadata(
      '{"name":"Ape #1\\u0000\\u0000\\u0000","description":"a\\u0000b \\ud800","image":"ipfs://x\\u0000/1.png",' +
        '"attributes":[{"trait_type":"Fur\\u0000","value":"Gold\\u0000","display_type":"\\udc00"}]}',
    );
    assert.equal(n.name, "Ape #1");
    assert.equal(n.description, "ab \uFFFD");
    assert.equal(n.image, "ipfs://x/1.png");
    assert.deepEqual(n.attributes, [{ traitType: "Fur", value: "Gold", displayType: "\uFFFD" }]);
  });

  test("at most 1,000 attributes, each of bounded length", () => {
    const list = Array.from({ length: 5_000 }, (_, i) => ({ trait_type: `t${i}`, value: i }));
    const n = normaliseMetadata(JSON.stringify({ attributes: list }));
    assert.equal(n.attributes.length, NORMALISED_LIMITS.attributes);
    assert.deepEqual(n.attributes[999], { traitType: "t999", value: "999", displayType: "" });
    const object = Object.fromEntries(list.map((a) => [a.trait_type, a.value]));
    assert.equal(normaliseMetadata(JSON.stringify({ attributes: object })).attributes.length, 1_000);
    const long = normaliseMetadata(
      JSON.stringify({
        attributes: [
          { trait_type: "t".repeat(9_999), value: "v".repeat(9_999), display_type: "d".repeat(999) },
        ],
      }),
    );
    assert.deepEqual(long.attributes, [
      { traitType: "t".repeat(256), value: "v".repeat(1_024), displayType: "d".repeat(256) },
    ]);
  });

  test("names and descriptions are cut, never inside a surrogate pair; long locations are left out", () => {
    const n = normaliseMetadata(
      JSON.stringify({
        name: `${"n".repeat(1_023)}😀`,
        description: "d".repeat(70_000),
        image: `https://x.example/${"a".repeat(9_000)}`,
        animation_url: `data:text/html;base64,${"A".repeat(20_000)}`,
        external_url: "https://x.example/ok",
      }),
    );
    assert.equal(n.name, "n".repeat(1_023));
    assert.equal(n.description.length, 65_536);
    assert.equal(n.image, "");
    assert.equal(n.animationUrl.length, 20_022, "a data: URI is the content itself: kept whole");
    assert.equal(n.externalUrl, "https://x.example/ok");
  });

  test("wrong types normalise to nothing rather than fail", () => {
    for (const doc of [
      "null",
      "[]",
      "7",
      '"x"',
      '{"attributes":"x"}',
      '{"attributes":7}',
      '{"attributes":null}',
      '{"name":{"a":1}}',
    ]) {
      const n = normaliseMetadata(doc);
      assert.deepEqual(n.attributes, [], doc);
      assert.equal(n.name, "", doc);
    }
  });
});
