/**
 * The 31 real tokens of `../shared/realdata/zora-nft-metadata` (their token URIs as the contracts
 * return them, and the documents another metadata agent fetched): each token URI resolves to the
 * location that agent fetched, or decodes in place, and each document normalises to its name,
 * description, image location and attributes.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { normaliseMetadata } from "../../src/metadata/normalise.ts";
import { type Gateways, resolveUri } from "../../src/metadata/uri.ts";

const FILE = fileURLToPath(
  new URL("../../../shared/realdata/zora-nft-metadata/metadata-records.json", import.meta.url),
);
const skip = existsSync(FILE) ? false : `the recorded metadata is not here (${FILE})`;

interface Recorded {
  tokenId: string;
  tokenURI: string;
  tokenURL: string;
  metadata: unknown;
  name: string | null;
  description: string | null;
  imageURL: string | null;
  attributes: { trait_type?: string; value: unknown }[] | null;
}

// The gateway the recording agent used, so that resolved locations compare as they are.
const GATEWAYS: Gateways = { ipfs: "https://gateway.ipfs.io", arweave: "https://arweave.net" };

/**
 * A location's content identity: IPFS content by CID and path, whatever serves it (a gateway, or a
 * CDN whose path carries the CID); Arweave content by its path; anything else as it is.
 */
function identity(location: string): string {
  const cid = /(?:^ipfs:\/\/(?:ipfs\/)?|\/)(Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{58,})((?:\/[^?#]*)?)/.exec(
    location,
  );
  if (cid) return `ipfs:${cid[1]}${cid[2]}`;
  // Arweave content by its path, whether from the gateway or from a transaction's sandbox subdomain.
  const arweave = /^https?:\/\/(?:[a-z0-9]+\.)?arweave\.net(\/.*)$/.exec(location);
  return arweave ? `ar:${arweave[1]}` : location;
}

/** JSON with every object's keys sorted, as the recording's snapshots store documents. */
function canonical(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(value));
}

describe("real token metadata", { skip }, () => {
  const records: Recorded[] = skip ? [] : JSON.parse(readFileSync(FILE, "utf8"));

  test("every token URI resolves to what was fetched, or decodes in place", () => {
    assert.equal(records.length, 31);
    let inline = 0;
    let sameDocument = 0;
    for (const r of records) {
      const resolved = resolveUri(r.tokenURI, BigInt(r.tokenId), GATEWAYS);
      assert.notEqual(
        resolved.kind,
        "none",
        `${r.tokenURI}: ${resolved.kind === "none" ? resolved.reason : ""}`,
      );
      if (resolved.kind === "fetch") {
        assert.equal(identity(resolved.url), identity(r.tokenURL), r.tokenURI);
        assert.match(resolved.url, /^https?:\/\//);
      } else if (resolved.kind === "inline") {
        inline++;
        assert.ok(resolved.body.length > 0, r.tokenURI.slice(0, 60));
        if (resolved.mediaType === "application/json") {
          const document = Buffer.from(resolved.body).toString("utf8");
          const got = normaliseMetadata(document);
          // The document decoded here is the one the recording agent decoded, where it kept it as it was.
          if (canonical(JSON.parse(document)) === canonical(r.metadata)) {
            sameDocument++;
            const recorded = r.metadata as { name?: string; description?: string };
            assert.equal(got.name, recorded.name ?? "", r.tokenURI.slice(0, 60));
            assert.equal(got.description, (recorded.description ?? "").trim(), r.tokenURI.slice(0, 60));
          }
        }
      }
    }
    assert.ok(inline >= 6, "on-chain documents: base64 JSON, raw JSON, plain text");
    assert.ok(sameDocument >= 2, `${sameDocument} on-chain documents compared`);
  });

  test("every fetched document normalises to its name, description, image and attributes", () => {
    let compared = 0;
    for (const r of records) {
      if (!r.tokenURL.startsWith("http") || typeof r.metadata !== "object" || r.metadata === null) continue;
      compared++;
      const got = normaliseMetadata(JSON.stringify(r.metadata));
      assert.equal(got.name, r.name ?? "", `${r.tokenURL} name`);
      assert.equal(got.description, (r.description ?? "").trim(), `${r.tokenURL} description`);
      if (r.imageURL && !r.imageURL.startsWith("data:")) {
        const resolved = resolveUri(got.image, BigInt(r.tokenId), GATEWAYS);
        assert.equal(resolved.kind, "fetch", `${r.tokenURL} image ${got.image}`);
        if (resolved.kind === "fetch")
          assert.equal(identity(resolved.url), identity(r.imageURL), `${r.tokenURL} image`);
      }
      const scalars = (r.attributes ?? []).filter(
        (a) =>
          a.value !== null &&
          typeof a.value !== "object" &&
          Array.isArray((r.metadata as { attributes?: unknown }).attributes),
      );
      for (const a of scalars) {
        assert.ok(
          got.attributes.some(
            (g) => g.traitType === (a.trait_type ?? "") && g.value === String(a.value).trim(),
          ),
          `${r.tokenURL}: ${a.trait_type} = ${String(a.value)}`,
        );
      }
    }
    assert.ok(compared >= 20);
  });
});
