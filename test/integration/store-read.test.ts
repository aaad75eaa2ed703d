import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPublicClient, http, parseAbiItem } from "viem";
import { BURN_ADDRESSES, isBurnAddress } from "../../src/core/burn.ts";
import type { Address } from "../../src/core/hex.ts";
import { saleClass } from "../../src/core/sale-classes.ts";
import type { ContractType } from "../../src/core/types.ts";
import type { HistorySummary } from "../../src/demo/activity.ts";
import type { DemoContractKey } from "../../src/demo/contracts.ts";
import type { Anvil } from "../../src/devchain/anvil.ts";
import { storedWindowEnd } from "../../src/rollups/rankings.ts";
import { RANKING_WINDOWS, windowEndAt } from "../../src/rollups/windows.ts";
import { type ContractListing, type ContractQuery, listContracts } from "../../src/store/read/contracts.ts";
import { nftDetails } from "../../src/store/read/nft.ts";
import { listOwners, type Owner } from "../../src/store/read/owners.ts";
import { collectionSeries, type SeriesPoint } from "../../src/store/read/series.ts";
import { type Ranked, type RankingMetric, topCollections } from "../../src/store/read/top.ts";
import { createTestDatabase, stopTestServer, type TestDatabase } from "../support/database.ts";
import { startHistoryChain } from "../support/histories.ts";
import { indexUntil } from "../support/indexing.ts";

const CHAIN_ID = 31337;
const NFT_TYPES: ContractType[] = ["TYPE_ERC721", "TYPE_ERC1155", "TYPE_ERC721_LEGACY", "TYPE_CRYPTOPUNKS"];

let anvil: Anvil;
let db: TestDatabase;
let history: HistorySummary;
let client: ReturnType<typeof createPublicClient>;

const all: ContractQuery = { limit: 10_000, offset: 0, direction: "asc", types: [], mintedAfter: undefined };

/** Every page of `size` from the first, until a short page. */
async function pages<T>(size: number, read: (offset: number) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let offset = 0; ; offset += size) {
    const page = await read(offset);
    assert.ok(page.length <= size);
    rows.push(...page);
    if (page.length < size) return rows;
  }
}

describe("reading the store for the API", () => {
  before(async () => {
    ({ anvil, history } = await startHistoryChain({
      chainId: CHAIN_ID,
      seed: "read",
      days: 30,
      genesis: "recent",
    }));
    client = createPublicClient({ transport: http(anvil.url) });
    db = await createTestDatabase();
    await indexUntil({ sql: db.sql, rpcUrl: anvil.url, chainId: CHAIN_ID, untilBlock: history.blocks.last });
  });
  after(async () => {
    await db?.close();
    await anvil?.stop();
    await stopTestServer();
  });

  test("contracts: each NFT collection the chain deployed, with the transaction, sender and block time of its creation", async () => {
    const listed = await listContracts(db.sql, CHAIN_ID, { ...all, types: NFT_TYPES });
    const byAddress = new Map(listed.map((c) => [c.address, c]));
    const expected: Partial<Record<DemoContractKey, ContractType>> = {
      erc721: "TYPE_ERC721",
      erc721Create2: "TYPE_ERC721",
      erc721Create: "TYPE_ERC721",
      erc721Consecutive: "TYPE_ERC721",
      erc1155: "TYPE_ERC1155",
      legacyErc721: "TYPE_ERC721_LEGACY",
      punks: "TYPE_CRYPTOPUNKS",
      paidMint: "TYPE_ERC721",
    };
    for (const [key, type] of Object.entries(expected) as [DemoContractKey, ContractType][]) {
      const deployed = history.contracts[key];
      const found = byAddress.get(deployed.address);
      assert.ok(found, `${key} is listed`);
      assert.ok(found.types.includes(type), `${key} is ${type}: ${found.types}`);
      assert.equal(found.mintEvent.txHash, deployed.txHash, `${key}'s creating transaction`);
      const tx = await client.getTransaction({ hash: deployed.txHash });
      assert.equal(found.mintEvent.minter, tx.from.toLowerCase(), `${key}'s minter sent that transaction`);
      const block = await client.getBlock({ blockNumber: BigInt(deployed.blockNumber) });
      assert.equal(
        found.mintEvent.blockTime?.getTime(),
        Number(block.timestamp) * 1000,
        `${key}'s mint time`,
      );
    }
    // The wrapped coin and the stablecoin are contracts of the chain, not NFT collections.
    assert.ok(!byAddress.has(history.contracts.weth.address));
    const punks = await listContracts(db.sql, CHAIN_ID, { ...all, types: ["TYPE_CRYPTOPUNKS"] });
    assert.deepEqual(
      punks.map((c) => c.address),
      [history.contracts.punks.address],
    );
  });

  test("contracts: in mint order, paged without repeats or gaps, DESC the exact reverse of ASC", async () => {
    const everything = await listContracts(db.sql, CHAIN_ID, all);
    assert.ok(everything.length >= 8);
    const time = (c: ContractListing) => c.mintEvent.blockTime?.getTime() ?? Number.POSITIVE_INFINITY;
    for (let i = 1; i < everything.length; i++) {
      const [a, b] = [everything[i - 1] as ContractListing, everything[i] as ContractListing];
      assert.ok(time(a) < time(b) || (time(a) === time(b) && a.address < b.address), `order at ${i}`);
    }
    for (const size of [1, 3, 7]) {
      const paged = await pages(size, (offset) =>
        listContracts(db.sql, CHAIN_ID, { ...all, limit: size, offset }),
      );
      assert.deepEqual(paged, everything, `pages of ${size}`);
    }
    const descending = await pages(4, (offset) =>
      listContracts(db.sql, CHAIN_ID, { ...all, direction: "desc", limit: 4, offset }),
    );
    assert.deepEqual(descending, [...everything].reverse());
  });

  test("contracts: blockTimestampGt keeps only contracts minted strictly after it", async () => {
    const everything = await listContracts(db.sql, CHAIN_ID, all);
    const middle = everything[Math.floor(everything.length / 2)] as ContractListing;
    const at = middle.mintEvent.blockTime as Date;
    const after = await listContracts(db.sql, CHAIN_ID, { ...all, mintedAfter: at });
    assert.deepEqual(
      after,
      everything.filter((c) => (c.mintEvent.blockTime?.getTime() ?? 0) > at.getTime()),
    );
    assert.ok(
      !after.some((c) => c.address === middle.address),
      "a contract minted at that instant is left out",
    );
    assert.ok(after.length > 0 && after.length < everything.length);
  });

  test("owners: the collection's holders by units, paged without repeats or gaps, ASC the exact reverse of DESC", async () => {
    for (const key of ["erc721", "erc1155", "punks"] as const) {
      const contract = history.contracts[key].address;
      const rows = await db.sql<{ holder: Uint8Array; units: string }[]>`
        SELECT holder, units FROM collection_holders
        WHERE chain_id = ${CHAIN_ID} AND contract = ${Buffer.from(contract.slice(2), "hex")}`;
      const expected: Owner[] = rows
        .map((r) => ({
          address: `0x${Buffer.from(r.holder).toString("hex")}` as Address,
          units: BigInt(r.units),
        }))
        .sort((a, b) =>
          a.units === b.units ? (a.address < b.address ? -1 : 1) : a.units > b.units ? -1 : 1,
        );
      assert.ok(expected.length > 3, `${key} has holders`);
      assert.ok(
        expected.every((o) => o.units > 0n),
        "only holders with units",
      );
      const desc = await listOwners(db.sql, CHAIN_ID, contract, { limit: 500, offset: 0, direction: "desc" });
      assert.deepEqual(desc, expected, key);
      const paged = await pages(2, (offset) =>
        listOwners(db.sql, CHAIN_ID, contract, { limit: 2, offset, direction: "desc" }),
      );
      assert.deepEqual(paged, expected, `${key} in pages`);
      const asc = await listOwners(db.sql, CHAIN_ID, contract, { limit: 500, offset: 0, direction: "asc" });
      assert.deepEqual(asc, [...expected].reverse(), `${key} ascending`);
      const top = await listOwners(db.sql, CHAIN_ID, contract, { limit: 1, offset: 0, direction: "desc" });
      assert.deepEqual(top, expected.slice(0, 1));
    }
  });

  test("owners: a collection nobody holds, or no contract at all, has none", async () => {
    const nobody = "0x00000000000000000000000000000000000000ab" as Address;
    assert.deepEqual(
      await listOwners(db.sql, CHAIN_ID, nobody, { limit: 500, offset: 0, direction: "desc" }),
      [],
    );
    assert.deepEqual(
      await listOwners(db.sql, CHAIN_ID, history.contracts.weth.address, {
        limit: 500,
        offset: 0,
        direction: "asc",
      }),
      [],
    );
  });

  test("series: supply, holders and sales per period match a replay of the stored transfers and sales", async () => {
    const DAY = 86_400;
    const first = await client.getBlock({ blockNumber: 1n });
    const firstDay = Number(first.timestamp) - (Number(first.timestamp) % DAY);
    const grids = [
      // The whole history and a few days past its end, which carry today's holders.
      { start: firstDay, periodSeconds: DAY, points: 36 },
      // Ten days in the middle: holders at each end come from the changes after the window.
      { start: firstDay + 8 * DAY, periodSeconds: DAY, points: 10 },
      { start: firstDay + 12 * DAY, periodSeconds: 3600, points: 72 },
      { start: firstDay + 15 * DAY, periodSeconds: 900, points: 96 },
    ];
    const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}` as Address;
    for (const key of ["erc721", "erc1155", "punks", "paidMint"] as const) {
      const contract = history.contracts[key].address;
      const bytes = Buffer.from(contract.slice(2), "hex");
      const transfers = await db.sql<{ from: Uint8Array; to: Uint8Array; amount: string; time: Date }[]>`
        SELECT from_address AS from, to_address AS to, amount, block_time AS time FROM nft_transfers
        WHERE chain_id = ${CHAIN_ID} AND contract = ${bytes} ORDER BY block_number, log_index, seq`;
      const sales = await db.sql<{ quantity: string; total: string; time: Date; flags: string[] }[]>`
        SELECT quantity, total_native AS total, block_time AS time, flags FROM sales
        WHERE chain_id = ${CHAIN_ID} AND contract = ${bytes} AND kind = 'sale'`;
      assert.ok(transfers.length > 3, `${key} moved`);
      for (const [grid, includeFlagged] of grids.flatMap((g) => [[g, false] as const, [g, true] as const])) {
        const at = (i: number) => (grid.start + i * grid.periodSeconds) * 1000;
        const units = new Map<Address, bigint>();
        const apply = (t: (typeof transfers)[number], point?: SeriesPoint) => {
          const amount = BigInt(t.amount);
          if (isBurnAddress(hex(t.from))) {
            if (point) point.minted += amount;
          } else units.set(hex(t.from), (units.get(hex(t.from)) ?? 0n) - amount);
          if (isBurnAddress(hex(t.to))) {
            if (point) point.burned += amount;
          } else units.set(hex(t.to), (units.get(hex(t.to)) ?? 0n) + amount);
        };
        let next = 0;
        for (; next < transfers.length && (transfers[next]?.time.getTime() ?? 0) < at(0); next++) {
          apply(transfers[next] as (typeof transfers)[number]);
        }
        const expected: SeriesPoint[] = [];
        for (let i = 0; i < grid.points; i++) {
          const point: SeriesPoint = {
            start: new Date(at(i)),
            minted: 0n,
            burned: 0n,
            holders: 0n,
            sales: 0n,
            units: 0n,
            volume: 0n,
            minUnitPrice: 0n,
            maxUnitPrice: 0n,
            flaggedSales: 0n,
            flaggedUnits: 0n,
            flaggedVolume: 0n,
            unpricedSales: 0n,
            unpricedUnits: 0n,
          };
          for (; next < transfers.length && (transfers[next]?.time.getTime() ?? 0) < at(i + 1); next++) {
            apply(transfers[next] as (typeof transfers)[number], point);
          }
          point.holders = BigInt([...units.values()].filter((u) => u > 0n).length);
          for (const sale of sales) {
            const time = sale.time.getTime();
            if (time < at(i) || time >= at(i + 1)) continue;
            const [quantity, total] = [BigInt(sale.quantity), BigInt(sale.total)];
            const kind = saleClass(sale.flags);
            if (kind === "unpriced") {
              point.unpricedSales += 1n;
              point.unpricedUnits += quantity;
              continue;
            }
            if (kind === "flagged") {
              point.flaggedSales += 1n;
              point.flaggedUnits += quantity;
              point.flaggedVolume += total;
              if (!includeFlagged) continue;
            }
            const unit = total / quantity;
            point.minUnitPrice = point.sales === 0n || unit < point.minUnitPrice ? unit : point.minUnitPrice;
            point.maxUnitPrice = unit > point.maxUnitPrice ? unit : point.maxUnitPrice;
            point.sales += 1n;
            point.units += quantity;
            point.volume += total;
          }
          expected.push(point);
        }
        const series = await collectionSeries(db.sql, CHAIN_ID, contract, {
          start: new Date(grid.start * 1000),
          periodSeconds: grid.periodSeconds,
          points: grid.points,
          includeFlagged,
        });
        assert.deepEqual(series, expected, `${key} on ${JSON.stringify(grid)}, flagged ${includeFlagged}`);
      }
      if (key === "erc721" || key === "punks") {
        const whole = await collectionSeries(db.sql, CHAIN_ID, contract, {
          start: new Date(firstDay * 1000),
          periodSeconds: DAY,
          points: 36,
        });
        assert.ok(
          whole.some((p) => p.sales > 0n),
          `${key} has sales`,
        );
      }
    }
  });

  test("series: a collection with no activity has every period, all zero", async () => {
    const start = new Date(Date.UTC(2026, 0, 1));
    const series = await collectionSeries(db.sql, CHAIN_ID, "0x00000000000000000000000000000000000000ab", {
      start,
      periodSeconds: 3600,
      points: 24,
    });
    assert.equal(series.length, 24);
    series.forEach((p, i) => {
      assert.equal(p.start.getTime(), start.getTime() + i * 3_600_000);
      assert.deepEqual(
        [p.minted, p.burned, p.holders, p.sales, p.units, p.volume, p.minUnitPrice, p.maxUnitPrice],
        [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n],
      );
    });
  });

  test("days: each collection's day row is the sum of that day's buckets, kept batch by batch", async () => {
    type Sums = bigint[];
    interface Day {
      sums: Sums;
      lo: (bigint | undefined)[];
      hi: (bigint | undefined)[];
    }
    const read = async (table: "collection_days" | "collection_buckets", time: "day" | "bucket_start") => {
      const rows = await db.sql.unsafe<
        { c: string; t: string; sums: string[]; lo: (string | null)[]; hi: (string | null)[] }[]
      >(`
        SELECT encode(contract, 'hex') AS c, extract(epoch FROM ${time})::bigint::text AS t,
               ARRAY[minted::text, burned::text, holders_delta::text, transfers::text, sales::text,
                     sold_units::text, volume::text, flagged_sales::text, flagged_units::text,
                     flagged_volume::text, unpriced_sales::text, unpriced_units::text] AS sums,
               ARRAY[coalesce(min_unit_price::text, ''), coalesce(flagged_min_unit_price::text, '')] AS lo,
               ARRAY[coalesce(max_unit_price::text, ''), coalesce(flagged_max_unit_price::text, '')] AS hi
        FROM ${table} WHERE chain_id = ${CHAIN_ID}`);
      // An array element that is NULL is read as '': no sale of the class.
      const big = (v: string | null) => (v === null || v === "" ? undefined : BigInt(v));
      return rows.map((r) => ({
        key: `${r.c}:${Number(r.t) - (Number(r.t) % 86_400)}`,
        day: { sums: r.sums.map(BigInt), lo: r.lo.map(big), hi: r.hi.map(big) },
      }));
    };
    const expected = new Map<string, Day>();
    for (const { key, day } of await read("collection_buckets", "bucket_start")) {
      const sum = expected.get(key);
      if (!sum) {
        expected.set(key, day);
        continue;
      }
      sum.sums = sum.sums.map((v, i) => v + (day.sums[i] as bigint));
      sum.lo = sum.lo.map((v, i) => {
        const w = day.lo[i];
        return w !== undefined && (v === undefined || w < v) ? w : v;
      });
      sum.hi = sum.hi.map((v, i) => {
        const w = day.hi[i];
        return w !== undefined && (v === undefined || w > v) ? w : v;
      });
    }
    const days = new Map((await read("collection_days", "day")).map(({ key, day }) => [key, day]));
    assert.ok(expected.size > 20, "the history spans many collection days");
    assert.deepEqual(days, expected);
  });

  test("top collections: every ranked window, moved batch by batch while indexing, holds the stored sales, highest first, in pages", async () => {
    const end = await storedWindowEnd(db.sql, CHAIN_ID);
    const last = await client.getBlock({ blockNumber: BigInt(history.blocks.last) });
    assert.equal(end, windowEndAt(Number(last.timestamp)), "the windows end after the newest indexed block");
    const sales = await db.sql<{ c: string; quantity: string; total: string; time: Date; flags: string[] }[]>`
      SELECT encode(contract, 'hex') AS c, quantity, total_native AS total, block_time AS time, flags FROM sales
      WHERE chain_id = ${CHAIN_ID} AND kind = 'sale'`;
    const names = new Map(
      (
        await db.sql<{ c: string; name: string }[]>`
          SELECT encode(address, 'hex') AS c, name FROM contracts WHERE chain_id = ${CHAIN_ID}`
      ).map((r) => [r.c, r.name]),
    );
    let ranked = 0;
    for (const [seconds, includeFlagged] of RANKING_WINDOWS.flatMap((w) => [
      [w, false] as const,
      [w, true] as const,
    ])) {
      const [from, to] = [(end as number) - seconds, end as number];
      const sums = new Map<string, Omit<Ranked, "rankValue">>();
      for (const s of sales) {
        const t = s.time.getTime() / 1000;
        if (t < from || t >= to) continue;
        const r = sums.get(s.c) ?? {
          contract: `0x${s.c}` as Address,
          name: names.get(s.c) ?? "",
          sales: 0n,
          units: 0n,
          volume: 0n,
          maxUnitPrice: 0n,
          flaggedSales: 0n,
          flaggedVolume: 0n,
          unpricedSales: 0n,
        };
        sums.set(s.c, r);
        const [quantity, total] = [BigInt(s.quantity), BigInt(s.total)];
        const kind = saleClass(s.flags);
        if (kind === "unpriced") {
          r.unpricedSales += 1n;
          continue;
        }
        if (kind === "flagged") {
          r.flaggedSales += 1n;
          r.flaggedVolume += total;
          if (!includeFlagged) continue;
        }
        r.sales += 1n;
        r.units += quantity;
        r.volume += total;
        if (total / quantity > r.maxUnitPrice) r.maxUnitPrice = total / quantity;
        sums.set(s.c, r);
      }
      // A collection is ranked only with sales of the figures ranked.
      for (const [c, r] of sums) if (r.sales === 0n) sums.delete(c);
      ranked += sums.size;
      const value: Record<RankingMetric, (r: Omit<Ranked, "rankValue">) => bigint> = {
        volume: (r) => r.volume,
        sales: (r) => r.sales,
        maxPrice: (r) => r.maxUnitPrice,
        avgPrice: (r) => (r.volume * 10n ** 30n) / r.units,
      };
      for (const metric of Object.keys(value) as RankingMetric[]) {
        const expected = [...sums.values()].sort((a, b) => {
          const [x, y] = [value[metric](a), value[metric](b)];
          return x === y ? (a.contract < b.contract ? -1 : 1) : x > y ? -1 : 1;
        });
        const window = { windowSeconds: seconds, metric, includeFlagged };
        const plain = ({ rankValue: _, ...r }: Ranked) => r;
        const got = await topCollections(db.sql, CHAIN_ID, { ...window, limit: 500, offset: 0 });
        assert.deepEqual(got.map(plain), expected, `${metric} over the last ${seconds} s`);
        const paged = await pages(2, (offset) =>
          topCollections(db.sql, CHAIN_ID, { ...window, limit: 2, offset }),
        );
        assert.deepEqual(paged.map(plain), expected, `${metric} in pages`);
        // Going on after each page's last row, as a page token does, walks the same list.
        const walked: Ranked[] = [];
        for (let after: Ranked | undefined; ; ) {
          const page = await topCollections(db.sql, CHAIN_ID, {
            ...window,
            limit: 2,
            offset: 0,
            after: after && { value: after.rankValue, contract: after.contract },
          });
          walked.push(...page);
          after = page.at(-1);
          if (page.length < 2) break;
        }
        assert.deepEqual(walked.map(plain), expected, `${metric} walked after each page's last row`);
      }
    }
    assert.ok(ranked >= 6, "the windows hold sales of several collections");
  });

  test("NFT details: the mint the chain logged, the owner it reports, and the latest stored sale with its payments", async () => {
    const contract = history.contracts.erc721.address;
    const bytes = Buffer.from(contract.slice(2), "hex");
    // The token sold most often, so that its latest sale is one of several.
    const [top] = await db.sql<{ token_id: string }[]>`
      SELECT token_id::text FROM sales WHERE chain_id = ${CHAIN_ID} AND contract = ${bytes} AND kind = 'sale'
      GROUP BY token_id ORDER BY count(*) DESC, token_id LIMIT 1`;
    assert.ok(top, "a token of the collection was sold");
    const tokenId = BigInt(top.token_id);
    const details = await nftDetails(db.sql, CHAIN_ID, contract, tokenId);
    assert.ok(details);
    const [minted] = await client.getLogs({
      address: contract,
      event: parseAbiItem(
        "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
      ),
      args: { from: "0x0000000000000000000000000000000000000000", tokenId },
      fromBlock: 0n,
      toBlock: BigInt(history.blocks.last),
    });
    assert.ok(minted);
    const block = await client.getBlock({ blockNumber: minted.blockNumber });
    assert.deepEqual(details.mint, {
      txHash: minted.transactionHash,
      logIndex: minted.logIndex,
      blockTime: new Date(Number(block.timestamp) * 1000),
    });
    assert.ok(details.types.includes("TYPE_ERC721"));
    assert.equal(details.quantity, 1n);
    assert.equal(details.ownerCount, 1n);
    const sales = await db.sql<{ tx: string; block: string; log_index: number; total: string }[]>`
      SELECT '0x' || encode(tx_hash, 'hex') AS tx, block_number::text AS block, log_index, total_native::text AS total
      FROM sales WHERE chain_id = ${CHAIN_ID} AND contract = ${bytes} AND token_id = ${top.token_id}::numeric
        AND kind = 'sale'`;
    assert.ok(sales.length > 1, "sold more than once");

    const latest = sales.reduce((a, b) =>
      BigInt(b.block) > BigInt(a.block) || (b.block === a.block && b.log_index > a.log_index) ? b : a,
    );
    assert.equal(details.lastSale?.txHash, latest.tx);
    assert.equal(details.lastSale?.totalNative.toString(), latest.total);
    assert.equal(
      details.lastSale?.totalNative,
      (details.lastSale?.nativePaid ?? 0n) + (details.lastSale?.fungiblePaid ?? 0n),
    );
  });

  test("NFT details: an ERC-1155 id's units and holders, a sale paid in ERC-20 with its payment, and a token never minted", async () => {
    const erc1155 = history.contracts.erc1155.address;
    // The edition with the most holders.
    const [held] = await db.sql<{ id: string; units: string; holders: string }[]>`
      SELECT token_id::text AS id, sum(amount)::text AS units, count(*)::text AS holders FROM token_balances
      WHERE chain_id = ${CHAIN_ID} AND contract = ${Buffer.from(erc1155.slice(2), "hex")}
      GROUP BY token_id ORDER BY count(*) DESC, token_id LIMIT 1`;
    assert.ok(held);
    const details = await nftDetails(db.sql, CHAIN_ID, erc1155, BigInt(held.id));
    assert.ok(details);
    assert.equal(details.quantity.toString(), held.units);
    assert.equal(details.ownerCount.toString(), held.holders);
    assert.ok(details.ownerCount > 1n, "an edition held by several");

    const [paid] = await db.sql<{ contract: string; token_id: string; token: string; amount: string }[]>`
      SELECT '0x' || encode(p.contract, 'hex') AS contract, s.token_id::text, '0x' || encode(p.token, 'hex') AS token,
             p.amount::text
      FROM sale_payments p JOIN sales s USING (chain_id, contract, block_number, log_index, seq, seller)
      WHERE s.chain_id = ${CHAIN_ID} AND s.kind = 'sale'
        AND NOT EXISTS (SELECT 1 FROM sales later WHERE later.chain_id = s.chain_id AND later.contract = s.contract
                          AND later.token_id = s.token_id AND later.kind = 'sale'
                          AND (later.block_number, later.log_index, later.seq) > (s.block_number, s.log_index, s.seq))
      LIMIT 1`;
    assert.ok(paid, "some token's latest sale was paid in an ERC-20");
    const sold = await nftDetails(db.sql, CHAIN_ID, paid.contract as Address, BigInt(paid.token_id));
    assert.deepEqual(
      sold?.lastSale?.payments.map((p) => [p.token, p.amount.toString()]),
      [[paid.token, paid.amount]],
    );

    assert.equal(await nftDetails(db.sql, CHAIN_ID, history.contracts.erc721.address, 10n ** 30n), undefined);
    assert.equal(
      await nftDetails(db.sql, CHAIN_ID, "0x00000000000000000000000000000000000000ab", 1n),
      undefined,
    );
  });

  test("tokens: each token's first mint among the stored transfers, kept batch by batch", async () => {
    const burn = [...BURN_ADDRESSES].map((a) => a.slice(2));
    const expected = await db.sql`
      SELECT DISTINCT ON (contract, token_id) contract, token_id::text, block_number::text AS block, log_index, seq,
             tx_hash, block_time
      FROM nft_transfers WHERE chain_id = ${CHAIN_ID} AND from_address IN (SELECT decode(x, 'hex') FROM unnest(${burn}::text[]) AS x)
      ORDER BY contract, token_id, block_number, log_index, seq`;
    const stored = await db.sql`
      SELECT contract, token_id::text, block_number::text AS block, log_index, seq, tx_hash, block_time
      FROM tokens WHERE chain_id = ${CHAIN_ID} ORDER BY contract, token_id`;
    assert.ok(expected.length > 100);
    assert.deepEqual([...stored], [...expected]);
  });
});
