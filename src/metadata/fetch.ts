/**
 * Fetching a document or an image from a URL a contract gave, safely:
 *
 * - only `http:` and `https:`;
 * - the host's addresses are resolved here and each is vetted (`ssrf.ts`); the request connects to
 *   the vetted address itself (TLS still checks the certificate against the host name), so no
 *   second lookup can swap in another address between the check and the connection;
 * - redirects are followed by hand, at most `maxRedirects`, each hop vetted the same way;
 * - the body is streamed and cut at its kind's limit (a document's is smaller than an image's),
 *   counted after decompression, so a small gzip bomb stops at the same limit; one deadline covers
 *   the whole fetch, redirects included.
 *
 * Errors say what the caller should do: `FetchRefused` will not change by trying again (a refused
 * address, a 404, a body too large); `FetchFailed` may (a timeout, a 5xx, a reset connection).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { isMediaType, sniffMediaType } from "./sniff.ts";
import { type AllowRule, refusal } from "./ssrf.ts";

/** How many first bytes tell a document from media: every signature the sniffer knows fits. */
const SNIFF_BYTES = 64;

export class FetchRefused extends Error {
  override readonly name = "FetchRefused";
}

export class FetchFailed extends Error {
  override readonly name = "FetchFailed";
}

export interface FetchLimits {
  /** The most a metadata document may hold, after decompression: it is parsed, stored and served whole. */
  maxDocumentBytes: number;
  /** The most an image (or other media) may hold, after decompression: it is only hashed and stored. */
  maxImageBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export const DEFAULT_LIMITS: FetchLimits = {
  // A document is parsed in memory and served in one API answer (gRPC clients take 4 MiB by default).
  maxDocumentBytes: 1024 * 1024,
  maxImageBytes: 10 * 1024 * 1024,
  timeoutMs: 15_000,
  maxRedirects: 5,
};

export interface FetchOptions {
  signal?: AbortSignal;
  /**
   * What is fetched, which sets the size limit: an image, or a document (the default). A token URI
   * may name an image itself: a "document" whose first bytes are media has the image's limit.
   */
  kind?: "document" | "image";
}

export interface Fetched {
  /** The URL the body came from, after redirects. */
  url: string;
  /** The media type the server declared (lowercase, without parameters); not to be trusted. */
  declaredType: string;
  body: Buffer;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export interface FetcherOptions {
  allow?: readonly AllowRule[];
  limits?: Partial<FetchLimits>;
  /** Resolves a host name to its addresses; default: the system's resolver. */
  resolve?: Resolver;
  userAgent?: string;
}

export interface Fetcher {
  fetch(url: string, options?: FetchOptions): Promise<Fetched>;
}

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export function createFetcher(options: FetcherOptions = {}): Fetcher {
  const allow = options.allow ?? [];
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const resolve = options.resolve ?? systemResolver;
  const userAgent = options.userAgent ?? "Mintlens metadata fetcher";

  /** The address to connect to for `url`: the first of the host's addresses that is allowed. */
  async function vetted(url: URL): Promise<string> {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    if (isIP(host) !== 0) {
      const why = refusal(host, port, allow);
      if (why !== undefined) throw new FetchRefused(`refused: ${why}`);
      return host;
    }
    let addresses: { address: string }[];
    try {
      addresses = await resolve(host);
    } catch (error) {
      const code = (error as { code?: string }).code;
      // A name that does not exist will not exist on the next try either.
      if (code === "ENOTFOUND" || code === "ENODATA") throw new FetchRefused(`${host} does not resolve`);
      throw new FetchFailed(`resolving ${host} failed: ${(error as Error).message}`);
    }
    const reasons: string[] = [];
    for (const { address } of addresses) {
      const why = refusal(address, port, allow);
      if (why === undefined) return address;
      reasons.push(why);
    }
    throw new FetchRefused(`refused: ${host} resolves to ${reasons.join(", ") || "no address"}`);
  }

  function once(url: URL, address: string, signal: AbortSignal): Promise<IncomingMessage> {
    const request = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolvePromise, reject) => {
      const req = request({
        protocol: url.protocol,
        host: address,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        headers: {
          host: url.host,
          "user-agent": userAgent,
          accept: "application/json, image/*, */*;q=0.5",
          "accept-encoding": "gzip, deflate, br",
        },
        // The certificate is checked against the name, not the address connected to.
        servername: isIP(url.hostname.replace(/^\[|\]$/g, "")) === 0 ? url.hostname : undefined,
        signal,
      });
      req.once("response", resolvePromise);
      req.once("error", reject);
      req.end();
    });
  }

  async function readBody(
    response: IncomingMessage,
    signal: AbortSignal,
    kind: "document" | "image",
  ): Promise<Buffer> {
    // The larger limit until the first bytes say what the body is.
    let maxBytes = limits.maxImageBytes;
    let judged = kind === "image";
    const declared = Number(response.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      response.destroy();
      throw new FetchRefused(`larger than ${maxBytes} bytes (${declared} declared)`);
    }
    const encoding = String(response.headers["content-encoding"] ?? "").toLowerCase();
    let stream: Readable = response;
    if (encoding === "gzip" || encoding === "x-gzip") stream = response.pipe(createGunzip());
    else if (encoding === "deflate") stream = response.pipe(createInflate());
    else if (encoding === "br") stream = response.pipe(createBrotliDecompress());
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of stream) {
        if (signal.aborted) throw signal.reason;
        size += (chunk as Buffer).length;
        chunks.push(chunk as Buffer);
        if (!judged && (size >= SNIFF_BYTES || size > limits.maxDocumentBytes)) {
          judged = true;
          const head = Buffer.concat(chunks).subarray(0, SNIFF_BYTES);
          if (!isMediaType(sniffMediaType(head))) maxBytes = limits.maxDocumentBytes;
        }
        if (size > maxBytes) throw new FetchRefused(`larger than ${maxBytes} bytes`);
      }
    } catch (error) {
      if (error instanceof FetchRefused) throw error;
      if ((error as { code?: string }).code?.startsWith("Z_"))
        throw new FetchRefused(`a corrupt ${encoding} body`);
      throw error;
    } finally {
      response.destroy();
      if (stream !== response) stream.destroy();
    }
    return Buffer.concat(chunks);
  }

  async function fetchWithin(start: URL, signal: AbortSignal, kind: "document" | "image"): Promise<Fetched> {
    let url = start;
    for (let hop = 0; ; hop++) {
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new FetchRefused(`refused: ${url.protocol} is not fetched`);
      }
      const address = await vetted(url);
      const response = await once(url, address, signal);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location !== undefined) {
        response.destroy();
        if (hop >= limits.maxRedirects) throw new FetchRefused(`more than ${limits.maxRedirects} redirects`);
        try {
          url = new URL(response.headers.location, url);
        } catch {
          throw new FetchRefused(`a redirect to an invalid location: ${response.headers.location}`);
        }
        continue;
      }
      if (status >= 200 && status < 300) {
        const declaredType = String(response.headers["content-type"] ?? "")
          .split(";")[0]
          ?.trim()
          .toLowerCase();
        return {
          url: url.toString(),
          declaredType: declaredType ?? "",
          body: await readBody(response, signal, kind),
        };
      }
      response.destroy();
      // Asked to wait, or the server failed: worth another try later. Anything else will not change.
      if (status === 408 || status === 425 || status === 429 || status >= 500)
        throw new FetchFailed(`HTTP ${status}`);
      throw new FetchRefused(`HTTP ${status}`);
    }
  }

  return {
    async fetch(raw, { signal: outer, kind = "document" } = {}) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new FetchRefused(`not a URL: ${raw.slice(0, 100)}`);
      }
      const deadline = AbortSignal.timeout(limits.timeoutMs);
      const signal = outer ? AbortSignal.any([outer, deadline]) : deadline;
      try {
        return await fetchWithin(url, signal, kind);
      } catch (error) {
        if (error instanceof FetchRefused || error instanceof FetchFailed) throw error;
        if (deadline.aborted) throw new FetchFailed(`no answer within ${limits.timeoutMs} ms`);
        if (outer?.aborted) throw outer.reason;
        throw new FetchFailed((error as Error).message);
      }
    },
  };
}
