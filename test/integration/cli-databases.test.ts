/**
 * The commands with a database per chain: `migrate` migrates each configured database; `index`
 * writes each chain to its own; `serve` finds each chain where it is and reads its keys in the
 * default database; `spam` writes a chain's decisions where the chain is; and a mapping that
 * cannot be right is refused at start, naming the flag. The commands run in the test's own process.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { generateKey } from "../../src/api/keys.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { knownMigrations } from "../../src/store/pg/migrate.ts";
import { insertApiKey } from "../../src/store/tables/api-keys.ts";
import { runCommand, startCommand } from "../support/cli.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

/** The lines Mintlens itself prints on stderr (not the structured log lines). */
function messages(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.startsWith("mintlens:") || l.startsWith("  - "));
}

const CHAINS = [
  { name: "alpha", chainId: 911 },
  { name: "beta", chainId: 912 },
] as const;

describe("a database per chain", () => {
  let main: TestDatabase;
  let beta: TestDatabase;
  const anvils: Anvil[] = [];
  let dataDir: string;

  before(async () => {
    // Empty: `migrate` makes both.
    [main, beta] = await Promise.all([
      createTestDatabase({ migrations: 0 }),
      createTestDatabase({ migrations: 0 }),
    ]);
    for (const chain of CHAINS) anvils.push(await startAnvil({ chainId: chain.chainId }));
    dataDir = mkdtempSync(join(tmpdir(), "mintlens-databases-"));
  });
  after(async () => {
    for (const anvil of anvils) await anvil.stop();
    await main?.close();
    await beta?.close();
    await stopTestServer();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const databases = () => ["--database-url", main.url, "--database-url", `beta=${beta.url}`];
  const chainFlags = () =>
    CHAINS.flatMap((c, i) => [
      "--chain",
      `${c.name}=${anvils[i]?.url}`,
      "--chain-id",
      `${c.name}=${c.chainId}`,
    ]);
  const indexFlags = () => [
    ...chainFlags(),
    "--native-symbol",
    "ETH",
    "--confirmations",
    "0",
    "--rate-pools",
    "",
    "--usd-tokens",
    "",
    ...databases(),
    "--data-dir",
    dataDir,
  ];

  test("migrate migrates every configured database; index writes each chain to its own", async () => {
    const migrated = await runCommand(["migrate", ...databases()]);
    assert.equal(migrated.code, 0, migrated.stderr);
    const known = (await knownMigrations()).length;
    for (const db of [main, beta]) {
      const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM schema_migrations`;
      assert.equal(row?.n, known);
    }
    const indexed = await runCommand(["index", ...indexFlags(), "--stop-at", "0"]);
    assert.equal(indexed.code, 0, indexed.stderr);
    const names = async (db: TestDatabase) =>
      (await db.sql<{ name: string }[]>`SELECT name FROM chains ORDER BY name`).map((r) => r.name);
    assert.deepEqual(await names(main), ["alpha"]);
    assert.deepEqual(await names(beta), ["beta"]);
  });

  test("serve finds each chain in its database and checks keys in the default one", async () => {
    const k = generateKey();
    await insertApiKey(main.sql, { userName: "two", keyId: k.keyId, keyHash: k.hash });
    const serve = startCommand([
      "serve",
      ...databases(),
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
      const urls = await serve.restUrls(CHAINS.map((c) => c.name));
      for (const chain of CHAINS) {
        const ok = await fetch(`${urls.get(chain.name)}/foundational/v1beta2/contracts`, {
          headers: { "x-api-key": k.key },
        });
        assert.equal(ok.status, 200, chain.name);
        await ok.arrayBuffer();
      }
      assert.match(serve.stderr(), /^alpha \(chain 911\)/m);
      assert.match(serve.stderr(), /^beta \(chain 912\)/m);
    } finally {
      serve.stop();
      assert.equal(await serve.exited, 0, serve.stderr());
    }
  });

  test("metadata refresh finds its chain in the chain's own database", async () => {
    const contract = `0x${"cd".repeat(20)}`;
    const refreshed = await runCommand(["metadata", "refresh", contract, "--chain", "beta", ...databases()]);
    assert.equal(refreshed.code, 0, refreshed.stderr);
    assert.equal(refreshed.stdout, "queued 0 tokens\n");
    const elsewhere = await runCommand([
      "metadata",
      "refresh",
      contract,
      "--chain",
      "beta",
      "--database-url",
      main.url,
    ]);
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /chain beta is not in the store/);
  });

  test("spam decisions go to the database of their chain, and are listed from every one", async () => {
    const contract = `0x${"ab".repeat(20)}`;
    const marked = await runCommand(["spam", "mark", contract, "--chain", "beta", ...databases()]);
    assert.equal(marked.code, 0, marked.stderr);
    const count = async (db: TestDatabase) =>
      (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM spam_overrides`)[0]?.n;
    assert.equal(await count(beta), 1);
    assert.equal(await count(main), 0);
    const listed = await runCommand(["spam", "list", ...databases()]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^beta\\s+${contract}\\s+spam`, "m"));
  });

  test("start: the API reads from --read-database-url, keys included, while the indexers write to --database-url", async () => {
    // A database of its own stands for the replica: what the API answers shows where it reads.
    const replica = await createTestDatabase();
    try {
      const onReplica = generateKey();
      await insertApiKey(replica.sql, {
        userName: "replica",
        keyId: onReplica.keyId,
        keyHash: onReplica.hash,
      });
      const onPrimary = generateKey();
      await insertApiKey(main.sql, { userName: "primary", keyId: onPrimary.keyId, keyHash: onPrimary.hash });
      const start = startCommand([
        "start",
        ...indexFlags(),
        "--read-database-url",
        replica.url,
        "--rest-port",
        "0",
        "--grpc-port",
        "0",
        "--metrics-port",
        "off",
      ]);
      try {
        const urls = await start.restUrls(CHAINS.map((c) => c.name));
        const ask = async (chain: string, key: string) => {
          const response = await fetch(`${urls.get(chain)}/foundational/v1beta2/contracts`, {
            headers: { "x-api-key": key },
          });
          await response.arrayBuffer();
          return response.status;
        };
        // alpha is kept in the default database, so it is read from the default's replica; beta,
        // in a database of its own with no replica named, from its own.
        assert.equal(await ask("alpha", onReplica.key), 200);
        assert.equal(await ask("alpha", onPrimary.key), 401);
        assert.equal(await ask("beta", onReplica.key), 200);
        // Readiness too is judged by what the replica holds: nothing of alpha, which the primary has.
        const readiness = await fetch(`${urls.get("alpha")}/readyz`);
        assert.equal(readiness.status, 503);
        assert.match(await readiness.text(), /the chain is not in the store/);
        const [indexed] = await main.sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM chains WHERE name = 'alpha'`;
        assert.equal(indexed?.n, 1);
      } finally {
        start.stop();
        assert.equal(await start.exited, 0, start.stderr());
      }
      // The indexers wrote to the primary only.
      const [row] = await replica.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chains`;
      assert.equal(row?.n, 0);
    } finally {
      await replica.close();
    }
  });

  test("a mapping that cannot be right is refused at start, naming the flag", async () => {
    const cases: [string[], string][] = [
      [
        ["index", ...indexFlags(), "--database-url", `gamma=${beta.url}`],
        "database url: gamma is not a chain configured here (alpha, beta)",
      ],
      [
        ["index", ...indexFlags(), "--database-url", `beta=${main.url}`],
        "database url: beta is given two URLs",
      ],
      [
        [
          "start",
          ...indexFlags(),
          "--read-database-url",
          `gamma=${beta.url}`,
          "--rest-port",
          "0",
          "--grpc-port",
          "0",
        ],
        "read database url: gamma is not a chain indexed here (alpha, beta)",
      ],
      [
        [
          "start",
          ...chainFlags(),
          "--native-symbol",
          "ETH",
          "--read-database-url",
          main.url,
          "--data-dir",
          dataDir,
        ],
        "read database url: the default database is the embedded PostgreSQL, which has no replica; give --database-url",
      ],
      [
        ["serve", ...databases(), "--chain", "alpha", "--data-dir", dataDir],
        "database url: beta is not a chain served here (alpha)",
      ],
      [
        ["serve", "--database-url", main.url, "--database-url", `alpha=${beta.url}`, "--data-dir", dataDir],
        "chain: alpha is not in its database (--database-url alpha=…) (stored: beta); give --chain-id alpha=ID",
      ],
      [
        ["keys", "list", "--database-url", `beta=${beta.url}`],
        "database url: API keys are kept in the default database; give its URL without chain=",
      ],
    ];
    for (const [args, expected] of cases) {
      const result = await runCommand(args);
      assert.equal(result.code, 1, `${args[0]}: ${result.stderr}`);
      assert.ok(
        messages(result.stderr).some((line) => line.includes(expected)),
        `${args.join(" ")}\n expected: ${expected}\n got:\n${result.stderr}`,
      );
    }
  });
});
