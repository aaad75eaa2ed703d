/**
 * Every way IPv6 embeds an IPv4 address, for addresses that must be refused and one that must not:
 * the judgement is the IPv4 address's, whichever form carries it, as written and as the URL
 * parser rewrites it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseAllowList, refusal } from "../../src/metadata/ssrf.ts";

const hex = (v4: string) => v4.split(".").map(Number);
const word = (a: number, b: number) => ((a << 8) | b).toString(16);

/** `v4` in each IPv6 form that carries it, by name. */
function forms(v4: string): Record<string, string> {
  const [a = 0, b = 0, c = 0, d = 0] = hex(v4);
  const high = word(a, b);
  const low = word(c, d);
  const inverted = `${word(a ^ 0xff, b ^ 0xff)}:${word(c ^ 0xff, d ^ 0xff)}`;
  return {
    mapped: `::ffff:${v4}`,
    "mapped, hex": `::ffff:${high}:${low}`,
    "mapped, written out": `0:0:0:0:0:ffff:${high}:${low}`,
    compatible: `::${v4}`,
    "compatible, hex": `::${high}:${low}`,
    SIIT: `::ffff:0:${v4}`,
    NAT64: `64:ff9b::${v4}`,
    "NAT64, hex": `64:ff9b::${high}:${low}`,
    "6to4": `2002:${high}:${low}::1`,
    "6to4, with a subnet": `2002:${high}:${low}:1234:5678:9abc:def0:1`,
    Teredo: `2001:0:4136:e378:8000:63bf:${inverted}`,
  };
}

describe("IPv4 inside IPv6", () => {
  for (const [v4, why] of [
    ["127.0.0.1", /loopback/],
    ["127.255.0.9", /loopback/],
    ["10.0.0.1", /private/],
    ["192.168.1.1", /private/],
    ["172.16.5.4", /private/],
    ["169.254.169.254", /linkLocal/],
    ["100.64.0.1", /carrierGradeNat/],
    ["0.0.0.7", /unspecified/],
    ["168.63.129.16", /cloud metadata service/],
  ] as const) {
    test(`${v4} is refused in every form`, () => {
      for (const [name, address] of Object.entries(forms(v4))) {
        const why6 = refusal(address, 80);
        assert.match(why6 ?? "(allowed)", why, `${name}: ${address}`);
        assert.match(why6 ?? "", new RegExp(`carries ${v4.replaceAll(".", "\\.")}`), `${name}: ${address}`);
        // As a URL's host, after the URL parser has rewritten it.
        const host = new URL(`http://[${address}]/`).hostname;
        assert.notEqual(refusal(host, 80), undefined, `${name}: ${host}`);
      }
    });
  }

  test("a public address stays allowed in every form", () => {
    for (const v4 of ["8.8.8.8", "1.1.1.1", "93.184.216.34"]) {
      assert.equal(refusal(v4, 443), undefined);
      for (const [name, address] of Object.entries(forms(v4))) {
        assert.equal(refusal(address, 443), undefined, `${name}: ${address}`);
      }
    }
  });

  test("the IPv6 unspecified and loopback addresses are judged as themselves", () => {
    assert.match(refusal("::", 80) ?? "", /is a unspecified address/);
    assert.match(refusal("::1", 80) ?? "", /is a loopback address/);
  });

  test("NAT64's local-use prefix is refused whatever it carries", () => {
    for (const address of ["64:ff9b:1::808:808", "64:ff9b:1:0808:0008:0800::", "64:ff9b:1::1"]) {
      assert.match(refusal(address, 80) ?? "", /local-use NAT64/, address);
    }
  });

  test("the allow-list applies to the carried address and to the IPv6 one", () => {
    const allow = parseAllowList(["127.0.0.1:5001", "[64:ff9b:1::]:80"]);
    assert.equal(refusal("::127.0.0.1", 5001, allow), undefined);
    assert.equal(refusal("2002:7f00:1::1", 5001, allow), undefined);
    assert.notEqual(refusal("::127.0.0.1", 5002, allow), undefined);
    assert.equal(refusal("64:ff9b:1::", 80, allow), undefined);
  });
});
