/**
 * Node URLs often carry credentials: user:password, an API key as a path segment
 * (Infura /v3/<key>, Alchemy /v2/<key>, QuickNode /<token>/) or as a query parameter.
 * Anything that leaves the process (logs, error messages) must use the redacted form.
 */
const KEY_LIKE_SEGMENT = /^[A-Za-z0-9_-]{20,}$/;

export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "<unparseable node URL>";
  }
  const auth = url.username || url.password ? "***@" : "";
  const path = url.pathname
    .split("/")
    .map((segment) => (KEY_LIKE_SEGMENT.test(segment) ? "***" : segment))
    .join("/");
  const query = [...url.searchParams.keys()].map((key) => `${key}=***`).join("&");
  const shownPath = path === "/" ? "" : path;
  return `${url.protocol}//${auth}${url.host}${shownPath}${query ? `?${query}` : ""}`;
}
