import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConfigError, parseConfig, parseDatabaseConfig } from "../../src/config/config.ts";
import {
  checkReadUrls,
  type DatabaseUrls,
  databaseUrlOf,
  parseDatabaseUrls,
  readUrlOf,
  splitChainUrl,
} from "../../src/config/database-urls.ts";

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  assert.fail("expected a configuration error");
}

const chainName = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
const postgresUrl = fc
  .tuple(
    fc.constantFrom("postgres", "postgresql"),
    fc.stringMatching(/^[a-z0-9.-]{1,20}$/),
    fc.stringMatching(/^[a-z_]{1,12}$/),
    fc.option(fc.stringMatching(/^[a-z]{1,8}=[a-z0-9=]{0,8}$/), { nil: undefined }),
  )
  .map(([scheme, host, db, query]) => `${scheme}://u:p@${host}:5432/${db}${query ? `?${query}` : ""}`);

test("a URL alone is the default database, chain=url a chain's, whatever `=` the URL's query holds", () => {
  fc.assert(
    fc.property(chainName, postgresUrl, (chain, url) => {
      assert.deepEqual(splitChainUrl(url), { chain: undefined, url });
      assert.deepEqual(splitChainUrl(`${chain}=${url}`), { chain, url });
    }),
  );
});

test("each chain reads and writes where it is named, the others in the default database", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(chainName, { minLength: 1, maxLength: 5 }),
      fc.array(postgresUrl, { minLength: 6, maxLength: 6 }),
      fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
      (chains, urls, own) => {
        const values = [urls[5] as string, ...chains.flatMap((c, i) => (own[i] ? [`${c}=${urls[i]}`] : []))];
        const problems: string[] = [];
        const parsed = parseDatabaseUrls(values, undefined, "database url", problems);
        assert.deepEqual(problems, []);
        chains.forEach((chain, i) => {
          assert.equal(databaseUrlOf(parsed, chain), own[i] ? urls[i] : urls[5]);
        });
      },
    ),
  );
});

test("the environment's DATABASE_URL is the default unless a URL alone is given", () => {
  const problems: string[] = [];
  const env = "postgres://env/db";
  assert.equal(parseDatabaseUrls(["eth=postgres://a/b"], env, "database url", problems).default, env);
  assert.equal(
    parseDatabaseUrls(["postgres://flag/db"], env, "database url", problems).default,
    "postgres://flag/db",
  );
  assert.equal(parseDatabaseUrls(undefined, "", "database url", problems).default, undefined);
  assert.deepEqual(problems, []);
});

test("two URLs for one chain, two defaults and a URL that is not PostgreSQL's are refused, naming the flag", () => {
  const problems: string[] = [];
  parseDatabaseUrls(
    ["postgres://a/x", "postgres://b/x", "eth=postgres://c/x", "eth=postgres://d/x", "poly=mysql://e/x"],
    undefined,
    "database url",
    problems,
  );
  assert.deepEqual(problems, [
    "database url: two URLs without a chain; give one, and chain=url for the others",
    "database url: eth is given two URLs",
    "database url: poly: must be a postgres:// or postgresql:// URL",
  ]);
});

test("indexing: a database for a chain not configured is refused", () => {
  const found = problemsOf(() =>
    parseConfig(
      {
        chain: ["ethereum=https://eth.example"],
        databaseUrl: ["postgres://db/main", "polygon=postgres://db/polygon"],
      },
      {},
    ),
  );
  assert.deepEqual(found, ["database url: polygon is not a chain configured here (ethereum)"]);
  const config = parseConfig(
    {
      chain: ["ethereum=https://eth.example", "polygon=https://polygon.example"],
      databaseUrl: ["postgres://db/main", "polygon=postgres://db/polygon"],
    },
    {},
  );
  assert.equal(config.databaseUrl, "postgres://db/main");
  assert.deepEqual(config.chainDatabaseUrls, { polygon: "postgres://db/polygon" });
  assert.deepEqual(parseDatabaseConfig({ databaseUrl: "postgres://db/x" }, {}).chainDatabaseUrls, {});
});

test("replicas: the API reads each chain from its replica, else from the default's when the chain is there, else where it is written", () => {
  const written: DatabaseUrls = {
    default: "postgres://primary/main",
    chains: { polygon: "postgres://primary/polygon" },
  };
  const read: DatabaseUrls = { default: "postgres://replica/main", chains: {} };
  assert.equal(readUrlOf(read, written, "ethereum"), "postgres://replica/main");
  assert.equal(readUrlOf(read, written, "polygon"), "postgres://primary/polygon");
  const both: DatabaseUrls = { default: undefined, chains: { polygon: "postgres://replica/polygon" } };
  assert.equal(readUrlOf(both, written, "polygon"), "postgres://replica/polygon");
  assert.equal(readUrlOf(both, written, "ethereum"), "postgres://primary/main");
});

test("replicas: one for a chain not indexed here, or of the embedded PostgreSQL, is refused", () => {
  const problems: string[] = [];
  checkReadUrls(
    { default: undefined, chains: { base: "postgres://replica/base" } },
    { default: "postgres://primary/main", chains: {} },
    ["ethereum"],
    "read database url",
    problems,
  );
  checkReadUrls(
    { default: "postgres://replica/main", chains: { ethereum: "postgres://replica/eth" } },
    { default: undefined, chains: {} },
    ["ethereum"],
    "read database url",
    problems,
  );
  assert.deepEqual(problems, [
    "read database url: base is not a chain indexed here (ethereum)",
    "read database url: the default database is the embedded PostgreSQL, which has no replica; give --database-url",
    "read database url: ethereum's data is in the embedded PostgreSQL, which has no replica; give --database-url",
  ]);
});
