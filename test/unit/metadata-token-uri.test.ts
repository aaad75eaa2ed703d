/**
 * Token URIs as contracts really answer them, ABI-encoded by viem: a string made from a bytes32
 * keeps the word's NUL padding, which must not reach the store nor stop the token.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { encodeAbiParameters, type Hex, stringToHex } from "viem";
import { decodeStringResult, readTokenUri } from "../../src/metadata/token-uri.ts";

const abiString = (text: string): Hex => encodeAbiParameters([{ type: "string" }], [text]);
const URI = "ipfs://QmYHU3Yc5QLiNHCDGA9Wn5cEW6hiRb64JGLdvUis9xzbk5/7";

describe("a token URI holding NULs", () => {
  test("the padding of a bytes32 turned into a string is dropped, ABI-encoded or not", () => {
    const word = "https://x.example/1"; // 19 bytes: 13 NULs pad it to the word
    const padded = `${word}${"\0".repeat(32 - word.length)}`;
    assert.equal(decodeStringResult(abiString(padded)), word);
    assert.equal(decodeStringResult(stringToHex(word, { size: 32 })), word);
    assert.equal(decodeStringResult(abiString(`\0\0${URI}\0`)), URI);
  });

  test("a NUL left inside ends the URI", () => {
    assert.equal(decodeStringResult(abiString(`${URI}\0\x07junk\0`)), URI);
    assert.equal(decodeStringResult(stringToHex(`${URI}\0junk`)), URI);
  });

  test("nothing but NULs is no token URI", () => {
    assert.equal(decodeStringResult(abiString("\0".repeat(32))), undefined);
    assert.equal(decodeStringResult(stringToHex("", { size: 32 })), undefined);
    assert.equal(decodeStringResult(abiString("")), undefined);
  });

  test("any string survives any NUL padding, and none is ever returned", () => {
    const noNul = fc.string({ unit: "grapheme", maxLength: 80 }).filter((s) => !s.includes("\0") && s !== "");
    fc.assert(
      fc.property(noNul, fc.nat(64), fc.nat(8), fc.string({ maxLength: 20 }), (text, right, left, tail) => {
        const padded = `${"\0".repeat(left)}${text}${"\0".repeat(right)}`;
        assert.equal(decodeStringResult(abiString(padded)), text);
        const cut = decodeStringResult(abiString(`${text}\0${tail}`));
        assert.equal(cut, text);
        assert.ok(!(decodeStringResult(stringToHex(padded)) ?? "").includes("\0"));
      }),
      { numRuns: 300 },
    );
  });

  test("readTokenUri answers the URI without its padding", async () => {
    const client = { call: async () => abiString(`${URI}${"\0".repeat(20)}`) };
    const contract = "0x0000000000000000000000000000000000000001";
    assert.deepEqual(await readTokenUri(client, contract, 7n, ["TYPE_ERC721"]), { uri: URI });
    const empty = { call: async () => abiString("\0".repeat(32)) };
    assert.deepEqual(await readTokenUri(empty, contract, 7n, ["TYPE_ERC721"]), {
      none: "the contract returns no token URI",
    });
  });
});
