/**
 * Where a token's metadata (or image) is: a token URI as a contract returns it, turned into what
 * to fetch. Pure: the gateways are handed in, nothing is fetched here.
 *
 * - `{id}` (ERC-1155) becomes the token id as 64 lowercase hex digits, as the standard says.
 * - `ipfs://` (with or without an `ipfs/` prefix, CIDv0 or v1, with a path), `ipns://`, and the
 *   URLs of any IPFS gateway (`…/ipfs/<cid>/…` or `<cid>.ipfs.<host>/…`) go to the configured
 *   IPFS gateway; `ar://` and `arweave.net` URLs to the configured Arweave gateway.
 * - `data:` URIs are decoded here (base64 or percent-encoded; contracts often put raw JSON after
 *   the comma, which is taken as it is).
 * - `http(s)` URLs are fetched as they are. Every other scheme is refused.
 */

export interface Gateways {
  /** Base URL of the IPFS gateway, e.g. `https://ipfs.io` (`/ipfs/<cid>` is appended). */
  ipfs: string;
  /** Base URL of the Arweave gateway, e.g. `https://arweave.net` (`/<tx>` is appended). */
  arweave: string;
}

export const DEFAULT_GATEWAYS: Gateways = { ipfs: "https://ipfs.io", arweave: "https://arweave.net" };

export type Resolved =
  /** Fetch this http(s) URL; `original` is the location as given (an `ipfs://…` URI stays one). */
  | { kind: "fetch"; url: string; original: string }
  /** The document is in the URI itself. */
  | { kind: "inline"; mediaType: string; body: Uint8Array; original: string }
  /** There is nothing to fetch, and why. */
  | { kind: "none"; reason: string };

const CID_V0 = /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/;
// CIDv1 in the multibase encodings gateways accept in paths: base32 (b…), base36 (k…), base58btc (z…).
const CID_V1 = /^(b[a-z2-7]{50,}|k[0-9a-z]{50,}|z[1-9A-HJ-NP-Za-km-z]{40,})$/;

export function isCid(text: string): boolean {
  return CID_V0.test(text) || CID_V1.test(text);
}

/** The ERC-1155 `{id}` substitution: the id in lowercase hex, zero-padded to 64 digits. */
export function substituteId(uri: string, tokenId: bigint): string {
  if (!uri.includes("{id}")) return uri;
  return uri.replaceAll("{id}", tokenId.toString(16).padStart(64, "0"));
}

const trimBase = (base: string) => base.replace(/\/+$/, "");

/** `<cid>[/path][?query]` as a URL of the IPFS gateway, or undefined when it does not start with a CID. */
function ipfsUrl(rest: string, gateways: Gateways, namespace: "ipfs" | "ipns" = "ipfs"): string | undefined {
  const [root = "", ...path] = rest.split("/");
  const [cid = ""] = root.split(/[?#]/);
  if (namespace === "ipfs" && !isCid(cid)) return undefined;
  if (namespace === "ipns" && !/^[A-Za-z0-9.-]+$/.test(cid)) return undefined;
  const tail = [root, ...path].join("/");
  return `${trimBase(gateways.ipfs)}/${namespace}/${tail}`;
}

/** An http(s) URL of some IPFS or Arweave gateway, moved to the configured one; other URLs as they are. */
function viaGateway(url: URL, gateways: Gateways): string {
  const path = url.pathname + url.search;
  const inPath = /^\/(ipfs|ipns)\/(.+)$/.exec(url.pathname);
  if (inPath) {
    const moved = ipfsUrl(`${inPath[2]}${url.search}`, gateways, inPath[1] as "ipfs" | "ipns");
    if (moved !== undefined) return moved;
  }
  const subdomain = /^([a-z0-9]+)\.ipfs\.[^/]+$/i.exec(url.hostname);
  if (subdomain?.[1] && isCid(subdomain[1])) {
    return `${trimBase(gateways.ipfs)}/ipfs/${subdomain[1]}${path === "/" ? "" : path}`;
  }
  if (url.hostname === "arweave.net" || url.hostname.endsWith(".arweave.net")) {
    return `${trimBase(gateways.arweave)}${path}`;
  }
  return url.toString();
}

export interface DataUri {
  mediaType: string;
  body: Uint8Array;
}

/**
 * A `data:` URI's media type (lowercase, parameters dropped; `text/plain` when none) and bytes.
 * Base64 may be unpadded or carry whitespace; otherwise `%XX` escapes are decoded and anything
 * else (raw JSON, a lone `%`) is kept as written. Undefined when it is not a data URI.
 */
export function parseDataUri(uri: string): DataUri | undefined {
  if (!/^data:/i.test(uri)) return undefined;
  const comma = uri.indexOf(",");
  if (comma < 0) return undefined;
  const header = uri
    .slice(5, comma)
    .split(";")
    .map((p) => p.trim());
  const data = uri.slice(comma + 1);
  const base64 = header.slice(1).some((p) => p.toLowerCase() === "base64");
  const mediaType = (header[0] ?? "").toLowerCase() || "text/plain";
  if (base64) {
    // A fragment ends the data (base64 has no '#'); raw JSON keeps its '#'s, which real documents hold.
    const clean = percentDecode(data.split("#")[0] ?? "")
      .toString("latin1")
      .replace(/\s+/g, "");
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) return undefined;
    return { mediaType, body: Buffer.from(clean, "base64") };
  }
  return { mediaType, body: percentDecode(data) };
}

/** `%XX` escapes decoded to bytes; every other character kept as its UTF-8. */
function percentDecode(text: string): Buffer {
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of text.matchAll(/%([0-9A-Fa-f]{2})/g)) {
    parts.push(
      Buffer.from(text.slice(last, m.index), "utf8"),
      Buffer.from([Number.parseInt(m[1] as string, 16)]),
    );
    last = (m.index ?? 0) + 3;
  }
  parts.push(Buffer.from(text.slice(last), "utf8"));
  return Buffer.concat(parts);
}

/** Without the spaces and NUL bytes contracts pad strings with. */
function trimPadding(text: string): string {
  let start = 0;
  let end = text.length;
  const pad = (c: string | undefined) => c !== undefined && (c === "\0" || c.trim() === "");
  while (start < end && pad(text[start])) start++;
  while (end > start && pad(text[end - 1])) end--;
  return text.slice(start, end);
}

/** What to do with a token URI (or an image location) for token `tokenId`. */
export function resolveUri(raw: string, tokenId: bigint, gateways: Gateways = DEFAULT_GATEWAYS): Resolved {
  // Contracts pad with spaces and NULs; nothing meaningful starts or ends with them.
  const original = trimPadding(raw);
  if (original === "") return { kind: "none", reason: "the token URI is empty" };
  const uri = substituteId(original, tokenId);

  const data = parseDataUri(uri);
  if (data !== undefined) return { kind: "inline", ...data, original };
  if (/^data:/i.test(uri)) return { kind: "none", reason: "a malformed data: URI" };

  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase();
  if (scheme === "ipfs" || scheme === "ipns") {
    const rest = uri.slice(scheme.length + 1).replace(/^\/+/, "");
    const url =
      scheme === "ipns"
        ? ipfsUrl(rest.replace(/^ipns\//, ""), gateways, "ipns")
        : ipfsUrl(rest.replace(/^ipfs\//, ""), gateways);
    return url === undefined
      ? { kind: "none", reason: `not an IPFS content identifier: ${truncate(uri)}` }
      : { kind: "fetch", url, original };
  }
  if (scheme === "ar") {
    const tx = uri.slice(3).replace(/^\/+/, "");
    if (!/^[A-Za-z0-9_-]{43}(\/.*)?$/.test(tx))
      return { kind: "none", reason: `not an Arweave transaction: ${truncate(uri)}` };
    return { kind: "fetch", url: `${trimBase(gateways.arweave)}/${tx}`, original };
  }
  if (scheme === "http" || scheme === "https") {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return { kind: "none", reason: `not a valid URL: ${truncate(uri)}` };
    }
    return { kind: "fetch", url: viaGateway(url, gateways), original };
  }
  // A bare CID, as some contracts return.
  if (scheme === undefined) {
    const url = ipfsUrl(uri.replace(/^\/?(ipfs\/)?/, ""), gateways);
    if (url !== undefined) return { kind: "fetch", url, original };
  }
  return { kind: "none", reason: `unsupported location: ${truncate(uri)}` };
}

function truncate(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
