import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "../../src/core/hex.ts";
import type { EmittedShapes } from "../../src/indexer/decode/shapes.ts";
import { ContractRegistry, type InspectFn, RegistryResetError } from "../../src/indexer/registry.ts";
import { runInOrder } from "../../src/store/pg/session.ts";
import { storedContracts, upsertContractsStatements } from "../../src/store/tables/contracts.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";

const CHAIN_ID = 7;
const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const erc721: EmittedShapes = new Set(["erc721-transfer"]);

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.close();
  await stopTestServer();
});

function registryWith(inspect: InspectFn, capacity?: number): ContractRegistry {
  return new ContractRegistry((addresses) => storedContracts(db.sql, CHAIN_ID, addresses), inspect, capacity);
}

const asNft: InspectFn = async () => ({ types: ["TYPE_ERC721"], name: "N", symbol: "N", decimals: 0 });

describe("the contract registry", () => {
  test("an inspection started before a rollback's reset writes nothing back, and is made again after it", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const registry = registryWith(async (address, emitted) => {
      calls++;
      if (calls === 1) await gate;
      return asNft(address, emitted);
    });
    const stale = registry.ensure(new Map([[addr(1), erc721]]));
    while (calls === 0) await new Promise((resolve) => setImmediate(resolve));
    registry.reset();
    release();
    await assert.rejects(stale, RegistryResetError);
    assert.deepEqual(registry.size, { known: 0, pending: 0, inflight: 0 });

    const fresh = await registry.ensure(new Map([[addr(1), erc721]]));
    assert.equal(calls, 2);
    assert.deepEqual(fresh.pending, [addr(1)]);
    assert.deepEqual([...(fresh.typesOf(addr(1)) ?? [])], ["TYPE_ERC721"]);
  });

  test("a failed inspection leaves nothing behind: the next batch inspects the contract again", async () => {
    let calls = 0;
    const registry = registryWith(async (address, emitted) => {
      if (calls++ === 0) throw new Error("node unreachable");
      return asNft(address, emitted);
    });
    await assert.rejects(registry.ensure(new Map([[addr(2), erc721]])), /node unreachable/);
    assert.deepEqual(registry.size, { known: 0, pending: 0, inflight: 0 });
    const classified = await registry.ensure(new Map([[addr(2), erc721]]));
    assert.deepEqual(classified.pending, [addr(2)]);
  });

  test("memory is bounded: forgotten contracts are read back from the store, not inspected again", async () => {
    let calls = 0;
    const registry = registryWith(async (address, emitted) => {
      calls++;
      return asNft(address, emitted);
    }, 50);
    const addresses = Array.from({ length: 500 }, (_, i) => addr(1000 + i));
    for (let batch = 0; batch < 10; batch++) {
      const slice = addresses.slice(batch * 50, batch * 50 + 50);
      const classified = await registry.ensure(new Map(slice.map((a) => [a, erc721])));
      const taken = registry.takeRecords(classified.pending, () => ({
        txHash: `0x${"ab".repeat(32)}`,
        blockNumber: batch,
        time: 1_700_000_000,
        minter: addr(9),
      }));
      await runInOrder(upsertContractsStatements(db.sql, CHAIN_ID, taken.records));
      registry.markStored(taken);
      assert.ok(registry.size.known <= 50, `known ${registry.size.known}`);
      assert.equal(registry.size.pending, 0);
    }
    assert.equal(calls, 500);
    // The first ones were forgotten long ago: they come back from the store, with their types.
    const again = await registry.ensure(new Map(addresses.slice(0, 50).map((a) => [a, erc721])));
    assert.equal(calls, 500);
    assert.deepEqual(again.pending, []);
    assert.deepEqual([...(again.typesOf(addr(1000)) ?? [])], ["TYPE_ERC721"]);
  });
});
