/**
 * Where a webhook may be sent, and sending one request there. A subscription's URL is given by an
 * operator, but the name in it may resolve to another address later, so it is checked when added
 * and again at every delivery with the metadata fetcher's rules (src/metadata/ssrf.ts): only public
 * unicast addresses, unless `--webhook-allow` names the address. The request connects to the vetted
 * address itself (TLS still checks the certificate against the host name), so no second lookup can
 * swap in another address between the check and the connection.
 *
 * A target cannot hold a delivery: one deadline covers the connection, the request and the answer's
 * status; the answer's body is drained up to a small cap and dropped, since only its status counts.
 * Redirects are not followed: a 3xx is a failure like any other status outside 2xx.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type Socket } from "node:net";
import { type AllowRule, refusal } from "../metadata/ssrf.ts";

/** Bytes of an answer's body read before the rest is dropped. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The URL refused: it will not be sent to as it is. */
export class TargetRefused extends Error {
  override readonly name = "TargetRefused";
}

/** What is wrong with a URL as a webhook target, before its host is looked up; undefined when nothing. */
export function urlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `not a URL: ${raw.slice(0, 200)}`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${url.protocol} is not http or https`;
  if (url.username !== "" || url.password !== "")
    return "the URL holds credentials: authenticate deliveries by their signature instead";
  if (url.hash !== "") return "the URL has a fragment, which is never sent";
  return undefined;
}

/**
 * The address to connect to for `raw`: the first of its host's addresses that is allowed. Throws
 * `TargetRefused` when the URL or every address is refused, or the name does not resolve.
 */
export async function vetTarget(
  raw: string,
  allow: readonly AllowRule[],
  resolve: Resolver = systemResolver,
): Promise<{ url: URL; address: string }> {
  const problem = urlProblem(raw);
  if (problem !== undefined) throw new TargetRefused(problem);
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  if (isIP(host) !== 0) {
    const why = refusal(host, port, allow);
    if (why !== undefined) throw new TargetRefused(`refused: ${why}`);
    return { url, address: host };
  }
  let addresses: { address: string }[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    throw new TargetRefused(`${host} does not resolve: ${(error as { code?: string }).code ?? error}`);
  }
  const reasons: string[] = [];
  for (const { address } of addresses) {
    const why = refusal(address, port, allow);
    if (why === undefined) return { url, address };
    reasons.push(why);
  }
  throw new TargetRefused(`refused: ${host} resolves to ${reasons.join(", ") || "no address"}`);
}

export type PostOutcome = "ok" | "http_error" | "timeout" | "connection_error" | "refused";

export interface PostResult {
  outcome: PostOutcome;
  /** The status answered, when one was. */
  status: number | undefined;
  /** What went wrong, for the log; undefined on a 2xx. */
  error: string | undefined;
}

export interface PostOptions {
  allow: readonly AllowRule[];
  resolve?: Resolver;
  timeoutMs: number;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
}

/**
 * POSTs `body` to the target after vetting its address. Never throws for what the target does: the
 * result says how the attempt went. Throws only when `signal` aborts.
 */
export async function postToTarget(raw: string, options: PostOptions): Promise<PostResult> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  try {
    const { url, address } = await vetTarget(raw, options.allow, options.resolve);
    const status = await send(url, address, options, signal);
    if (status >= 200 && status < 300) return { outcome: "ok", status, error: undefined };
    const note = status >= 300 && status < 400 ? " (redirects are not followed)" : "";
    return { outcome: "http_error", status, error: `HTTP ${status}${note}` };
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (error instanceof TargetRefused)
      return { outcome: "refused", status: undefined, error: error.message };
    if (deadline.aborted)
      return { outcome: "timeout", status: undefined, error: `no answer within ${options.timeoutMs} ms` };
    return { outcome: "connection_error", status: undefined, error: (error as Error).message };
  }
}

function send(url: URL, address: string, options: PostOptions, signal: AbortSignal): Promise<number> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const body = Buffer.from(options.body);
  return new Promise((resolve, reject) => {
    const req = request({
      protocol: url.protocol,
      host: address,
      port,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      // A connection of its own, to the address vetted for this attempt.
      agent: false,
      headers: {
        ...options.headers,
        host: url.host,
        "content-type": "application/json",
        "content-length": String(body.length),
      },
      servername: isIP(url.hostname.replace(/^\[|\]$/g, "")) === 0 ? url.hostname : undefined,
      signal,
    });
    req.once("socket", (socket: Socket) => {
      socket.once("connect", () => {
        // The address actually connected to is judged again, whatever led to it.
        const why = refusal(socket.remoteAddress ?? "", socket.remotePort ?? port, options.allow);
        if (why !== undefined) req.destroy(new TargetRefused(`refused: ${why}`));
      });
    });
    req.once("response", (response) => {
      // Only the status counts: the body is drained in the background, and dropped past the cap.
      resolve(response.statusCode ?? 0);
      let read = 0;
      response.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) response.destroy();
      });
      response.on("error", () => {});
    });
    // Errors after the status (the deadline cutting a slow body) change nothing.
    req.on("error", reject);
    req.end(body);
  });
}
