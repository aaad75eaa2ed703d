/**
 * The dashboard: a web page served by every REST listener at `/`, with its assets under
 * `/dashboard/`, read from the committed bundle (dashboard/dist, made by `npm run build:dashboard`).
 * It needs no key: the page asks its user for one and calls the API with it, like any client.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";

/** The committed bundle: index.html and the content-hashed assets it names. */
export const DASHBOARD_DIST = fileURLToPath(new URL("../../dashboard/dist", import.meta.url));
/** Where the assets are served, the prefix index.html names them under. */
export const DASHBOARD_PREFIX = "/dashboard/";

/**
 * The page may load and call only its own origin; images may also be `data:` URLs, and come from
 * the public URL's origin, which the image links the API hands out name (`--public-url`, when it
 * is another host than the one the page was loaded from). No inline script or style, no frames,
 * no plugins: a value the API returns cannot become code.
 */
export function dashboardCsp(publicUrl?: string): string {
  const images = publicUrl === undefined ? "" : ` ${new URL(publicUrl).origin}`;
  return [
    "default-src 'self'",
    `img-src 'self' data:${images}`,
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** A file of the bundle, held in memory: the bundle is small and never changes while serving. */
interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The bundle's files by name, or an empty map when it was never built (a checkout without it). */
export function loadDashboard(dir: string = DASHBOARD_DIST): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const body = readFileSync(join(dir, name));
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
    assets.set(name, { body, type, etag });
  }
  return assets;
}

/** Whether an `If-None-Match` header names `etag` (weak or strong, alone or in a list, or `*`). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t.replace(/^W\//, "") === etag;
  });
}

function send(
  reply: FastifyReply,
  asset: Asset,
  ifNoneMatch: string | undefined,
  cache: string,
  csp: string,
) {
  reply.headers({
    "content-security-policy": csp,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": cache,
    etag: asset.etag,
  });
  if (matches(ifNoneMatch, asset.etag)) return reply.code(304).send();
  return reply.type(asset.type).send(asset.body);
}

/**
 * Adds `/` and `/dashboard/<file>` to `app`. index.html is revalidated on every load (`no-cache`
 * with its ETag), so a new bundle shows at once; the other files have their content's hash in
 * their names, so a browser keeps them for a year without asking again.
 */
export function addDashboardRoutes(
  app: FastifyInstance,
  notFound: (reply: FastifyReply) => unknown,
  options: { publicUrl?: string | undefined; assets?: ReadonlyMap<string, Asset> } = {},
): void {
  const assets = options.assets ?? loadDashboard();
  const csp = dashboardCsp(options.publicUrl);
  app.get("/", (request, reply) => {
    const index = assets.get("index.html");
    if (index === undefined) return notFound(reply);
    return send(reply, index, request.headers["if-none-match"], "no-cache", csp);
  });
  app.get(`${DASHBOARD_PREFIX}:file`, (request, reply) => {
    const { file } = request.params as { file: string };
    const asset = file === "index.html" ? undefined : assets.get(file);
    if (asset === undefined) return notFound(reply);
    return send(reply, asset, request.headers["if-none-match"], "public, max-age=31536000, immutable", csp);
  });
}
