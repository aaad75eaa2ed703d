/**
 * The per-host slots and circuit breaker, by the clock: slots never exceed their limit, a host is
 * left alone after failing in a row and tried by one probe after its cool-down, an answer closes it,
 * and the hosts remembered stay bounded.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { type Admission, BREAKER, createHostGate } from "../../src/metadata/host-gate.ts";

const taken = (a: Admission) => {
  assert.ok(a.ok, JSON.stringify(a));
  return a;
};

describe("host gate", () => {
  test("a host's slots never exceed its limit, and every slot ended frees one (property-based)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.tuple(fc.constantFrom("a", "b", "c"), fc.boolean(), fc.nat(3)), { maxLength: 200 }),
        (perHost, steps) => {
          const gate = createHostGate({ perHost });
          const open = new Map<string, ((r: "answered") => void)[]>();
          for (const [host, enter, which] of steps) {
            const mine = open.get(host) ?? [];
            open.set(host, mine);
            if (enter) {
              const a = gate.tryEnter(host);
              if (a.ok) mine.push(a.done);
              else assert.equal(a.reason, "busy");
              assert.ok(mine.length <= perHost);
            } else if (mine.length > 0) {
              mine.splice(which % mine.length, 1)[0]?.("answered");
            }
            assert.equal(gate.free(host), perHost - mine.length);
          }
          for (const list of open.values()) for (const done of list) done("answered");
          assert.equal(gate.size, 0, "hosts with nothing under way and nothing against them are forgotten");
        },
      ),
    );
  });

  test("failing in a row opens the breaker; one probe after the cool-down; a failed probe doubles it; an answer closes it", () => {
    let now = 0;
    const gate = createHostGate({ perHost: 2, now: () => now });
    for (let i = 0; i < BREAKER.failuresToOpen; i++) taken(gate.tryEnter("h")).done("failed");
    const refused = gate.tryEnter("h");
    assert.deepEqual(refused, {
      ok: false,
      reason: "failing",
      retryInMs: BREAKER.coolDownMs,
      failures: BREAKER.failuresToOpen,
    });
    assert.equal(gate.free("h"), 0);
    now += BREAKER.coolDownMs;
    assert.equal(gate.free("h"), 1);
    const probe = taken(gate.tryEnter("h"));
    assert.equal(gate.tryEnter("h").ok, false, "one probe at a time");
    probe.done("failed");
    assert.deepEqual(gate.tryEnter("h"), {
      ok: false,
      reason: "failing",
      retryInMs: 2 * BREAKER.coolDownMs,
      failures: BREAKER.failuresToOpen + 1,
    });
    // Doubling stops at the longest cool-down.
    for (let i = 0; i < 20; i++) {
      now += BREAKER.maxCoolDownMs;
      taken(gate.tryEnter("h")).done("failed");
    }
    const longest = gate.tryEnter("h");
    assert.ok(!longest.ok && longest.reason === "failing" && longest.retryInMs === BREAKER.maxCoolDownMs);
    now += BREAKER.maxCoolDownMs;
    taken(gate.tryEnter("h")).done("answered");
    assert.equal(gate.free("h"), 2);
    assert.equal(gate.size, 0);
  });

  test("failures broken by an answer do not open the breaker", () => {
    const gate = createHostGate({ perHost: 1 });
    for (let i = 0; i < 3 * BREAKER.failuresToOpen; i++) {
      taken(gate.tryEnter("h")).done(i % BREAKER.failuresToOpen === 0 ? "answered" : "failed");
    }
    assert.ok(gate.tryEnter("h").ok);
  });

  test("an image waits for a slot, ahead of new documents, and is refused at once by a failing host", async () => {
    const gate = createHostGate({ perHost: 1 });
    const first = taken(gate.tryEnter("h"));
    const waiting = gate.enter("h");
    first.done("answered");
    assert.deepEqual(gate.tryEnter("h"), { ok: false, reason: "busy" }, "the waiting image went first");
    taken(await waiting).done("answered");
    for (let i = 0; i < BREAKER.failuresToOpen; i++) taken(gate.tryEnter("h")).done("failed");
    const refused = await gate.enter("h");
    assert.equal(refused.ok, false);
  });

  test("hosts remembered stay bounded, failing ones included", () => {
    const gate = createHostGate({ perHost: 1, maxHosts: 50 });
    for (let i = 0; i < 1_000; i++) {
      for (let f = 0; f < BREAKER.failuresToOpen; f++) taken(gate.tryEnter(`h${i}`)).done("failed");
      assert.ok(gate.size <= 50, `${gate.size} hosts`);
    }
  });
});
