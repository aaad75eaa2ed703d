/**
 * The links Mintlens hands out (a cached image's URL in an NFT's details), and what they are made
 * of. With a public URL configured, that URL is the base of every link. Without one, a link is
 * relative to the host the request was sent to, as the proxy in front forwards it
 * (`X-Forwarded-Proto`/`X-Forwarded-Host`, else `Forwarded`, else `Host`); a value that is not a
 * plain scheme or `host[:port]` makes the link a bare path. Never the address the server binds.
 *
 * Cached answers hold a placeholder where the base goes, filled in as each answer is sent: one
 * request's host never reaches another's answer, and a client sending random hosts cannot fill the
 * response cache with copies of one answer.
 */
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/**
 * Stands where the base of a link goes in a cached answer. Random per process, so no stored value
 * (a token's name, a metadata document) can contain it and be rewritten.
 */
export const LINK_BASE_PLACEHOLDER = `mintlens-link-base-${randomBytes(16).toString("hex")}`;

/** The operations whose answers carry links. */
export const LINKED_OPERATIONS: ReadonlySet<string> = new Set(["GetNftDetails"]);

/** Headers a link base made from the request depends on: for the `Vary` of such answers. */
export const LINK_VARY = "Host, X-Forwarded-Host, X-Forwarded-Proto, Forwarded";

const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*|\[[0-9A-Fa-f:.]{2,45}\])(?::(\d{1,5}))?$/;
const DEFAULT_PORT: Readonly<Record<string, string>> = { http: "80", https: "443" };

/** The first value of a header that may be sent as a comma-separated list or repeated. */
function first(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  return (text.split(",")[0] ?? "").trim();
}

/** `proto` and `host` of the first element of a `Forwarded` header (RFC 7239), unquoted. */
function forwarded(value: string | string[] | undefined): { proto?: string; host?: string } {
  const element = first(value);
  if (element === undefined) return {};
  const found: { proto?: string; host?: string } = {};
  for (const pair of element.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim().toLowerCase();
    let text = pair.slice(eq + 1).trim();
    if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) text = text.slice(1, -1);
    if (name === "proto" || name === "host") found[name] = text;
  }
  return found;
}

/**
 * The base of the links in an answer to a request with these headers: `scheme://host[:port]`,
 * the port left out when it is the scheme's own; "" (links are bare paths) when a value is missing
 * or not plainly a scheme or a host.
 */
export function requestLinkBase(headers: IncomingHttpHeaders): string {
  const viaForwarded = forwarded(headers.forwarded);
  const host = first(headers["x-forwarded-host"]) ?? viaForwarded.host ?? first(headers.host);
  const proto = (first(headers["x-forwarded-proto"]) ?? viaForwarded.proto ?? "http").toLowerCase();
  if (host === undefined || host.length > 260 || (proto !== "http" && proto !== "https")) return "";
  const match = HOST.exec(host);
  if (match === null) return "";
  const port = match[1];
  if (port !== undefined && Number(port) > 65_535) return "";
  const name = port === undefined ? host : host.slice(0, -(port.length + 1));
  return `${proto}://${name.toLowerCase()}${port === undefined || port === DEFAULT_PORT[proto] ? "" : `:${port}`}`;
}

/** A JSON answer with every placeholder replaced by `base` (a JSON-safe string: a URL's scheme, host and path). */
export function fillJsonLinks(json: Buffer, base: string): Buffer {
  const marker = Buffer.from(LINK_BASE_PLACEHOLDER);
  let at = json.indexOf(marker);
  if (at < 0) return json;
  const filler = Buffer.from(JSON.stringify(base).slice(1, -1));
  const parts: Buffer[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(json.subarray(from, at), filler);
    from = at + marker.length;
    at = json.indexOf(marker, from);
  }
  parts.push(json.subarray(from));
  return Buffer.concat(parts);
}

/**
 * A copy of a message with every string that starts with the placeholder given `base` instead;
 * the cached message is left as it is.
 */
export function fillMessageLinks<T>(message: T, base: string): T {
  const fill = (value: unknown): unknown => {
    if (typeof value === "string") {
      return value.startsWith(LINK_BASE_PLACEHOLDER)
        ? base + value.slice(LINK_BASE_PLACEHOLDER.length)
        : value;
    }
    if (Array.isArray(value)) return value.map(fill);
    if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) copy[key] = fill(field);
    return copy;
  };
  return fill(message) as T;
}
