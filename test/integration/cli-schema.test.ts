/**
 * `mintlens migrate` is the one migrator: the other commands only read the schema's version and
 * refuse a database that is behind (or ahead) with one line saying what to do, so `serve` runs
 * with a role that may only connect and read, as on a read replica. The commands run in the
 * test's own process.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import postgres from "postgres";
import { generateKey } from "../../src/api/keys.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { knownMigrations } from "../../src/store/pg/migrate.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { runCommand, startCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";

const CHAIN_ID = 31337;

/** The lines Mintlens itself prints on stderr (not the structured log lines). */
function messages(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.startsWith("mintlens:"));
}

let dataDir: string;
before(() => {
  dataDir = mkdtempSync(join(tmpdir(), "mintlens-schema-"));
});
after(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await stopTestServer();
});

/** Every command but `migrate`, against a database given by URL. */
function commands(url: string): string[][] {
  const chain = [
    "--chain",
    "dev=http://127.0.0.1:9",
    "--chain-id",
    "dev=31337",
    "--native-symbol",
    "dev=ETH",
  ];
  const listeners = ["--rest-port", "0", "--grpc-port", "0", "--metrics-port", "off"];
  const common = ["--database-url", url, "--data-dir", dataDir];
  return [
    ["serve", ...listeners, ...common],
    ["start", ...chain, ...listeners, ...common],
    ["index", ...chain, ...common],
    ["metadata", ...chain, ...common],
    ["metadata", "refresh", `0x${"11".repeat(20)}`, "--chain", "dev", ...common],
    ["keys", "list", ...common],
  ];
}

describe("a database whose schema is not this version's", () => {
  let db: TestDatabase;
  let last: string;
  before(async () => {
    // Every migration but the last: a store the previous version left.
    const known = await knownMigrations();
    last = known.at(-1) ?? "";
    db = await createTestDatabase({ migrations: known.length - 1 });
  });
  after(async () => {
    await db?.close();
  });

  test("behind: every command refuses it with one line, exit code 1, until `mintlens migrate` applies the rest", async () => {
    for (const args of commands(db.url)) {
      const { code, stderr } = await runCommand(args);
      assert.equal(code, 1, `${args.slice(0, 2).join(" ")}:\n${stderr}`);
      assert.deepEqual(
        messages(stderr),
        [
          `mintlens: the database schema is older than this Mintlens (migration ${last} not applied): run \`mintlens migrate\` with the same database first`,
        ],
        args.slice(0, 2).join(" "),
      );
    }
    const migrated = await runCommand(["migrate", "--database-url", db.url]);
    assert.equal(migrated.code, 0, migrated.stderr);
    const applied = await db.sql<{ name: string }[]>`SELECT name FROM schema_migrations WHERE name = ${last}`;
    assert.equal(applied.length, 1, `migration ${last} applied`);
    const listed = await runCommand(["keys", "list", "--database-url", db.url]);
    assert.equal(listed.code, 0, listed.stderr);
  });

  test("ahead: a migration a newer Mintlens applied is named", async () => {
    await db.sql`INSERT INTO schema_migrations (name, run_on) VALUES ('9999_from_a_newer_mintlens', now())`;
    try {
      // A command that only reads, and one that would migrate an embedded server.
      for (const args of commands(db.url).filter((c) => c[0] === "serve" || c[0] === "index")) {
        const { code, stderr } = await runCommand(args);
        assert.equal(code, 1, `${args.slice(0, 2).join(" ")}:\n${stderr}`);
        assert.deepEqual(messages(stderr), [
          "mintlens: the database was migrated by a newer Mintlens (migration 9999_from_a_newer_mintlens unknown to this one): run that version, or a newer one",
        ]);
      }
    } finally {
      await db.sql`DELETE FROM schema_migrations WHERE name = '9999_from_a_newer_mintlens'`;
    }
  });

  test("empty: a database never migrated is told so", async () => {
    const empty = await createTestDatabase({ migrations: 0 });
    try {
      const { code, stderr } = await runCommand(["keys", "list", "--database-url", empty.url]);
      assert.equal(code, 1);
      assert.deepEqual(messages(stderr), [
        "mintlens: the database has no Mintlens schema yet: run `mintlens migrate` with the same database first",
      ]);
      const [tables] = await empty.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`;
      assert.equal(tables?.n, 0, "nothing was created");
    } finally {
      await empty.close();
    }
  });
});

describe("serve with a role that may only connect and read", () => {
  let anvil: Anvil;
  let db: TestDatabase;
  const role = `mintlens_reader_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let readerUrl: string;
  let key: string;
  before(async () => {
    const chain = await startHistoryChain({ chainId: CHAIN_ID, seed: "reader", days: 2, genesis: "recent" });
    anvil = chain.anvil;
    const { history } = chain;
    db = await createTestDatabase();
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: history.blocks.last });
    const k = generateKey();
    await insertApiKey(db.sql, { userName: "reader", keyId: k.keyId, keyHash: k.hash });
    key = k.key;
    const database = new URL(db.url).pathname.slice(1);
    await db.sql.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'reader'`);
    await db.sql.unsafe(`REVOKE ALL ON DATABASE ${database} FROM PUBLIC`);
    await db.sql.unsafe(`GRANT CONNECT ON DATABASE ${database} TO ${role}`);
    await db.sql.unsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    await db.sql.unsafe(`ALTER ROLE ${role} IN DATABASE ${database} SET default_transaction_read_only = on`);
    const url = new URL(db.url);
    url.username = role;
    url.password = "reader";
    readerUrl = url.toString();
  });
  after(async () => {
    await db?.sql.unsafe(`DROP OWNED BY ${role}`).catch(() => {});
    await db?.sql.unsafe(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await db?.close();
    await anvil?.stop();
  });

  test("the role can read and nothing more", async () => {
    const reader = postgres(readerUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await reader<{ n: number }[]>`SELECT count(*)::int AS n FROM contracts`;
      assert.ok((row?.n ?? 0) > 0);
      await assert.rejects(reader`DELETE FROM api_keys`, /read-only transaction/);
      // The role may turn that default off for its session; its grants still let it only read.
      await reader`SET default_transaction_read_only = off`;
      await assert.rejects(reader`DELETE FROM api_keys`, /permission denied for table api_keys/);
      await assert.rejects(reader`CREATE TABLE t (x int)`, /permission denied for schema public/);
    } finally {
      await reader.end();
    }
    const refused = await runCommand(["migrate", "--database-url", readerUrl]);
    assert.equal(refused.code, 1);
    assert.match(messages(refused.stderr)[0] ?? "", /^mintlens: database migration failed: /);
  });

  test("serve answers over REST: contracts, owners, details, rankings, series", async () => {
    const serve = startCommand([
      "serve",
      "--database-url",
      readerUrl,
      "--data-dir",
      dataDir,
      "--rest-port",
      "0",
      "--grpc-port",
      "0",
      "--metrics-port",
      "off",
    ]);
    try {
      const rest = (await serve.restUrls(["test"])).get("test");
      const get = async (path: string) => {
        const response = await fetch(`${rest}${path}`, { headers: { "x-api-key": key } });
        const text = await response.text();
        assert.equal(response.status, 200, `${path}: ${text}`);
        return JSON.parse(text) as Record<string, unknown>;
      };
      const { contracts } = (await get("/foundational/v1beta2/contracts?limit=500")) as {
        contracts: { address: string; types: string[] }[];
      };
      const collection = contracts.find((c) => c.types.includes("TYPE_ERC721"))?.address;
      assert.ok(collection, "an ERC-721 is listed");
      const { owner } = (await get(`/collections/v1beta2/${collection}/owners_list?limit=3`)) as {
        owner: unknown[];
      };
      assert.ok(owner.length > 0);
      const [minted] = await db.sql<{ id: string }[]>`
        SELECT token_id::text AS id FROM tokens WHERE contract = ${Buffer.from(collection.slice(2), "hex")} LIMIT 1`;
      await get(`/foundational/v1beta2/nfts/${collection}/${minted?.id}/details`);
      await get("/collections/v1beta2/top/METRIC_SALES_QUANTITY/DURATION_30_DAYS?limit=5");
      await get(`/collections/v1beta2/${collection}/supply/DURATION_30_DAYS/GROUP_BY_PERIOD_1_DAY`);
    } finally {
      serve.stop();
    }
    assert.equal(await serve.exited, 0, serve.stderr().slice(-2000));
  });
});
