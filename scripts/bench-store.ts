/**
 * Store benchmark: what PostgreSQL alone spends on the rows of the ingestion benchmark, without
 * any node or chain. It writes 228,000 ERC-721 mints (3 collections, 40 holders, batches of
 * 10,000) into a fresh database with the indexer's own statements, and reports the wall time and
 * the CPU of the PostgreSQL backend doing it, for the transfer rows and for the ownership changes.
 * Usage: npm run bench:store [-- --rows 228000]
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { type Address, type Hex, ZERO_ADDRESS } from "../src/core/hex.ts";
import type { NftTransfer } from "../src/core/types.ts";
import { computeEffects } from "../src/indexer/effects.ts";
import { connectDatabase, type Queryable, type Sql } from "../src/store/pg/database.ts";
import { startEmbeddedPostgres } from "../src/store/pg/embedded.ts";
import { migrate } from "../src/store/pg/migrate.ts";
import { openWriteSession, type Statement } from "../src/store/pg/session.ts";
import { encodeOwnership, ownershipStatements } from "../src/store/tables/ownership.ts";
import { encodeNftTransfers, nftTransferStatements } from "../src/store/tables/transfers.ts";
import { processCpu } from "./bench/process-cpu.ts";

const { values: args } = parseArgs({ options: { rows: { type: "string", default: "228000" } } });
const ROWS = Number(args.rows);
const BATCH = 10_000;
const CHAIN_ID = 31337;

const say = (message: string) => process.stdout.write(`${message}\n`);
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, "0");
const collections = [1, 2, 3].map((i) => `0x${hex(i * 77_777, 40)}` as Address);
const holders = Array.from({ length: 40 }, (_, i) => `0x${hex(i * 99_991 + 5, 40)}` as Address);

function mint(i: number): NftTransfer {
  const blockNumber = 1 + Math.floor(i / 420);
  return {
    contract: collections[i % 3] as Address,
    tokenId: BigInt(Math.floor(i / 3)),
    from: ZERO_ADDRESS,
    to: holders[i % 40] as Address,
    amount: 1n,
    blockNumber,
    logIndex: i % 420,
    seq: 0,
    txHash: `0x${hex(i, 64)}` as Hex,
    txIndex: i % 420,
    standard: "erc721",
  };
}

type Part = "transfers" | "ownership";

async function measure(sql: Sql, parts: readonly Part[]): Promise<{ wall: number; cpu: number }> {
  // One connection, so that one backend does all the work and its CPU is the server's.
  const session = openWriteSession(sql);
  const pid = await session.transaction(async (tx) => {
    const [backend] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    return backend?.pid as number;
  });
  const timeOf = (block: number) => 1_700_000_000 + block * 12;
  const units = new Map<string, bigint>();
  let cpu = 0;
  let wall = 0;
  for (let start = 0; start < ROWS; start += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, ROWS - start) }, (_, i) => mint(start + i));
    const effects = computeEffects(batch, timeOf, (c, h) => units.get(c + h) ?? 0n);
    for (const h of effects.holders) units.set(h.contract + h.holder, h.units);
    const transfers = encodeNftTransfers(batch, timeOf);
    const ownership = encodeOwnership(effects);
    const build = (tx: Queryable): Statement[] => [
      ...(parts.includes("transfers") ? nftTransferStatements(tx, CHAIN_ID, transfers) : []),
      ...(parts.includes("ownership") ? ownershipStatements(tx, CHAIN_ID, ownership) : []),
    ];
    const cpuBefore = processCpu(pid);
    const started = performance.now();
    await session.pipelined(build);
    wall += (performance.now() - started) / 1000;
    cpu += processCpu(pid) - cpuBefore;
  }
  await session.end();
  return { wall, cpu };
}

async function main(): Promise<void> {
  const dir = resolve(".bench");
  mkdirSync(dir, { recursive: true });
  const embedded = await startEmbeddedPostgres({ dataDir: join(dir, "pg") });
  const admin = postgres(embedded.url, { max: 1, onnotice: () => {} });
  try {
    say(`${ROWS} ERC-721 mints in batches of ${BATCH}, each batch one transaction; PostgreSQL backend CPU:`);
    for (const parts of [["transfers"], ["ownership"], ["transfers", "ownership"]] as const) {
      await admin.unsafe("DROP DATABASE IF EXISTS mintlens_bench_store WITH (FORCE)");
      await admin.unsafe("CREATE DATABASE mintlens_bench_store");
      const url = new URL(embedded.url);
      url.pathname = "/mintlens_bench_store";
      await migrate(url.toString());
      const sql = await connectDatabase(url.toString(), { max: 1 });
      try {
        const { wall, cpu } = await measure(sql, parts);
        const label = parts.join(" + ");
        say(`  ${`${label}:`.padEnd(26)} ${wall.toFixed(2)} s wall, ${cpu.toFixed(2)} s CPU`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    }
  } finally {
    await admin.end();
    await embedded.stop();
  }
}

await main();
