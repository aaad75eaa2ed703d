/**
 * Scale benchmark: Mintlens on a mainnet-sized store against a small one, in the same run.
 *
 * `--build small|large|<transfers>` builds a store once, through the indexer's own writers, into
 * `.bench/scale-<transfers>/` (its own embedded PostgreSQL); a killed build continues where it
 * stopped. It is not a measurement: it lowers its own priority and takes no CPU lock.
 *
 * Without `--build`, it measures both stores (each must be built): every API operation uncached
 * under load, the rankings' share of each batch written on top of each store, and ingest into the
 * large store against an empty one; every measuring phase takes the CPU lock. It ends with one
 * table of every figure beside its target, and the machine's state.
 *
 * Usage: npm run bench:scale [-- --transfers 100000000 --small-transfers 1000000]
 *        npm run bench:scale -- --build large|small [--transfers n | --small-transfers n]
 * See docs/api.md ("At mainnet size") for every flag.
 */
import { setPriority } from "node:os";
import { parseArgs } from "node:util";
import { buildStore } from "./bench-scale/build.ts";
import { measureStores } from "./bench-scale/run.ts";
import { stopEverything } from "./bench-scale/running.ts";
import { scaleStore } from "./bench-scale/store.ts";

const { values: args } = parseArgs({
  options: {
    build: { type: "string" },
    transfers: { type: "string", default: "100000000" },
    "small-transfers": { type: "string", default: "1000000" },
    seed: { type: "string", default: "mintlens" },
    "batch-rows": { type: "string", default: "20000" },
    "rankings-batches": { type: "string", default: "300" },
    "ingest-transfers": { type: "string", default: "500000" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    requests: { type: "string", default: "20000" },
    connections: { type: "string", default: "32" },
    lock: { type: "string", default: "/tmp/mintlens-cpu.lock" },
    only: { type: "string", default: "api,rankings,ingest" },
    operations: { type: "string" },
  },
});

const positive = (name: string, value: string, allowZero = false): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || (n === 0 && !allowZero)) {
    throw new Error(`--${name} must be a ${allowZero ? "non-negative" : "positive"} integer, not ${value}`);
  }
  return n;
};
const LARGE = positive("transfers", args.transfers);
const SMALL = positive("small-transfers", args["small-transfers"]);
const CONTINUATION = {
  batches: positive("rankings-batches", args["rankings-batches"]),
  transfers: positive("ingest-transfers", args["ingest-transfers"], true),
};
const PHASES = args.only.split(",");
for (const phase of PHASES) {
  if (!["api", "rankings", "ingest"].includes(phase))
    throw new Error(`--only takes api, rankings and ingest, comma-separated, not ${phase}`);
}

const say = (message: string) => process.stdout.write(`${message}\n`);

async function main(): Promise<void> {
  if (args.build !== undefined) {
    const transfers =
      args.build === "large" ? LARGE : args.build === "small" ? SMALL : positive("build", args.build);
    // Tens of minutes to hours of work: other work on the machine goes first.
    setPriority(19);
    const store = scaleStore(transfers);
    say(`building ${store.dir} (${transfers.toLocaleString("en")} NFT transfers), at nice 19`);
    const meta = await buildStore(store, {
      transfers,
      seed: args.seed,
      batchRows: positive("batch-rows", args["batch-rows"]),
      continuation: CONTINUATION,
      log: say,
    });
    const sessions = meta.sessions;
    const seconds = sessions.reduce((sum, s) => sum + s.seconds, 0);
    const written = sessions.reduce((sum, s) => sum + s.transfers, 0);
    const rows = sessions.reduce((sum, s) => sum + s.inserted + s.updated + s.deleted, 0);
    say(
      `built: ${written.toLocaleString("en")} NFT transfers in ${(seconds / 60).toFixed(1)} min over ${sessions.length} session(s): ` +
        `${Math.round(written / seconds).toLocaleString("en")} transfers/s, ${Math.round(rows / seconds).toLocaleString("en")} row writes/s ` +
        `(${rows.toLocaleString("en")} rows inserted, updated or deleted); VACUUM ANALYZE ${meta.complete?.vacuumSeconds.toFixed(0)} s`,
    );
    return;
  }
  await measureStores({
    large: scaleStore(LARGE),
    small: scaleStore(SMALL),
    continuation: CONTINUATION,
    phases: PHASES,
    operations: args.operations === undefined ? undefined : new RegExp(args.operations, "i"),
    lock: args.lock === "none" ? undefined : args.lock,
    load: {
      duration: positive("duration", args.duration),
      warmup: positive("warmup", args.warmup, true),
      connections: positive("connections", args.connections),
      maxRequests: positive("requests", args.requests),
    },
    batchRows: positive("batch-rows", args["batch-rows"]),
    seed: args.seed,
    log: say,
  });
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping`);
    void stopEverything().finally(() =>
      process.exit(128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1)),
    );
  });
}

try {
  await main();
} finally {
  await stopEverything();
}
