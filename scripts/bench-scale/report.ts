/** The scale benchmark's one table: every figure on both stores, its target and its verdict, and the machine's state. */

import { statfsSync } from "node:fs";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import type { Sql } from "../../src/store/pg/database.ts";
import type { Holdings } from "../bench-api/holdings.ts";
import type { Measurement } from "../bench-api/measure.ts";
import type { BatchTiming, IngestResult } from "./on-top.ts";
import type { ScaleOperations } from "./operations.ts";
import type { ScaleShape } from "./shape.ts";
import type { StoreMeta } from "./store.ts";

export const TARGETS = {
  /** Milliseconds, every operation uncached, on both stores. */
  p99: 50,
  /** Most a figure may grow from the small store to the large one (API p99, rankings per batch). */
  growth: 1.5,
  /** Most a deep page's p99 may be over the first page's. */
  deepPage: 1.5,
  /** Most ingest on top of the large store may take over ingest into an empty one. */
  ingest: 1.3,
};

export interface StoreFacts {
  transfers: number;
  sales: number;
  tokens: number;
  collections: number;
  activeLastDay: number;
  soldLastDay: number;
  bytes: number;
  shape: ScaleShape;
}

export interface StoreRun {
  label: "small" | "large";
  meta: StoreMeta;
  facts: StoreFacts;
  api?: { operations: ScaleOperations; measurements: Measurement[] };
  rankings?: BatchTiming[];
}

export interface Machine {
  cores: number;
  load: number[];
  freeMemory: number;
  totalMemory: number;
  diskFree: number;
  diskTotal: number;
  postgres: string;
  settings: Record<string, string>;
}

export async function machineState(sql: Sql, dir: string, names: readonly string[]): Promise<Machine> {
  const disk = statfsSync(dir);
  const [version] = await sql<{ v: string }[]>`SELECT current_setting('server_version') AS v`;
  const settings: Record<string, string> = {};
  for (const name of [...names, "synchronous_commit", "jit", "max_connections"]) {
    const [row] = await sql<{ v: string }[]>`SELECT current_setting(${name}) AS v`;
    settings[name] = row?.v ?? "?";
  }
  return {
    cores: cpus().length,
    load: loadavg(),
    freeMemory: freemem(),
    totalMemory: totalmem(),
    diskFree: disk.bavail * disk.bsize,
    diskTotal: disk.blocks * disk.bsize,
    postgres: version?.v ?? "?",
    settings,
  };
}

const int = (x: number) => Math.round(x).toLocaleString("en");
const ms = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(x < 10 ? 2 : 1);
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || !(b > 0) ? undefined : a / b;
const times = (r: number | undefined) => (r === undefined ? "-" : `${r.toFixed(2)}×`);

function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function printReport(report: {
  runs: StoreRun[];
  ingest: { large: IngestResult; empty: IngestResult } | undefined;
  machine: Machine | undefined;
  load: { duration: number; warmup: number; connections: number; maxRequests: number };
  log: (line: string) => void;
}): void {
  const { runs, ingest, machine, log } = report;
  const small = runs.find((r) => r.label === "small");
  const large = runs.find((r) => r.label === "large");
  const rows: string[][] = [];
  let misses = 0;
  const row = (
    figure: string,
    s: string,
    l: string,
    r: string,
    target: string,
    pass: boolean | undefined,
  ) => {
    if (pass === false) misses++;
    rows.push([figure, s, l, r, target, pass === undefined ? "" : pass ? "PASS" : "**FAIL**"]);
  };
  const section = (title: string) => rows.push([`**${title}**`, "", "", "", "", ""]);

  section("stores");
  const fact = (label: string, pick: (f: StoreFacts) => string) =>
    row(label, small ? pick(small.facts) : "-", large ? pick(large.facts) : "-", "", "", undefined);
  fact("NFT transfers (about)", (f) => int(f.transfers));
  fact("sales (about; with paid mints)", (f) => int(f.sales));
  fact("tokens (about)", (f) => int(f.tokens));
  fact("collections (of which spam)", (f) => `${int(f.collections)} (${int(f.shape.spamCollections)})`);
  fact(
    "collections with transfers / sales in the last day",
    (f) => `${int(f.activeLastDay)} / ${int(f.soldLastDay)}`,
  );
  fact("on disk", (f) => gib(f.bytes));
  const build = (run: StoreRun | undefined) => {
    if (!run) return "-";
    const sessions = run.meta.sessions;
    const seconds = sessions.reduce((sum, s) => sum + s.seconds, 0);
    const transfers = sessions.reduce((sum, s) => sum + s.transfers, 0);
    const writes = sessions.reduce((sum, s) => sum + s.inserted + s.updated + s.deleted, 0);
    return `${(seconds / 60).toFixed(1)} min; ${int(transfers / seconds)} transfers/s, ${int(writes / seconds)} row writes/s`;
  };
  row("build (at nice 19, machine shared)", build(small), build(large), "", "", undefined);
  const holdings = (run: StoreRun | undefined, pick: (h: Holdings) => string) => {
    const h = run?.api?.operations.facts.holdings;
    return h ? pick(h) : "-";
  };
  const holdingsFact = (label: string, pick: (h: Holdings) => string) =>
    row(label, holdings(small, pick), holdings(large, pick), "", "", undefined);
  holdingsFact("largest wallet's NFTs", (h) => int(h.whaleNfts));
  holdingsFact("most owned token's owners", (h) => int(h.crowded[0]?.owners ?? 0));
  holdingsFact("busiest collection's NFT transfers", (h) => int(h.busiest?.transfers ?? 0));
  holdingsFact("collections with punk offers", (h) => int(h.offered.length));
  fact("built with the collector's vault and punk offers", (f) =>
    f.shape.collectorNfts === undefined ? "**no: rebuild**" : "yes",
  );

  if (small?.api || large?.api) {
    section(
      `API uncached, ${report.load.connections} connections, ${report.load.duration} s or ${int(report.load.maxRequests)} requests: p50 / p99 ms`,
    );
    const names = (large?.api ?? small?.api)?.measurements.map((m) => m.operation.name) ?? [];
    const find = (run: StoreRun | undefined, name: string) =>
      run?.api?.measurements.find((m) => m.operation.name === name);
    for (const name of names) {
      const s = find(small, name);
      const l = find(large, name);
      const cell = (m: Measurement | undefined) =>
        m === undefined
          ? "-"
          : `${ms(m.p50)} / ${ms(m.p99)}${m.non2xx + m.failed > 0 ? ` (**${m.non2xx + m.failed} failed**)` : ""}`;
      const r = ratio(l?.p99, s?.p99);
      const bare = (l ?? s)?.operation.kind === "bare";
      const fastEnough = [s, l].every(
        (m) => m === undefined || (m.p99 < TARGETS.p99 && m.non2xx + m.failed === 0),
      );
      const flat = r === undefined || r <= TARGETS.growth;
      row(
        name,
        cell(s),
        cell(l),
        times(r),
        bare ? "" : `p99 < ${TARGETS.p99} ms; ≤ ${TARGETS.growth}×`,
        bare ? undefined : fastEnough && flat,
      );
    }
    for (const run of [small, large]) {
      for (const pair of run?.api?.operations.pairs ?? []) {
        const first = find(run, pair.first);
        const deep = find(run, pair.deep);
        const r = ratio(deep?.p99, first?.p99);
        row(
          `${pair.deep} over page 1, p99 (${run?.label})`,
          run?.label === "small" ? times(r) : "",
          run?.label === "large" ? times(r) : "",
          "",
          `≤ ${TARGETS.deepPage}×`,
          r === undefined ? undefined : r <= TARGETS.deepPage,
        );
      }
    }
  }

  if (small?.rankings || large?.rankings) {
    const n = (large?.rankings ?? small?.rankings)?.length ?? 0;
    section(`rankings on top of each store: ${n} fifteen-minute batches, ms per batch`);
    const stat = (run: StoreRun | undefined, pick: (t: BatchTiming) => number, q: number) =>
      run?.rankings ? quantile(run.rankings.map(pick), q) : undefined;
    const rankings = (t: BatchTiming) => t.projections.rankings ?? 0;
    for (const [label, pick, judged] of [
      ["rankings statements", rankings, true],
      ["whole batch write (statements sent in turn)", (t: BatchTiming) => t.write, false],
      ["batch prepare", (t: BatchTiming) => t.prepare, false],
    ] as const) {
      for (const [q, name] of [
        [0.5, "median"],
        [0.99, "p99"],
      ] as const) {
        const s = stat(small, pick, q);
        const l = stat(large, pick, q);
        const r = ratio(l, s);
        row(
          `${label}, ${name}`,
          ms(s),
          ms(l),
          times(r),
          judged ? `≤ ${TARGETS.growth}×` : "",
          judged && r !== undefined ? r <= TARGETS.growth : undefined,
        );
      }
    }
    const share = (run: StoreRun | undefined) => {
      if (!run?.rankings) return "-";
      const total = run.rankings.reduce((sum, t) => sum + t.write, 0);
      const part = run.rankings.reduce((sum, t) => sum + rankings(t), 0);
      const transfers = run.rankings.reduce((sum, t) => sum + t.transfers, 0);
      return `${((100 * part) / total).toFixed(1)}% (${int(transfers / run.rankings.length)} transfers a batch)`;
    };
    row("rankings' share of the write time", share(small), share(large), "", "", undefined);
    // The large market trades more in fifteen minutes (more collections, more sales), and both
    // the deltas and the buckets leaving the windows grow with that, not with the history.
    const perThousand = (run: StoreRun | undefined) => {
      if (!run?.rankings) return undefined;
      const part = run.rankings.reduce((sum, t) => sum + rankings(t), 0);
      const transfers = run.rankings.reduce((sum, t) => sum + t.transfers, 0);
      return (1000 * part) / transfers;
    };
    row(
      "rankings ms per 1,000 NFT transfers written",
      ms(perThousand(small)),
      ms(perThousand(large)),
      times(ratio(perThousand(large), perThousand(small))),
      "",
      undefined,
    );
  }

  if (ingest) {
    section(
      `ingest of the same ${int(ingest.large.transfers)} NFT transfers (${ingest.large.batches} batches), into an empty store (small column) and on top of the large store`,
    );
    const rate = (i: IngestResult) => i.transfers / i.seconds;
    const r = ratio(ingest.large.seconds, ingest.empty.seconds);
    row(
      "events/s (time large / empty)",
      int(rate(ingest.empty)),
      int(rate(ingest.large)),
      times(r),
      `≤ ${TARGETS.ingest}×`,
      r === undefined ? undefined : r <= TARGETS.ingest,
    );
    const perThousand = (cpu: number | undefined, i: IngestResult) =>
      cpu === undefined ? "-" : ((cpu * 1000) / i.transfers).toFixed(3);
    row(
      "CPU s per 1,000 NFT events: this process",
      perThousand(ingest.empty.processCpu, ingest.empty),
      perThousand(ingest.large.processCpu, ingest.large),
      times(ratio(ingest.large.processCpu, ingest.empty.processCpu)),
      "",
      undefined,
    );
    row(
      "CPU s per 1,000 NFT events: PostgreSQL",
      perThousand(ingest.empty.postgresCpu, ingest.empty),
      perThousand(ingest.large.postgresCpu, ingest.large),
      times(ratio(ingest.large.postgresCpu, ingest.empty.postgresCpu)),
      "",
      undefined,
    );
    row(
      "PostgreSQL pages read from outside its buffers (hit in them)",
      `${int(ingest.empty.pagesRead)} (${int(ingest.empty.pagesHit)})`,
      `${int(ingest.large.pagesRead)} (${int(ingest.large.pagesHit)})`,
      times(ratio(ingest.large.pagesRead, ingest.empty.pagesRead)),
      "",
      undefined,
    );
    row(
      "the machine's I/O wait meanwhile, core-seconds (every process)",
      ingest.empty.ioWait.toFixed(1),
      ingest.large.ioWait.toFixed(1),
      "",
      "",
      undefined,
    );
  }

  log("");
  log("| figure | small store | large store | large / small | target | verdict |");
  log("|---|---:|---:|---:|---|---|");
  for (const r of rows) log(`| ${r.join(" | ")} |`);
  if (machine) {
    log("");
    log(
      `Machine: ${machine.cores} cores, load average ${machine.load.map((x) => x.toFixed(2)).join(" ")} at the end; ` +
        `memory ${gib(machine.freeMemory)} free of ${gib(machine.totalMemory)}; disk ${gib(machine.diskFree)} free of ${gib(machine.diskTotal)}; ` +
        `PostgreSQL ${machine.postgres} (embedded), ${Object.entries(machine.settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(", ")}.`,
    );
  }
  log(misses === 0 ? "Every target met." : `${misses} target(s) not met.`);
}
