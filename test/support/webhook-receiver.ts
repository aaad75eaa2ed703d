/**
 * A webhook receiver on loopback as docs/webhooks.md tells one to be written: it verifies each
 * delivery's signature and timestamp, answers as the test says, and keeps every request it got. Its
 * `consumer` applies each accepted batch's events once, deduplicated by cursor, to a StreamConsumer.
 * The wire JSON is read back into the store's events only as far as the consumer needs (for tests).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { StreamEvent } from "../../src/core/stream-events.ts";
import { signatureProblem } from "../../src/webhooks/signature.ts";
import { StreamConsumer } from "./stream-consumer.ts";
import { eventFromWire } from "./stream-wire.ts";

/** One request as it arrived. */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** Why its signature was refused; undefined when it verified. */
  problem: string | undefined;
  /** The status it was answered with. */
  status: number;
  subscriptionId: string;
  key: string;
  events: StreamEvent[];
  nextCursor: bigint;
  at: number;
}

/** What to answer a delivery: a status, after a delay, with a body; "hang" never answers. */
export type Answer = { status: number; delayMs?: number; body?: string } | "hang";

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request, in the order they arrived. */
  received: ReceivedDelivery[];
  /** The events of accepted deliveries applied once each, in cursor order, per subscription. */
  consumers: Map<string, StreamConsumer>;
  /** Secrets by subscription id: a delivery of an unknown subscription is refused (401). */
  secrets: Map<string, string>;
  /** How to answer: by default 200 to a verified delivery, 401 to any other. */
  answer: (delivery: ReceivedDelivery) => Answer;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: "",
    port: 0,
    received: [],
    consumers: new Map(),
    secrets: new Map(),
    answer: (d) => ({ status: d.problem === undefined ? 200 : 401 }),
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      const header = (name: string) => {
        const v = req.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      const parsed = JSON.parse(body) as { subscriptionId: string; events: unknown[]; nextCursor: string };
      const secret = receiver.secrets.get(parsed.subscriptionId);
      const problem =
        secret === undefined
          ? "unknown subscription"
          : signatureProblem(
              secret,
              { timestamp: header("mintlens-timestamp"), signature: header("mintlens-signature") },
              body,
              Math.floor(Date.now() / 1000),
            );
      const delivery: ReceivedDelivery = {
        headers: req.headers,
        body,
        problem,
        status: 0,
        subscriptionId: parsed.subscriptionId,
        key: header("idempotency-key") ?? "",
        events: parsed.events.map(eventFromWire),
        nextCursor: BigInt(parsed.nextCursor),
        at: Date.now(),
      };
      receiver.received.push(delivery);
      const answer = receiver.answer(delivery);
      if (answer === "hang") return;
      delivery.status = answer.status;
      if (answer.status >= 200 && answer.status < 300 && problem === undefined) {
        let consumer = receiver.consumers.get(delivery.subscriptionId);
        if (!consumer) {
          consumer = new StreamConsumer();
          receiver.consumers.set(delivery.subscriptionId, consumer);
        }
        // At least once: a batch delivered again is skipped by its cursors.
        consumer.apply(delivery.events.filter((e) => e.cursor > (consumer as StreamConsumer).last));
      }
      const send = () => {
        res.writeHead(answer.status, { "content-type": "text/plain" });
        res.end(answer.body ?? "");
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** A target that answers 500 to everything at once, reading nothing: the idempotency keys it was sent, in order. */
export async function startFailingTarget(): Promise<{ url: string; keys: string[]; close(): Promise<void> }> {
  const keys: string[] = [];
  const server = createServer((req, res) => {
    keys.push(String(req.headers["idempotency-key"]));
    req.resume();
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    keys,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
