import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ResourceExhaustedError, UnauthenticatedError } from "../../src/api/errors.ts";
import { answerCost, BYTES_PER_POINT, createGuard } from "../../src/api/guard.ts";
import type { KeyCheck, KeyVerifier } from "../../src/api/key-verifier.ts";
import { addressGroup, peerHost } from "../../src/api/remote-address.ts";
import { createTokenBuckets } from "../../src/api/token-bucket.ts";

describe("token buckets", () => {
  const step = fc.record({
    waitMs: fc.integer({ min: 0, max: 400 }),
    charge: fc.integer({ min: 0, max: 20 }),
  });

  test("in any span of t seconds at most burst + rate × t points are let in, charges included", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(step, { maxLength: 200 }),
        (rate, burst, steps) => {
          let now = 0;
          const buckets = createTokenBuckets({ ratePerSecond: rate, burst, now: () => now });
          const spent: { at: number; points: number }[] = [];
          for (const { waitMs, charge } of steps) {
            now += waitMs;
            if (buckets.take("k").ok) {
              buckets.charge("k", charge);
              spent.push({ at: now, points: 1 + charge });
            }
          }
          // What was let in never outruns the refill: the points taken before each admission,
          // less the last one's charge (paid after it was let in), fit in burst + rate × span.
          for (const [i, first] of spent.entries()) {
            let total = 0;
            for (const later of spent.slice(i)) {
              total += later.points;
              const allowed = burst + (rate * (later.at - first.at)) / 1000;
              assert.ok(total - later.points + 1 <= allowed + 1e-9, `${total} in ${later.at - first.at} ms`);
            }
          }
        },
      ),
    );
  });

  test("a refusal's wait is exact: one point is there after it, not before", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 500 }),
        (rate, burst, debt) => {
          let now = 0;
          const buckets = createTokenBuckets({ ratePerSecond: rate, burst, now: () => now });
          for (let i = 0; i < burst; i++) assert.equal(buckets.take("k").ok, true);
          buckets.charge("k", debt);
          const refused = buckets.take("k");
          assert.ok(!refused.ok);
          assert.equal(refused.retryAfterMs, Math.ceil(((1 + debt) * 1000) / rate));
          now += refused.retryAfterMs - 1;
          assert.equal(buckets.take("k").ok, false);
          now += 1;
          assert.equal(buckets.take("k").ok, true);
          // Other keys are not touched.
          assert.equal(buckets.take("other").ok, true);
        },
      ),
    );
  });

  test("buckets that refilled to full are dropped", () => {
    let now = 0;
    const buckets = createTokenBuckets({ ratePerSecond: 10, burst: 5, now: () => now });
    for (let i = 0; i < 100; i++) buckets.take(`key-${i}`);
    assert.equal(buckets.size, 100);
    now += 61_000;
    buckets.take("last");
    assert.equal(buckets.size, 1);
  });
});

test("an answer costs a point per started 64 KiB, at least one", () => {
  assert.equal(answerCost(0), 1);
  assert.equal(answerCost(BYTES_PER_POINT), 1);
  assert.equal(answerCost(BYTES_PER_POINT + 1), 2);
  assert.equal(answerCost(870_000), 14);
  fc.assert(
    fc.property(fc.nat({ max: 100_000_000 }), (bytes) => {
      const cost = answerCost(bytes);
      assert.ok(cost >= 1 && (cost - 1) * BYTES_PER_POINT <= bytes);
      assert.ok(bytes <= cost * BYTES_PER_POINT);
    }),
  );
});

describe("remote addresses", () => {
  test("grpc-js peers give their host", () => {
    assert.equal(peerHost("ipv4:1.2.3.4:5678"), "1.2.3.4");
    assert.equal(peerHost("ipv6:[::1]:5678"), "::1");
    assert.equal(peerHost("ipv6:[2001:db8::1]:443"), "2001:db8::1");
    assert.equal(peerHost("10.0.0.1:80"), "10.0.0.1");
    assert.equal(peerHost("[fe80::1%eth0]:80"), "fe80::1%eth0");
    assert.equal(peerHost("unix:/tmp/socket"), "unix:/tmp/socket");
  });

  const group16 = fc.integer({ min: 0, max: 0xffff });
  const ipv6 = fc.array(group16, { minLength: 8, maxLength: 8 });

  test("an IPv6 address counts as its /64, however it is written", () => {
    fc.assert(
      fc.property(ipv6, ipv6, (a, b) => {
        // Not an IPv4-mapped address, which counts as its IPv4 address.
        fc.pre(!(a.slice(0, 5).every((g) => g === 0) && a[5] === 0xffff));
        const full = a.map((g) => g.toString(16).padStart(4, "0")).join(":");
        const canonical = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        const expected = `${a
          .slice(0, 4)
          .map((g) => g.toString(16))
          .join(":")}::/64`;
        assert.equal(addressGroup(full), expected);
        assert.equal(addressGroup(canonical), expected, canonical);
        assert.equal(addressGroup(full.toUpperCase()), expected);
        const sibling = [...a.slice(0, 4), ...b.slice(4)];
        assert.equal(addressGroup(sibling.map((g) => g.toString(16)).join(":")), expected);
      }),
    );
  });

  test("IPv4, IPv4-mapped and anything else", () => {
    assert.equal(addressGroup("192.0.2.7"), "192.0.2.7");
    assert.equal(addressGroup("::ffff:192.0.2.7"), "192.0.2.7");
    assert.equal(addressGroup("::ffff:c000:207"), "192.0.2.7");
    assert.equal(addressGroup("::1"), "0:0:0:0::/64");
    assert.equal(addressGroup("fe80::1%eth0"), "fe80:0:0:0::/64");
    assert.equal(addressGroup("64:ff9b::192.0.2.7"), "64:ff9b:0:0::/64");
    assert.equal(addressGroup("unix:/tmp/s"), "unix:/tmp/s");
  });
});

describe("the guard", () => {
  /** A verifier that knows one key and counts what it was asked. */
  function oneKey(): KeyVerifier & { asked: number } {
    const verifier = {
      asked: 0,
      async verify(presented: string | undefined): Promise<KeyCheck> {
        verifier.asked++;
        return presented === "good"
          ? { ok: true, userName: "u", keyId: "k" }
          : { ok: false, reason: presented === undefined ? "missing" : "unknown" };
      },
      async refresh() {},
    };
    return verifier;
  }

  test("failed authentications from one address are limited, before any key check, for the block", async () => {
    const keys = oneKey();
    const guard = createGuard({ keys, pointsPerSecond: 0, failedAuthenticationsPerMinute: 3 });
    for (let i = 0; i < 3; i++) {
      await assert.rejects(guard.admit("bad", "203.0.113.9"), UnauthenticatedError);
    }
    await assert.rejects(guard.admit(undefined, "203.0.113.9"), (error) => {
      assert.ok(error instanceof ResourceExhaustedError);
      assert.ok(error.retryAfterSeconds > 50 && error.retryAfterSeconds <= 60, `${error.retryAfterSeconds}`);
      return true;
    });
    const asked = keys.asked;
    // Blocked: even a good key from there is refused, without being looked at.
    await assert.rejects(guard.admit("good", "203.0.113.9"), ResourceExhaustedError);
    await assert.rejects(guard.admit("good", "::ffff:203.0.113.9"), ResourceExhaustedError);
    assert.equal(keys.asked, asked);
    // Another address, and another /64, are not.
    assert.equal((await guard.admit("good", "203.0.113.10")).userName, "u");
    await assert.rejects(guard.admit("bad", "2001:db8:1:2::1"), UnauthenticatedError);
  });

  test("a /64 shares one count", async () => {
    const guard = createGuard({ keys: oneKey(), pointsPerSecond: 0, failedAuthenticationsPerMinute: 2 });
    await assert.rejects(guard.admit("bad", "2001:db8:1:2::1"), UnauthenticatedError);
    await assert.rejects(guard.admit("bad", "2001:db8:1:2:ffff::9"), UnauthenticatedError);
    await assert.rejects(guard.admit("bad", "2001:db8:1:2:abcd::"), ResourceExhaustedError);
    await assert.rejects(guard.admit("good", "2001:db8:1:2::77"), ResourceExhaustedError);
    assert.equal((await guard.admit("good", "2001:db8:1:3::1")).keyId, "k");
  });

  test("a caller is charged for its answer: a large one makes the next requests wait", async () => {
    let now = 0;
    const guard = createGuard({ keys: oneKey(), pointsPerSecond: 30, burst: 10, now: () => now });
    const caller = await guard.admit("good", "192.0.2.1");
    caller.charge(870_000);
    // 10 - 14 = -4 points: five points short of one request, a sixth of a second at 30 a second.
    await assert.rejects(guard.admit("good", "192.0.2.1"), (error) => {
      assert.ok(error instanceof ResourceExhaustedError);
      assert.equal(error.retryAfterSeconds, 1);
      return true;
    });
    now += 166;
    await assert.rejects(guard.admit("good", "192.0.2.1"), ResourceExhaustedError);
    now += 1;
    assert.equal((await guard.admit("good", "192.0.2.1")).userName, "u");
  });
});
