import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ConfigError } from "../../src/config/config.ts";
import { parseWebhookConfig } from "../../src/config/webhook-config.ts";
import { deliveryBody, deliveryHeaders, idempotencyKey } from "../../src/webhooks/payload.ts";
import {
  afterFailure,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
  retryDelay,
} from "../../src/webhooks/policy.ts";
import {
  newWebhookId,
  newWebhookSecret,
  signatureHeader,
  signatureProblem,
} from "../../src/webhooks/signature.ts";
import { urlProblem } from "../../src/webhooks/target.ts";

/** The documented scheme, computed here with node:crypto alone. */
const hmac = (secret: string, timestamp: number, body: string) =>
  `v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;

describe("signatures", () => {
  test("a signature is the hex HMAC-SHA256 of `<timestamp>.<body>` under the secret, for any secret and body", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.string(),
        (secret, timestamp, body) => {
          assert.equal(signatureHeader(secret, timestamp, body), hmac(secret, timestamp, body));
          assert.equal(signatureHeader(secret, timestamp, Buffer.from(body)), hmac(secret, timestamp, body));
        },
      ),
    );
  });

  test("a receiver accepts the signed body and refuses a changed body, timestamp, secret or an old timestamp", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.string({ minLength: 1 }),
        fc.integer({ min: 1_000_000_000, max: 3_000_000_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        (key, body, timestamp, shift) => {
          const secret = Buffer.from(key).toString("base64url");
          const headers = {
            timestamp: String(timestamp),
            signature: signatureHeader(secret, timestamp, body),
          };
          assert.equal(signatureProblem(secret, headers, body, timestamp), undefined);
          assert.equal(signatureProblem(secret, headers, body, timestamp + 300), undefined);
          assert.equal(
            signatureProblem(secret, headers, `${body} `, timestamp),
            "the signature does not match",
          );
          assert.equal(
            signatureProblem(secret, { ...headers, timestamp: String(timestamp + shift) }, body, timestamp),
            shift > 300 ? "the timestamp is too old or in the future" : "the signature does not match",
          );
          assert.equal(
            signatureProblem(`${secret}x`, headers, body, timestamp),
            "the signature does not match",
          );
          assert.equal(
            signatureProblem(secret, headers, body, timestamp + 300 + shift),
            "the timestamp is too old or in the future",
          );
        },
      ),
    );
  });

  test("a header without a timestamp or signature is refused; one of several signatures is enough", () => {
    const now = 1_700_000_000;
    assert.equal(
      signatureProblem("s", { timestamp: undefined, signature: "v1=00" }, "b", now),
      "no timestamp",
    );
    assert.equal(signatureProblem("s", { timestamp: "1e9", signature: "v1=00" }, "b", now), "no timestamp");
    assert.equal(
      signatureProblem("s", { timestamp: String(now), signature: undefined }, "b", now),
      "the signature does not match",
    );
    const both = `v1=${"0".repeat(64)}, ${signatureHeader("s", now, "b")}`;
    assert.equal(signatureProblem("s", { timestamp: String(now), signature: both }, "b", now), undefined);
  });

  test("generated secrets are 32 random bytes in base64url, ids wh_ and 16 hex digits, each new", () => {
    const secrets = new Set(Array.from({ length: 50 }, newWebhookSecret));
    assert.equal(secrets.size, 50);
    for (const s of secrets) assert.equal(Buffer.from(s, "base64url").length, 32);
    for (const s of secrets) assert.match(s, /^[A-Za-z0-9_-]{43}$/);
    const ids = new Set(Array.from({ length: 50 }, newWebhookId));
    assert.equal(ids.size, 50);
    for (const id of ids) assert.match(id, /^wh_[0-9a-f]{16}$/);
  });
});

describe("deliveries", () => {
  test("every attempt of a batch has its key; the signature covers the attempt's timestamp and the body", () => {
    const hook = { id: "wh_0123456789abcdef", secret: randomBytes(32).toString("base64url") };
    const body = deliveryBody(hook.id, 1, [], 40n);
    assert.deepEqual(JSON.parse(body), {
      subscriptionId: hook.id,
      chainId: 1,
      events: [],
      nextCursor: "40",
    });
    const a = deliveryHeaders(hook, { first: 9n, last: 38n }, 1_700_000_000, body);
    const b = deliveryHeaders(hook, { first: 9n, last: 38n }, 1_700_000_060, body);
    assert.equal(a["idempotency-key"], `${hook.id}-9-38`);
    assert.equal(a["idempotency-key"], idempotencyKey(hook.id, 9n, 38n));
    assert.equal(a["mintlens-delivery-id"], b["mintlens-delivery-id"]);
    assert.equal(a["mintlens-webhook-id"], hook.id);
    assert.equal(a["mintlens-signature"], hmac(hook.secret, 1_700_000_000, body));
    assert.equal(b["mintlens-signature"], hmac(hook.secret, 1_700_000_060, body));
    assert.ok(!Object.values(a).some((v) => v.includes(hook.secret)), "the secret is never sent");
  });
});

describe("retries and pausing", () => {
  const policy: RetryPolicy = {
    baseDelayMs: 1000,
    maxDelayMs: 600_000,
    pauseFailures: 20,
    pauseAfterMs: 3_600_000,
  };

  test("the wait doubles from the base to the maximum, less a random part of at most a half", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (failures, random) => {
          const full = Math.min(600_000, 1000 * 2 ** (failures - 1));
          const wait = retryDelay(policy, failures, random);
          assert.ok(wait <= full && wait >= full / 2 - 1, `${failures} failures: ${wait} of ${full}`);
          assert.equal(retryDelay(policy, failures, 0), full);
        },
      ),
    );
    assert.deepEqual(
      [1, 2, 3, 4, 10, 11, 30].map((n) => retryDelay(policy, n, 0)),
      [1000, 2000, 4000, 8000, 512_000, 600_000, 600_000],
    );
  });

  test("paused only once both the failures and the time failing reach their thresholds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 10 * 3_600_000 }),
        (before, failingMs) => {
          const now = new Date(1_800_000_000_000);
          const since = before === 0 ? undefined : new Date(now.getTime() - failingMs);
          const outcome = afterFailure(policy, { failures: before, failingSince: since }, now, 0.5);
          const spent = since === undefined ? 0 : failingMs;
          assert.equal(outcome.pause !== undefined, before + 1 >= 20 && spent >= 3_600_000);
          assert.equal(
            outcome.failingSince.getTime(),
            (since ?? now).getTime(),
            "the run's first failure is kept",
          );
          assert.equal(outcome.retryAt.getTime(), now.getTime() + retryDelay(policy, before + 1, 0.5));
        },
      ),
    );
    const paused = afterFailure(
      policy,
      { failures: 19, failingSince: new Date(1_800_000_000_000 - 90 * 60_000) },
      new Date(1_800_000_000_000),
      0,
    );
    assert.equal(paused.pause, "20 failures in a row over 90 min");
  });

  test("the defaults: 1 s doubling to 10 minutes, paused after 20 failures over an hour", () => {
    assert.deepEqual(DEFAULT_RETRY_POLICY, policy);
    const config = parseWebhookConfig({}, {});
    assert.deepEqual(
      {
        base: config.retryBaseMs,
        max: config.retryMaxMs,
        failures: config.pauseFailures,
        after: config.pauseAfterMs,
        timeout: config.timeoutMs,
        enabled: config.enabled,
      },
      { base: 1000, max: 600_000, failures: 20, after: 3_600_000, timeout: 10_000, enabled: true },
    );
  });
});

describe("configuration and targets", () => {
  test("flags win over the environment; every problem is listed at once", () => {
    const config = parseWebhookConfig(
      { webhookPauseAfter: "30m", webhookAllow: ["127.0.0.1:8080,10.0.0.0/8"] },
      { MINTLENS_WEBHOOK_PAUSE_AFTER: "2h", MINTLENS_WEBHOOKS: "off", MINTLENS_WEBHOOK_ALLOW: "192.168.0.1" },
    );
    assert.equal(config.pauseAfterMs, 1_800_000);
    assert.equal(config.enabled, false);
    assert.deepEqual(config.allow, ["127.0.0.1:8080", "10.0.0.0/8"]);
    assert.deepEqual(parseWebhookConfig({}, { MINTLENS_WEBHOOK_ALLOW: "192.168.0.1" }).allow, [
      "192.168.0.1",
    ]);
    assert.throws(
      () =>
        parseWebhookConfig(
          {
            webhooks: "maybe",
            webhookTimeout: "5",
            webhookPauseAfter: "1d",
            webhookRetryMax: "10",
            webhookRetryBase: "100",
          },
          {},
        ),
      (error: unknown) => error instanceof ConfigError && error.problems.length === 4,
    );
  });

  test("a target is an http(s) URL without credentials or fragment", () => {
    assert.equal(urlProblem("https://bot.example/hook?x=1"), undefined);
    assert.equal(urlProblem("http://127.0.0.1:8080/"), undefined);
    for (const bad of [
      "ftp://bot.example/",
      "file:///etc/passwd",
      "https://user:pass@bot.example/",
      "https://token@bot.example/",
      "https://bot.example/#x",
      "not a url",
    ])
      assert.notEqual(urlProblem(bad), undefined, bad);
  });
});
