import assert from "node:assert/strict";
import { createHash, timingSafeEqual } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { UnavailableError } from "../../src/api/errors.ts";
import { createGuard } from "../../src/api/guard.ts";
import { createKeyVerifier, DEFAULT_REFRESH_MS } from "../../src/api/key-verifier.ts";
import {
  generateKey,
  hashSecret,
  isValidUserName,
  KEY_LENGTH,
  type NewKey,
  parseKey,
  secretMatches,
} from "../../src/api/keys.ts";
import { connectDatabase } from "../../src/store/pg/database.ts";
import {
  insertApiKey,
  readApiKeyTable,
  replaceApiKey,
  revokeApiKey,
} from "../../src/store/tables/api-keys.ts";
import { runCommand } from "../support/cli.ts";
import { countingSql } from "../support/counting-sql.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const KEY_SHAPE = /^ml_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/;

after(() => stopTestServer());

/** Another key with the same id whose secret differs in its last character only. */
function withLastCharChanged(key: string): string {
  return key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
}

describe("API keys: format, hash and comparison", () => {
  test("a generated key is ml_, a 16-hex-digit id and 256 bits of base64url secret, and parses back", () => {
    const key = generateKey();
    assert.match(key.key, KEY_SHAPE);
    assert.equal(key.key.length, KEY_LENGTH);
    assert.equal(Buffer.from(key.secret, "base64url").length, 32);
    assert.deepEqual(parseKey(key.key), { keyId: key.keyId, secret: key.secret });
    assert.deepEqual(key.hash, createHash("sha256").update(key.secret).digest());
    const other = generateKey();
    assert.notEqual(other.keyId, key.keyId);
    assert.notEqual(other.secret, key.secret);
  });

  test("anything but a well-formed key is refused by the parser", () => {
    const { key } = generateKey();
    for (const bad of [
      "",
      key.slice(0, -1),
      `${key}A`,
      ` ${key}`,
      `mx_${key.slice(3)}`,
      `ml_${key.slice(3, 19).toUpperCase()}${key.slice(19)}`,
      `${key.slice(0, 19)}-${key.slice(20)}`,
      `${key.slice(0, -1)}=`,
      `${key.slice(0, -1)}+`,
      "x".repeat(100_000),
    ]) {
      assert.equal(parseKey(bad), undefined, JSON.stringify(bad.slice(0, 80)));
    }
  });

  test("the comparison accepts the secret, refuses any other, and never throws on a length", () => {
    const { secret, hash } = generateKey();
    assert.equal(secretMatches(secret, hash), true);
    assert.equal(secretMatches(withLastCharChanged(secret), hash), false);
    for (const other of ["", secret.slice(0, -1), `${secret}A`, secret.repeat(3)]) {
      assert.equal(secretMatches(other, hash), false);
    }
    // timingSafeEqual itself throws on unequal lengths; a stored value of a wrong length is refused instead.
    assert.throws(() => timingSafeEqual(hash.subarray(1), hash), RangeError);
    assert.equal(secretMatches(secret, hash.subarray(1)), false);
    assert.equal(secretMatches(secret, Buffer.concat([hash, Buffer.alloc(1)])), false);
  });

  test("user names: lowercase letters, digits, '.', '_', '-', starting with a letter or digit, at most 64", () => {
    for (const good of ["alice", "a", "0", "team-7.prod_reader", "a".repeat(64)]) {
      assert.equal(isValidUserName(good), true, good);
    }
    for (const bad of ["", "Alice", "-alice", ".alice", "a b", "a/b", "é", "a".repeat(65), "alice\n"]) {
      assert.equal(isValidUserName(bad), false, JSON.stringify(bad));
    }
  });
});

describe("API keys: the verifier against PostgreSQL", () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.close();
  });

  async function issue(userName: string): Promise<NewKey> {
    const key = generateKey();
    assert.deepEqual(await insertApiKey(db.sql, { userName, keyId: key.keyId, keyHash: key.hash }), {
      created: true,
    });
    return key;
  }

  async function rotate(userName: string): Promise<NewKey> {
    const key = generateKey();
    assert.equal(await replaceApiKey(db.sql, { userName, keyId: key.keyId, keyHash: key.hash }), true);
    return key;
  }

  /** A verifier with nothing cached: what the database says now. */
  const check = (presented: string | undefined) => createKeyVerifier({ sql: db.sql }).verify(presented);

  test("only the hash is stored", async () => {
    const key = await issue("stored");
    const row = (await readApiKeyTable(db.sql)).rows?.find((r) => r.keyId === key.keyId);
    assert.deepEqual(row?.keyHash, hashSecret(key.secret));
    const [text] = await db.sql<
      { row: string }[]
    >`SELECT api_keys::text AS row FROM api_keys WHERE user_name = 'stored'`;
    assert.ok(text && !text.row.includes(key.secret), text?.row);
  });

  test("a created key is accepted as its user; wrong, malformed, unknown and missing keys are refused", async () => {
    const alice = await issue("alice");
    const bob = await issue("bob");
    assert.deepEqual(await check(alice.key), { ok: true, userName: "alice", keyId: alice.keyId });
    assert.deepEqual(await check(bob.key), { ok: true, userName: "bob", keyId: bob.keyId });
    assert.deepEqual(await check(withLastCharChanged(alice.key)), { ok: false, reason: "mismatch" });
    // Alice's key id with Bob's secret: a secret is only good with its own id.
    assert.deepEqual(await check(`ml_${alice.keyId}_${bob.secret}`), { ok: false, reason: "mismatch" });
    assert.deepEqual(await check(`ml_${generateKey().keyId}_${alice.secret}`), {
      ok: false,
      reason: "unknown",
    });
    assert.deepEqual(await check(alice.key.slice(0, -1)), { ok: false, reason: "malformed" });
    assert.deepEqual(await check(`${alice.key}A`), { ok: false, reason: "malformed" });
    assert.deepEqual(await check(alice.key.toUpperCase()), { ok: false, reason: "malformed" });
    assert.deepEqual(await check(""), { ok: false, reason: "missing" });
    assert.deepEqual(await check(undefined), { ok: false, reason: "missing" });
  });

  test("a malformed key is refused without a query", async () => {
    const closed = await connectDatabase(db.url, { max: 1 });
    await closed.end();
    const verifier = createKeyVerifier({ sql: closed });
    assert.deepEqual(await verifier.verify("ml_nothing"), { ok: false, reason: "malformed" });
    assert.deepEqual(await verifier.verify("x".repeat(KEY_LENGTH)), { ok: false, reason: "malformed" });
    // The same verifier does read the table for a well-formed key, and that read fails.
    await assert.rejects(verifier.verify(generateKey().key));
  });

  test("a table that cannot be read at start makes a key check unavailable, never a wrong key", async () => {
    const down = countingSql(db.sql, "api_keys");
    down.failing = true;
    const guard = createGuard({ keys: createKeyVerifier({ sql: down.sql }), pointsPerSecond: 0 });
    const key = await issue("early");
    for (let i = 0; i < 5; i++) {
      await assert.rejects(guard.admit(key.key, "192.0.2.1"), (error) => error instanceof UnavailableError);
    }
    // The failed read is not tried again per request while the database is down.
    assert.equal(down.count(), 1);
  });

  test("rotation: the old key is refused and the new one accepted", async () => {
    const old = await issue("carol");
    const fresh = await rotate("carol");
    assert.deepEqual(await check(old.key), { ok: false, reason: "unknown" });
    assert.deepEqual(await check(fresh.key), { ok: true, userName: "carol", keyId: fresh.keyId });
  });

  test("revocation refuses the key; create does not re-enable the user, rotate does", async () => {
    const key = await issue("dave");
    const first = await revokeApiKey(db.sql, "dave");
    assert.equal(first?.already, false);
    assert.deepEqual(await check(key.key), { ok: false, reason: "revoked" });
    const again = await revokeApiKey(db.sql, "dave");
    assert.deepEqual(again, { revokedAt: first?.revokedAt, already: true });
    const retry = generateKey();
    const created = await insertApiKey(db.sql, { userName: "dave", keyId: retry.keyId, keyHash: retry.hash });
    assert.equal(created.created, false);
    assert.ok(!created.created && created.existing.revokedAt !== null);
    assert.deepEqual(await check(retry.key), { ok: false, reason: "unknown" });
    const fresh = await rotate("dave");
    assert.deepEqual(await check(fresh.key), { ok: true, userName: "dave", keyId: fresh.keyId });
    assert.deepEqual(await check(key.key), { ok: false, reason: "unknown" });
    assert.equal(await revokeApiKey(db.sql, "nobody"), undefined);
    assert.equal(
      await replaceApiKey(db.sql, { userName: "nobody", keyId: retry.keyId, keyHash: retry.hash }),
      false,
    );
  });

  test("unknown key ids, however many, are answered from memory without a query", async () => {
    const counted = countingSql(db.sql, "api_keys");
    const verifier = createKeyVerifier({ sql: counted.sql });
    const known = await issue("judy");
    assert.equal((await verifier.verify(known.key)).ok, true);
    const read = counted.count();
    assert.equal(read, 1, "one read of the whole table");
    for (let i = 0; i < 3_000; i++) {
      assert.deepEqual(await verifier.verify(generateKey().key), { ok: false, reason: "unknown" });
    }
    assert.equal((await verifier.verify(known.key)).ok, true, "a real key is never pushed out");
    // A few reads of the table may fall due while the keys are checked, never one per key.
    assert.ok(counted.count() - read <= 5, `${counted.count() - read} reads for 3,000 unknown keys`);
  });

  test("a revocation and a rotation take effect within 5 s; a new key within as long", async () => {
    const verifier = createKeyVerifier({ sql: db.sql });
    const erin = await issue("erin");
    const frank = await issue("frank");
    assert.equal((await verifier.verify(erin.key)).ok, true);
    assert.equal((await verifier.verify(frank.key)).ok, true);

    const changed = Date.now();
    await revokeApiKey(db.sql, "erin");
    const frankNew = await rotate("frank");
    const seen = { erin: 0, frank: 0, frankNew: 0 };
    while (Date.now() - changed < 6_000 && Object.values(seen).some((t) => t === 0)) {
      const elapsed = Date.now() - changed;
      if (seen.erin === 0 && !(await verifier.verify(erin.key)).ok) seen.erin = elapsed;
      if (seen.frank === 0 && !(await verifier.verify(frank.key)).ok) seen.frank = elapsed;
      if (seen.frankNew === 0 && (await verifier.verify(frankNew.key)).ok) seen.frankNew = elapsed;
      // A wrong secret is refused whatever the table's age.
      assert.equal((await verifier.verify(withLastCharChanged(frankNew.key))).ok, false);
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const [name, after] of Object.entries(seen)) {
      assert.ok(after > 0 && after < 5_000, `${name} took effect after ${after} ms`);
    }
    assert.deepEqual(await verifier.verify(erin.key), { ok: false, reason: "revoked" });
    assert.deepEqual(await verifier.verify(frank.key), { ok: false, reason: "unknown" });
    assert.ok(DEFAULT_REFRESH_MS * 2 < 5_000);
  });

  test("while the table cannot be read again, the last one answers up to the stale limit, and says so", async () => {
    let now = 1_000_000;
    const warnings: string[] = [];
    const logger = {
      warn: (_fields: unknown, message: string) => warnings.push(message),
      info: () => {},
    } as unknown as Parameters<typeof createKeyVerifier>[0]["logger"];
    const flaky = countingSql(db.sql, "api_keys");
    const verifier = createKeyVerifier({
      sql: flaky.sql,
      logger,
      refreshMs: 1_000,
      staleLimitMs: 10_000,
      now: () => now,
    });
    const kate = await issue("kate");
    assert.equal((await verifier.verify(kate.key)).ok, true);
    flaky.failing = true;
    now += 5_000;
    assert.equal((await verifier.verify(kate.key)).ok, true, "the last table, 5 s old");
    assert.match(warnings.join("\n"), /checking keys against the last one read/);
    const reads = flaky.count();
    assert.equal((await verifier.verify(kate.key)).ok, true);
    assert.equal(flaky.count(), reads, "no read is tried again within the refresh interval");
    now += 5_001;
    await assert.rejects(verifier.verify(kate.key));
    assert.match(warnings.at(-1) ?? "", /too old/);
    flaky.failing = false;
    now += 1_000;
    assert.equal((await verifier.verify(kate.key)).ok, true, "the table is read again");
  });

  test("the table's fingerprint: unchanged, no rows are sent; any change a key check reads, a new one", async () => {
    const first = await readApiKeyTable(db.sql);
    assert.ok(first.rows !== undefined);
    const same = await readApiKeyTable(db.sql, first.fingerprint);
    assert.deepEqual(same, { fingerprint: first.fingerprint, rows: undefined });
    const fingerprints = new Set([first.fingerprint]);
    const changes: [string, () => Promise<unknown>][] = [
      ["create", () => issue("leo")],
      ["revoke", () => revokeApiKey(db.sql, "leo")],
      ["rotate", () => rotate("leo")],
    ];
    let known = first.fingerprint;
    for (const [name, change] of changes) {
      await change();
      const read = await readApiKeyTable(db.sql, known);
      assert.ok(read.rows !== undefined, `${name} is seen`);
      assert.ok(!fingerprints.has(read.fingerprint), name);
      fingerprints.add(read.fingerprint);
      known = read.fingerprint;
      assert.deepEqual(read.rows, (await readApiKeyTable(db.sql)).rows);
    }
  });

  test("the table refuses what the CLI would refuse", async () => {
    const key = generateKey();
    await assert.rejects(insertApiKey(db.sql, { userName: "Bad Name", keyId: key.keyId, keyHash: key.hash }));
    await assert.rejects(
      insertApiKey(db.sql, { userName: "short-hash", keyId: key.keyId, keyHash: key.hash.subarray(1) }),
    );
    await assert.rejects(
      insertApiKey(db.sql, { userName: "long-id", keyId: `${key.keyId}0`, keyHash: key.hash }),
    );
  });
});

/** The lines of stderr that are the command's own messages, not structured logs. */
function message(stderr: string): string {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("mintlens:"))
    .join("\n");
}

describe("mintlens keys", () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db?.close();
  });

  const keys = (...args: string[]) => runCommand(["keys", ...args, "--database-url", db.url]);
  const check = (presented: string) => createKeyVerifier({ sql: db.sql }).verify(presented);
  const printed: string[] = [];

  test("create prints the key alone on stdout, once; a second create points to rotate", async () => {
    const created = await keys("create", "alice");
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^ml_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    const key = created.stdout.trim();
    printed.push(key);
    assert.deepEqual(await check(key), { ok: true, userName: "alice", keyId: parseKey(key)?.keyId });

    const again = await keys("create", "alice");
    assert.equal(again.code, 1);
    assert.equal(again.stdout, "");
    assert.equal(
      message(again.stderr),
      "mintlens: user alice already has an API key; `mintlens keys rotate alice` replaces it",
    );
    assert.equal((await check(key)).ok, true, "the first key still works");
  });

  test("rotate prints a new key; the old one stops working", async () => {
    const rotated = await keys("rotate", "alice");
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /^ml_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    const key = rotated.stdout.trim();
    const old = printed.at(-1) as string;
    printed.push(key);
    assert.notEqual(key, old);
    assert.equal((await check(key)).ok, true);
    assert.equal((await check(old)).ok, false);
  });

  test("revoke disables the key; create then refuses, rotate re-enables the user", async () => {
    const revoked = await keys("revoke", "alice");
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, "");
    assert.deepEqual(await check(printed.at(-1) as string), { ok: false, reason: "revoked" });

    const create = await keys("create", "alice");
    assert.equal(create.code, 1);
    assert.match(
      message(create.stderr),
      /^mintlens: the API key of user alice was revoked at \S+; `mintlens keys rotate alice` gives the user a new key$/,
    );

    const rotated = await keys("rotate", "alice");
    assert.equal(rotated.code, 0, rotated.stderr);
    const key = rotated.stdout.trim();
    printed.push(key);
    assert.equal((await check(key)).ok, true);
  });

  test("list shows users, key ids and times, and never a key or its hash", async () => {
    const bob = await keys("create", "bob");
    assert.equal(bob.code, 0, bob.stderr);
    printed.push(bob.stdout.trim());
    const listed = await keys("list");
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 3, listed.stdout);
    assert.match(lines[0] as string, /^USER +KEY ID +CREATED +ROTATED +REVOKED$/);
    const [, aliceLine, bobLine] = lines;
    const aliceId = parseKey(printed.at(-2) as string)?.keyId;
    const bobId = parseKey(printed.at(-1) as string)?.keyId;
    assert.match(aliceLine as string, new RegExp(`^alice +ml_${aliceId} +\\S+Z +\\S+Z +-$`));
    assert.match(bobLine as string, new RegExp(`^bob +ml_${bobId} +\\S+Z +- +-$`));

    const rows = await db.sql<{ key_hash: Buffer }[]>`SELECT key_hash FROM api_keys`;
    const output = listed.stdout + listed.stderr;
    for (const key of printed) {
      const secret = parseKey(key)?.secret as string;
      assert.ok(!output.includes(secret), "no secret in the listing");
    }
    for (const { key_hash } of rows) {
      for (const encoding of ["hex", "base64", "base64url"] as const) {
        assert.ok(!output.includes(key_hash.toString(encoding)), `no hash (${encoding}) in the listing`);
      }
    }
  });

  test("a bad user name is refused before the database is opened", async () => {
    const refused = await runCommand([
      "keys",
      "create",
      "Bad Name!",
      "--database-url",
      "postgres://127.0.0.1:9/none",
    ]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, "");
    assert.equal(
      message(refused.stderr),
      `mintlens: invalid user name "Bad Name!": use 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  });

  test("rotating or revoking an unknown user is one clear error", async () => {
    for (const command of ["rotate", "revoke"]) {
      const result = await keys(command, "nobody");
      assert.equal(result.code, 1, command);
      assert.equal(result.stdout, "");
      assert.equal(
        message(result.stderr),
        "mintlens: no API key for user nobody; `mintlens keys create nobody` creates one",
      );
    }
  });
});
