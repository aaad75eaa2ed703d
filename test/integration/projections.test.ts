import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createProjections, PROJECTED_TABLES } from "../../src/indexer/projections.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

/**
 * Every table of the schema is either derived by the indexer (a projection's, so written, undone
 * and compared by the crash and reorg tests) or named here as someone else's, with the reason.
 */
const NOT_DERIVED: Record<string, string> = {
  api_keys: "the API's users, managed from the command line",
  token_metadata: "documents fetched by the metadata worker (a rollback forgets those of unminted tokens)",
  schema_migrations: "the migrations applied",
  collection_traits: "string trait counts, kept by token_metadata's triggers with the documents",
  collection_numeric_traits: "numeric trait values, kept by token_metadata's triggers with the documents",
  collection_trait_totals:
    "documents per collection and when its ranks went stale, kept by the same triggers",
  token_rarity: "ranks the metadata worker works out again from the trait counts",
  spam_verdicts:
    "verdicts the spam job works out again from the store's facts, a cache rather than a projection",
  spam_overrides: "the operator's spam decisions, managed from the command line",
  spam_pending: "contracts the spam job is to judge again, queued from what the indexer and the worker wrote",
  spam_state: "the spam job's progress through the blocks and documents, and when overrides last changed",
  rate_limits:
    "API keys' points counted by the API processes when PostgreSQL is their shared rate limit store",
  stream_state:
    "how far stream retention pruned the outbox, and the highest block indexed before the latest rollback",
  webhooks: "the operator's webhook subscriptions, with how far the deliverer has sent each",
  webhook_deliveries: "the deliverer's log of attempts, pruned by age and count",
};

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.close();
  await stopTestServer();
});

test("every table is a projection's or named as someone else's: a new derived table cannot miss its inverse", async () => {
  const tables = (
    await db.sql<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
  ).map((r) => r.name);
  const projected = new Set(PROJECTED_TABLES.map((t) => t.name));
  const unowned = tables.filter((t) => !projected.has(t) && !(t in NOT_DERIVED));
  assert.deepEqual(unowned, [], "tables no projection writes and nobody else claims");
  for (const t of PROJECTED_TABLES)
    assert.ok(tables.includes(t.name), `${t.projection}'s table ${t.name} exists`);
  for (const name of Object.keys(NOT_DERIVED))
    assert.ok(!projected.has(name), `${name} is not also projected`);
});

test("each table belongs to one projection, names are unique, and the checkpoint is written last", () => {
  const owners = new Map<string, string>();
  for (const t of PROJECTED_TABLES) {
    assert.equal(
      owners.get(t.name),
      undefined,
      `${t.name} is written by ${owners.get(t.name)} and ${t.projection}`,
    );
    owners.set(t.name, t.projection);
  }
  const projections = createProjections({ rates: { nativePegged: [], pools: [], usdTokens: [] } });
  assert.equal(new Set(projections.map((p) => p.name)).size, projections.length, "names are unique");
  assert.equal(projections.at(-1)?.name, "checkpoint", "the checkpoint is written last");
});
