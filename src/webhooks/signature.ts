/**
 * Signing webhook deliveries, and checking a signature as a receiver does. The signature covers the
 * attempt's timestamp and the raw body, so a receiver that refuses old timestamps cannot be made to
 * accept a recorded delivery again much later. Pure.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The signature scheme's version, named in the header so that a later scheme can be told apart. */
const VERSION = "v1";

/** How old a delivery's timestamp may be before a receiver refuses it, in seconds. */
export const DEFAULT_TOLERANCE_S = 300;

/** A new subscription's secret: 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** A new subscription's id: `wh_` and 16 hex digits. */
export function newWebhookId(): string {
  return `wh_${randomBytes(8).toString("hex")}`;
}

/** The `Mintlens-Signature` header of a body sent at `timestamp` (Unix seconds). */
export function signatureHeader(secret: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
  return `${VERSION}=${mac}`;
}

/**
 * Why a delivery must be refused, or undefined when its signature is the secret's and its timestamp
 * recent: what a receiver checks before it trusts a body.
 */
export function signatureProblem(
  secret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  body: string | Buffer,
  nowS: number,
  toleranceS = DEFAULT_TOLERANCE_S,
): string | undefined {
  const timestamp = headers.timestamp === undefined ? Number.NaN : Number(headers.timestamp);
  if (!/^\d+$/.test(headers.timestamp ?? "") || !Number.isSafeInteger(timestamp)) return "no timestamp";
  if (Math.abs(nowS - timestamp) > toleranceS) return "the timestamp is too old or in the future";
  const expected = Buffer.from(signatureHeader(secret, timestamp, body));
  // A header may carry several signatures (during a change of secret): one that matches is enough.
  const given = (headers.signature ?? "").split(",").map((s) => Buffer.from(s.trim()));
  const match = given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
  return match ? undefined : "the signature does not match";
}
