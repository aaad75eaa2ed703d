/**
 * CryptoPunks public offers on anvil, indexed by the real indexer: after every step the lowest open
 * offer the store holds is the one the market contract itself holds (read from its storage), through
 * lower and higher offers, an offer to one address, a withdrawal, a purchase, a transfer and an
 * accepted bid; and a reorganisation restores the offers open at the fork.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Abi } from "viem";
import type { Address } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { loadArtifact } from "../../src/devchain/artifacts.ts";
import {
  connectDevChain,
  type DevChain,
  deployArtifact,
  devAddress,
  sendContractTx,
} from "../../src/devchain/deploy.ts";
import {
  lowestPunkOffer,
  lowestPunkOfferQuery,
  punkOfferStatements,
} from "../../src/store/tables/punk-offers.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { indexUntil } from "../support/indexing.ts";
import { runPlan } from "../support/plans.ts";

const CHAIN_ID = 31337;
const SUPPLY = 6;
const abi = loadArtifact("CryptoPunksMarket").abi as Abi;
const eth = (n: bigint) => n * 10n ** 18n;

let anvil: Anvil;
let chain: DevChain;
let db: TestDatabase;
let punks: Address;
const [owner, alice, bob, carol] = [devAddress(0), devAddress(1), devAddress(2), devAddress(3)];

async function send(from: Address, functionName: string, args: unknown[], value?: bigint): Promise<void> {
  await sendContractTx(chain, { address: punks, abi, functionName, args, from, ...(value ? { value } : {}) });
}

const head = async () => Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }));
const indexToHead = async () =>
  indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: await head() });

/** The lowest public offer the market's storage holds: the truth the index must follow. */
async function contractFloor(): Promise<bigint | undefined> {
  let floor: bigint | undefined;
  for (let i = 0n; i < BigInt(SUPPLY); i++) {
    const [isForSale, , , minValue, onlySellTo] = (await chain.publicClient.readContract({
      address: punks,
      abi,
      functionName: "punksOfferedForSale",
      args: [i],
    })) as [boolean, bigint, Address, bigint, Address];
    if (!isForSale || BigInt(onlySellTo) !== 0n) continue;
    if (floor === undefined || minValue < floor) floor = minValue;
  }
  return floor;
}

async function expectFloor(step: string, expected: bigint | undefined): Promise<void> {
  await indexToHead();
  assert.equal(await contractFloor(), expected, `${step}: the contract's floor`);
  assert.equal(await lowestPunkOffer(db.sql, CHAIN_ID, punks), expected, `${step}: the indexed floor`);
}

async function offerRows(): Promise<string[]> {
  const rows = await db.sql<{ r: string }[]>`
    SELECT concat_ws(' ', punk_index, block_number, log_index, coalesce(min_value::text, '-')) AS r
    FROM punk_offers WHERE chain_id = ${CHAIN_ID} ORDER BY punk_index, block_number, log_index`;
  return rows.map((r) => r.r);
}

/** Each row with the block of the row that replaced it, `open` for each punk's current row. */
async function offerRowsWithSuccessors(sql: TestDatabase["sql"]): Promise<string[]> {
  const rows = await sql<{ r: string }[]>`
    SELECT concat_ws(' ', punk_index, block_number, log_index, coalesce(min_value::text, '-'),
                     coalesce(superseded_block::text, 'open')) AS r
    FROM punk_offers WHERE chain_id = ${CHAIN_ID} ORDER BY punk_index, block_number, log_index`;
  return rows.map((r) => r.r);
}

before(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  chain = connectDevChain(anvil.url);
  db = await createTestDatabase();
  punks = (await deployArtifact(chain, "CryptoPunksMarket", [BigInt(SUPPLY)], { from: owner })).address;
  // Punks 0-1 to alice, 2-3 to bob, 4-5 to carol.
  await send(owner, "setInitialOwners", [
    [alice, alice, bob, bob, carol, carol],
    [0n, 1n, 2n, 3n, 4n, 5n],
  ]);
  await send(owner, "allInitialOwnersAssigned", []);
});

after(async () => {
  await db?.close();
  await anvil?.stop();
  await stopTestServer();
});

test("the indexed floor follows the market's open public offers step by step", async () => {
  await expectFloor("no offer yet", undefined);
  await send(alice, "offerPunkForSale", [0n, eth(5n)]);
  await expectFloor("one offer", eth(5n));
  await send(bob, "offerPunkForSale", [2n, eth(3n)]);
  await expectFloor("a lower offer", eth(3n));
  await send(carol, "offerPunkForSale", [4n, eth(9n)]);
  await expectFloor("a higher offer", eth(3n));
  await send(bob, "offerPunkForSale", [2n, eth(7n)]);
  await expectFloor("the lowest offer raised", eth(5n));
  await send(alice, "offerPunkForSaleToAddress", [0n, eth(1n), carol]);
  await expectFloor("an offer to one address replaces a public one", eth(7n));
  await send(bob, "punkNoLongerForSale", [2n]);
  await expectFloor("the lowest withdrawn", eth(9n));
  await send(alice, "offerPunkForSale", [1n, eth(2n)]);
  await expectFloor("another offer", eth(2n));
  await send(bob, "buyPunk", [1n], eth(2n));
  await expectFloor("the lowest bought", eth(9n));
  await send(carol, "transferPunk", [alice, 4n]);
  await expectFloor("the last one's punk given away", undefined);
  await send(carol, "offerPunkForSale", [5n, eth(4n)]);
  await send(alice, "enterBidForPunk", [5n], eth(1n));
  await expectFloor("an offer with a bid on the punk", eth(4n));
  // acceptBidForPunk clears the offer without logging PunkNoLongerForSale: the move ends it.
  await send(carol, "acceptBidForPunk", [5n, 0n]);
  await expectFloor("the punk sold to its bidder", undefined);
});

test("a reorganisation restores the offers open at the fork", async () => {
  await send(bob, "offerPunkForSale", [3n, eth(6n)]);
  await expectFloor("before the fork", eth(6n));
  const kept = await head();
  const rowsAtFork = await offerRows();
  const fork = await chain.publicClient.request({ method: "evm_snapshot" as never });
  await send(bob, "punkNoLongerForSale", [3n]);
  await send(alice, "offerPunkForSale", [0n, eth(1n)]);
  await expectFloor("on the orphaned branch", eth(1n));

  // A longer branch from the fork: the withdrawal and alice's offer never happened.
  await chain.publicClient.request({ method: "evm_revert" as never, params: [fork] as never });
  await send(alice, "offerPunkForSale", [4n, eth(8n)]);
  await chain.testClient.mine({ blocks: 3 });
  await expectFloor("on the new branch", eth(6n));
  const rows = await offerRows();
  assert.deepEqual(
    rows.filter((r) => Number(r.split(" ")[1]) <= kept),
    rowsAtFork,
    "the rows up to the fork are those indexed before it",
  );
  assert.deepEqual(
    rows.filter((r) => Number(r.split(" ")[1]) > kept).map((r) => `${r.split(" ")[0]} ${r.split(" ")[3]}`),
    [`4 ${eth(8n)}`],
    "after it, only the new branch's offer",
  );

  // The rows a rollback left are those indexing the surviving chain from scratch writes.
  const fresh = await createTestDatabase();
  try {
    await indexUntil({ sql: fresh.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: await head() });
    assert.deepEqual(
      await offerRowsWithSuccessors(db.sql),
      await offerRowsWithSuccessors(fresh.sql),
      "the rows a rollback left, with what replaced each, equal a fresh indexing's",
    );
  } finally {
    await fresh.close();
  }
});

test("the floor is one probe of the open offers, however long the offers' history", async () => {
  const contract = "0x00000000000000000000000000000000000c0ffe" as Address;
  const PUNKS = 5000;
  const ROUNDS = 6;
  for (let round = 0; round < ROUNDS; round++) {
    const rows = Array.from({ length: PUNKS }, (_, i) => ({
      contract,
      punkIndex: BigInt(i),
      // Every punk offered then withdrawn in turn; the last round leaves every other punk offered.
      minValue:
        round % 2 === 0 || (round === ROUNDS - 1 && i % 2 === 0)
          ? eth(BigInt(1 + ((i * 7919) % 1000)))
          : null,
      blockNumber: 1_000_000 + round,
      logIndex: i,
    }));
    await db.sql.begin(async (tx) => {
      for (const statement of punkOfferStatements(tx, CHAIN_ID, rows)) await statement;
    });
  }
  await db.sql`ANALYZE punk_offers`;
  const expected = await db.sql<{ floor: string }[]>`
    SELECT min(min_value)::text AS floor FROM (
      SELECT DISTINCT ON (punk_index) min_value FROM punk_offers
      WHERE chain_id = ${CHAIN_ID} AND contract = decode(${contract.slice(2)}, 'hex')
      ORDER BY punk_index, block_number DESC, log_index DESC) l`;
  assert.equal(await lowestPunkOffer(db.sql, CHAIN_ID, contract), BigInt(expected[0]?.floor ?? "-1"));
  const { all, shown } = await runPlan(db.sql, lowestPunkOfferQuery(db.sql, CHAIN_ID, contract));
  const scans = all.filter((n) => n["Relation Name"] === "punk_offers");
  assert.deepEqual(
    scans.map((n) => [n["Index Name"], n["Actual Rows"]]),
    [["punk_offers_open", 1]],
    `one row of the open offers' index: ${shown}`,
  );
});
