/**
 * Who may fetch from a host now: a few slots per host, and a circuit breaker per host. A token
 * whose host has no free slot is not parked in a slot of the worker waiting for one: its fetch is
 * refused at once (`busy`), and the worker hands the token back to the queue. A host that failed
 * `failuresToOpen` fetches in a row (timeouts, 5xx, reset connections) is left alone for a
 * cool-down (`failing`), doubling while it keeps failing; once the cool-down is over, one fetch
 * tries it (the probe), and an answer closes the breaker. Any answer, a refusal (404) included,
 * shows the host is up.
 *
 * No I/O and no timers: time is read through `now`, so the policy is tested by the clock.
 */

/** The breaker's settings: after how many failures in a row it opens, and for how long. */
export interface BreakerSettings {
  failuresToOpen: number;
  coolDownMs: number;
  maxCoolDownMs: number;
}

/** A host failing this many fetches in a row is left alone for 1 min, doubling up to 1 h. */
export const BREAKER: BreakerSettings = { failuresToOpen: 5, coolDownMs: 60_000, maxCoolDownMs: 3_600_000 };

/**
 * Hosts remembered at most. A host with nothing under way and nothing against it is forgotten at
 * once; past this many, the least recently used host with nothing under way is forgotten, its
 * breaker with it.
 */
export const MAX_HOSTS = 10_000;

/** How a fetch on a slot ended, for the breaker: the host answered, it failed, or the fetch was given up (shutdown). */
export type FetchResult = "answered" | "failed" | "abandoned";

export type Admission =
  | { ok: true; done(result: FetchResult): void }
  | { ok: false; reason: "busy" }
  | { ok: false; reason: "failing"; retryInMs: number; failures: number };

export interface HostGate {
  /** A slot on `host` now, or why not: every slot taken (or someone waiting for one), or the host failing. */
  tryEnter(host: string): Admission;
  /**
   * A slot on `host`, waiting for one while all are taken (those waiting go before `tryEnter`):
   * what a token already under way asks for its image. Refused at once when the host is failing.
   */
  enter(host: string): Promise<Admission>;
  /** How many fetches `host` would take now: its free slots, 0 while failing, 1 for the probe. */
  free(host: string): number;
  /** Hosts remembered. */
  readonly size: number;
}

interface Host {
  active: number;
  waiting: ((admission: Admission) => void)[];
  /** Failed fetches in a row. */
  failures: number;
  /** While open: when the next probe may go. */
  openUntil: number | undefined;
  coolDownMs: number;
  probing: boolean;
}

export function createHostGate(options: {
  perHost: number;
  breaker?: BreakerSettings;
  maxHosts?: number;
  now?: () => number;
}): HostGate {
  const { perHost } = options;
  const breaker = options.breaker ?? BREAKER;
  const maxHosts = options.maxHosts ?? MAX_HOSTS;
  const now = options.now ?? Date.now;
  // In order of last use: the first idle one is the one to forget.
  const hosts = new Map<string, Host>();

  const idle = (h: Host) => h.active === 0 && h.waiting.length === 0;
  const forgettable = (h: Host) => idle(h) && h.failures === 0 && h.openUntil === undefined;

  function get(name: string): Host {
    let h = hosts.get(name);
    if (h) {
      hosts.delete(name);
    } else {
      h = {
        active: 0,
        waiting: [],
        failures: 0,
        openUntil: undefined,
        coolDownMs: breaker.coolDownMs,
        probing: false,
      };
      if (hosts.size >= maxHosts) {
        for (const [other, o] of hosts) {
          if (!idle(o)) continue;
          hosts.delete(other);
          break;
        }
      }
    }
    hosts.set(name, h);
    return h;
  }

  /** Why `h` takes no fetch now, or undefined when it takes one (`probe`: the one that tries a failing host). */
  function refusal(h: Host): Admission | undefined {
    if (h.openUntil !== undefined) {
      const left = h.openUntil - now();
      if (left > 0 || h.probing)
        return { ok: false, reason: "failing", retryInMs: Math.max(left, 0), failures: h.failures };
      return undefined;
    }
    return undefined;
  }

  function admit(name: string, h: Host): Admission {
    h.active++;
    const probe = h.openUntil !== undefined;
    if (probe) h.probing = true;
    let ended = false;
    return {
      ok: true,
      done(result) {
        if (ended) return;
        ended = true;
        h.active--;
        if (probe) h.probing = false;
        if (result === "answered") {
          h.failures = 0;
          h.openUntil = undefined;
          h.coolDownMs = breaker.coolDownMs;
        } else if (result === "failed") {
          h.failures++;
          if (probe) {
            h.coolDownMs = Math.min(h.coolDownMs * 2, breaker.maxCoolDownMs);
            h.openUntil = now() + h.coolDownMs;
          } else if (h.openUntil === undefined && h.failures >= breaker.failuresToOpen) {
            h.openUntil = now() + h.coolDownMs;
          }
        }
        // A freed slot goes to the first waiting, or to no one while the host is failing.
        while (h.waiting.length > 0) {
          const no = refusal(h);
          if (no) {
            for (const wake of h.waiting.splice(0)) wake(no);
            break;
          }
          if (h.active >= perHost) break;
          h.waiting.shift()?.(admit(name, h));
        }
        if (forgettable(h) && hosts.get(name) === h) hosts.delete(name);
      },
    };
  }

  return {
    tryEnter(name) {
      const h = get(name);
      const no = refusal(h);
      if (no) return no;
      if (h.active >= perHost || h.waiting.length > 0) {
        return { ok: false, reason: "busy" };
      }
      return admit(name, h);
    },
    enter(name) {
      const h = get(name);
      const no = refusal(h);
      // A failing host's one probe is the document's; a token's image waits for no probe.
      if (no || h.openUntil !== undefined) {
        return Promise.resolve(no ?? { ok: false, reason: "failing", retryInMs: 0, failures: h.failures });
      }
      if (h.active < perHost && h.waiting.length === 0) return Promise.resolve(admit(name, h));
      return new Promise((resolve) => h.waiting.push(resolve));
    },
    free(name) {
      const h = hosts.get(name);
      if (!h) return perHost;
      if (refusal(h)) return 0;
      if (h.openUntil !== undefined) return 1 - h.active > 0 ? 1 : 0;
      return Math.max(0, perHost - h.active - h.waiting.length);
    },
    get size() {
      return hosts.size;
    },
  };
}

/** A fetch the gate did not let through: the token is handed back to the queue, not counted as an attempt. */
export class HostNotTaken extends Error {
  override readonly name = "HostNotTaken";
  constructor(
    readonly host: string,
    readonly refusal: Extract<Admission, { ok: false }>,
  ) {
    super(
      refusal.reason === "busy"
        ? `every slot on ${host} is taken`
        : `${host} failed ${refusal.failures} fetches in a row: left alone for ${Math.ceil(refusal.retryInMs / 1000)} s`,
    );
  }
}
