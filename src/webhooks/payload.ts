/**
 * What a delivery sends: the body (the stream's wire form of each event, as Server-Sent Events send
 * them) and the headers that name, key and sign it. Pure.
 */
import type { StreamEvent } from "../core/stream-events.ts";
import { streamEventJson } from "../stream/wire.ts";
import { signatureHeader } from "./signature.ts";

/** The key of a batch: the same on every attempt to deliver it, in this process or after a restart. */
export function idempotencyKey(subscriptionId: string, first: bigint, last: bigint): string {
  return `${subscriptionId}-${first}-${last}`;
}

/** The JSON body of a batch. Cursors are decimal strings, as every 64-bit integer on the wire. */
export function deliveryBody(
  subscriptionId: string,
  chainId: number,
  events: readonly StreamEvent[],
  next: bigint,
): string {
  return JSON.stringify({
    subscriptionId,
    chainId,
    events: events.map(streamEventJson),
    nextCursor: next.toString(),
  });
}

/** The headers of one attempt, sent at `timestamp` (Unix seconds). */
export function deliveryHeaders(
  subscription: { id: string; secret: string },
  batch: { first: bigint; last: bigint },
  timestamp: number,
  body: string,
): Record<string, string> {
  const key = idempotencyKey(subscription.id, batch.first, batch.last);
  return {
    "user-agent": "Mintlens webhooks",
    "mintlens-webhook-id": subscription.id,
    "mintlens-delivery-id": key,
    "idempotency-key": key,
    "mintlens-timestamp": String(timestamp),
    "mintlens-signature": signatureHeader(subscription.secret, timestamp, body),
  };
}
