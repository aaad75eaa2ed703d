import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { answer, cachedSize, createResponseCache } from "../../src/api/response-cache.ts";
import { OwnerSchema } from "../../src/gen/mintlens/v1beta2/collections_pb.ts";

const owner = (n: number) =>
  answer(OwnerSchema, create(OwnerSchema, { address: `0x${"1".repeat(40)}`, ownedCount: BigInt(n) }));

test("an answer is read once per key; concurrent askers share the read; errors are not kept", async () => {
  const cache = createResponseCache(1 << 20);
  let reads = 0;
  const read = async () => {
    reads++;
    await new Promise((r) => setTimeout(r, 10));
    return owner(reads);
  };
  const [a, b] = await Promise.all([cache.get("v1|k", read), cache.get("v1|k", read)]);
  assert.equal(reads, 1);
  assert.equal(a, b);
  assert.equal(await cache.get("v1|k", read), a);
  assert.equal(a.json().toString(), `{"address":"0x${"1".repeat(40)}","ownedCount":"1"}`);
  // Another version of the data is another key.
  const c = await cache.get("v2|k", read);
  assert.equal(reads, 2);
  assert.notEqual(c, a);
  await assert.rejects(
    cache.get("v2|bad", async () => Promise.reject(new Error("boom"))),
    /boom/,
  );
  assert.equal((await cache.get("v2|bad", read)).json().toString().includes('"3"'), true);
});

test("the cache holds at most its bytes, each answer counted as the memory it holds, and 0 turns it off", async () => {
  const one = cachedSize("k10", owner(1));
  // An entry's overhead and its message count beside the JSON's 62 bytes.
  assert.ok(one > 2_048 + 62 * 2, `${one} bytes`);
  const small = createResponseCache(one * 10);
  let reads = 0;
  const read = async () => owner(++reads);
  for (let i = 0; i < 20; i++) await small.get(`k${i}`, read);
  await small.get("k19", read);
  assert.equal(reads, 20, "the newest answer is kept");
  await small.get("k0", read);
  assert.equal(reads, 21, "the oldest answers were let go");
  const off = createResponseCache(0);
  await off.get("k", read);
  await off.get("k", read);
  assert.equal(reads, 23);
});
