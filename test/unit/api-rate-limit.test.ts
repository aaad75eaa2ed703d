import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { RateLimiterMemory } from "rate-limiter-flexible";
import {
  burstWindowSeconds,
  debtBlockSeconds,
  flexibleKeyLimiter,
  type KeyLimiter,
  localKeyLimiter,
} from "../../src/api/key-limiter.ts";
import { createFailoverLimiter } from "../../src/api/limit-failover.ts";
import type { Take } from "../../src/api/token-bucket.ts";
import { createTokenBuckets } from "../../src/api/token-bucket.ts";
import { parseApiConfig, parseRateLimitStore } from "../../src/config/api-config.ts";
import { ConfigError } from "../../src/config/config.ts";

describe("the shared limit's windows", () => {
  test("the burst window is the shortest whole number of seconds that keeps a spender within rate × 1.1", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        (rate, burst) => {
          const window = burstWindowSeconds(rate, burst);
          assert.ok(Number.isInteger(window) && window >= 1);
          // What the burst adds per second to a key that never stops asking.
          assert.ok(burst / window <= rate / 10 || window === 1, `${burst}/${window} over ${rate}`);
          if (window > 1) assert.ok(burst / (window - 1) > rate / 10);
        },
      ),
    );
  });

  test("a debt the window's end does not pay blocks the key for the debt's time, rounded up to a second", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.integer({ min: 0, max: 1_000 }),
        (rate, consumed, msBeforeNext) => {
          const seconds = debtBlockSeconds(consumed, rate, msBeforeNext);
          const debtMs = (Math.max(0, consumed - rate) * 1000) / rate;
          if (debtMs <= msBeforeNext) assert.equal(seconds, 0);
          else {
            assert.ok(
              seconds * 1000 >= debtMs && (seconds - 1) * 1000 < debtMs,
              `${seconds} s for ${debtMs} ms`,
            );
          }
        },
      ),
    );
  });
});

describe("fixed windows as a key limiter", () => {
  const limiter = (rate: number, burst: number) =>
    flexibleKeyLimiter({
      rate: new RateLimiterMemory({ keyPrefix: "rate", points: rate, duration: 1 }),
      burst: new RateLimiterMemory({
        keyPrefix: "burst",
        points: burst,
        duration: burstWindowSeconds(rate, burst),
      }),
      ratePerSecond: rate,
    });

  test("a key asking back to back gets its rate and its burst, then a wait of at most the second", async () => {
    const limits = limiter(5, 3);
    const taken: Take[] = [];
    for (let i = 0; i < 10; i++) taken.push(await limits.take("k"));
    assert.equal(taken.filter((t) => t.ok).length, 8);
    const refused = taken.at(-1);
    assert.ok(
      refused !== undefined && !refused.ok && refused.retryAfterMs > 0 && refused.retryAfterMs <= 1000,
    );
    assert.equal((await limits.take("other")).ok, true, "keys are counted apart");
  });

  test("an answer that overspends the key keeps it waiting past its second, burst spent too", async () => {
    const limits = limiter(2, 1);
    assert.equal((await limits.take("k")).ok, true);
    await limits.charge("k", 7); // 8 points at 2 a second: 3 s of debt
    assert.equal((await limits.take("k")).ok, true, "the burst lends its point");
    const refused = await limits.take("k");
    assert.ok(!refused.ok && refused.retryAfterMs > 2_000, JSON.stringify(refused));
  });
});

describe("failing over to the process's own limit", () => {
  /** A store whose answers the test decides: ok, refuse, fail, or hang. */
  function fakeStore() {
    const state = { mode: "ok" as "ok" | "refuse" | "fail" | "hang", calls: 0 };
    const limiter: KeyLimiter = {
      async take() {
        state.calls++;
        if (state.mode === "fail") throw new Error("connection refused");
        if (state.mode === "hang") return new Promise<Take>(() => {});
        return state.mode === "ok" ? { ok: true } : { ok: false, retryAfterMs: 500 };
      },
      async charge() {
        state.calls++;
        if (state.mode === "fail") throw new Error("connection refused");
      },
    };
    return { state, limiter };
  }

  function setup() {
    let now = 0;
    const store = fakeStore();
    const changes: boolean[] = [];
    let fallbacks = 0;
    const limiter = createFailoverLimiter({
      shared: store.limiter,
      // One point a second, none in reserve: a local answer is told apart from the store's.
      local: localKeyLimiter(createTokenBuckets({ ratePerSecond: 1, burst: 1, now: () => now })),
      timeoutMs: 20,
      probeMs: 1_000,
      now: () => now,
      onChange: (up) => changes.push(up),
      onFallback: () => fallbacks++,
    });
    return {
      store,
      limiter,
      changes,
      fallbacks: () => fallbacks,
      advance: (ms: number) => {
        now += ms;
      },
    };
  }

  test("the store's refusals are answers, not failures", async () => {
    const s = setup();
    s.store.state.mode = "refuse";
    for (let i = 0; i < 5; i++) assert.deepEqual(await s.limiter.take("k"), { ok: false, retryAfterMs: 500 });
    assert.deepEqual(s.changes, []);
    assert.equal(s.fallbacks(), 0);
  });

  test("a failing store: told once, the local limit answers, one probe a second, told again when back", async () => {
    const s = setup();
    s.store.state.mode = "fail";
    assert.equal((await s.limiter.take("k")).ok, true, "the local bucket's one point");
    assert.equal((await s.limiter.take("k")).ok, false, "the local bucket is empty: the local limit holds");
    await s.limiter.charge("k", 3);
    assert.deepEqual(s.changes, [false]);
    assert.equal(s.store.state.calls, 1, "the store is left alone until the probe");
    assert.equal(s.fallbacks(), 3);

    s.advance(1_000);
    assert.equal((await s.limiter.take("k")).ok, false, "the probe fails: still local, and in debt");
    assert.equal(s.store.state.calls, 2);
    assert.deepEqual(s.changes, [false]);

    s.store.state.mode = "ok";
    s.advance(500);
    await s.limiter.take("k");
    assert.equal(s.store.state.calls, 2, "no probe before its time");
    s.advance(500);
    assert.equal((await s.limiter.take("k")).ok, true);
    assert.deepEqual(s.changes, [false, true]);
    const calls = s.store.state.calls;
    for (let i = 0; i < 3; i++) assert.equal((await s.limiter.take("k")).ok, true);
    assert.equal(s.store.state.calls, calls + 3, "shared again");
  });

  test("a store that hangs is given up on after the timeout", async () => {
    const s = setup();
    s.store.state.mode = "hang";
    const started = performance.now();
    assert.equal((await s.limiter.take("k")).ok, true);
    assert.ok(performance.now() - started < 1_000);
    assert.deepEqual(s.changes, [false]);
    // Later requests do not wait for it at all.
    const again = performance.now();
    await s.limiter.take("k");
    assert.ok(performance.now() - again < 15);
  });
});

describe("the rate limit store setting", () => {
  test("memory by default; redis and postgres URLs; the flag wins over the environment", () => {
    assert.deepEqual(parseApiConfig({}, {}, ["a"]).rateLimitStore, { kind: "memory" });
    assert.deepEqual(
      parseApiConfig({}, { MINTLENS_RATE_LIMIT_STORE: "redis://cache:6379/2" }, ["a"]).rateLimitStore,
      { kind: "redis", url: "redis://cache:6379/2" },
    );
    assert.deepEqual(
      parseApiConfig(
        { rateLimitStore: "postgresql://u:p@db/mintlens" },
        { MINTLENS_RATE_LIMIT_STORE: "memory" },
        ["a"],
      ).rateLimitStore,
      { kind: "postgres", url: "postgresql://u:p@db/mintlens" },
    );
    assert.deepEqual(parseRateLimitStore("rediss://cache"), { kind: "redis", url: "rediss://cache" });
    assert.deepEqual(parseRateLimitStore("postgres://db/x"), { kind: "postgres", url: "postgres://db/x" });
  });

  test("anything else is refused naming the flag, with no password shown", () => {
    for (const [value, shown] of [
      ["memcached://u:secret@cache", /rate limit store: memcached:\/\/\*\*\*@cache is not memory/],
      ["Memory", /rate limit store: neither memory nor a URL/],
      ["", /rate limit store: neither memory nor a URL/],
    ] as const) {
      assert.throws(
        () => parseApiConfig({ rateLimitStore: value }, {}, ["a"]),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, shown);
          assert.doesNotMatch(error.message, /secret/);
          return true;
        },
      );
    }
  });
});
