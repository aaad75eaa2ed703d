/**
 * What the API's readers make of a loaded dataset: every reader the REST operations use, called
 * as they call them, with a summary of what each returned, and the problems that would make the
 * benchmark measure empty answers.
 */
import type { Address } from "../../src/core/hex.ts";
import { bare, type Queryable, toHex } from "../../src/store/pg/database.ts";
import { collectionFacts } from "../../src/store/read/collection.ts";
import { listContracts } from "../../src/store/read/contracts.ts";
import { floorPrice } from "../../src/store/read/floor.ts";
import { nftDetails } from "../../src/store/read/nft.ts";
import { listOwners } from "../../src/store/read/owners.ts";
import { collectionSeries } from "../../src/store/read/series.ts";
import { listTokenOwners } from "../../src/store/read/token-owners.ts";
import { type RankingMetric, topCollections } from "../../src/store/read/top.ts";
import { listWalletNfts } from "../../src/store/read/wallet-nfts.ts";

const DAY = 86_400;
const WINDOWS = [
  ["1 hour", 3600],
  ["1 day", DAY],
  ["7 days", 7 * DAY],
  ["30 days", 30 * DAY],
  ["365 days", 365 * DAY],
] as const;
const METRICS: readonly RankingMetric[] = ["volume", "sales", "maxPrice", "avgPrice"];
/** Duration and period of the series the benchmark asks for, in seconds. */
const SERIES = [
  ["1 day by 15 minutes", DAY, 900],
  ["7 days by 1 hour", 7 * DAY, 3600],
  ["30 days by 1 day", 30 * DAY, DAY],
  ["365 days by 1 day", 365 * DAY, DAY],
] as const;

const ether = (wei: bigint) => (Number(wei / 10n ** 12n) / 1e6).toFixed(4);

/**
 * A reader's answer and how long it took when asked a second time (its statement prepared, its
 * pages cached): what the API waits for on an idle server.
 */
async function timed<T>(read: () => Promise<T>): Promise<[T, string]> {
  await read();
  const started = performance.now();
  const result = await read();
  return [result, `${(performance.now() - started).toFixed(1)} ms`];
}

/** Prints the summary; returns the problems found (none when every reader has something to return). */
export async function checkDataset(
  sql: Queryable,
  chainId: number,
  now: number,
  say: (line: string) => void,
): Promise<string[]> {
  const problems: string[] = [];

  const [contracts, contractsTime] = await timed(() =>
    listContracts(sql, chainId, {
      limit: 20,
      offset: 0,
      direction: "asc",
      types: [],
      mintedAfter: undefined,
    }),
  );
  const first = contracts[0];
  say(
    `contracts (${contractsTime}): first page of ${contracts.length}, the first ${first?.name ?? "-"} (${first?.types.join(",") ?? "-"}) ` +
      `minted ${first?.mintEvent.blockTime?.toISOString() ?? "-"}`,
  );
  if (contracts.length < 20) problems.push("the contracts list has fewer than 20 contracts");

  say("top collections (collections ranked, max 20; the leader by each metric; each metric's reader time):");
  let leader: Address | undefined;
  for (const [label, seconds] of WINDOWS) {
    const leaders: string[] = [];
    const times: string[] = [];
    let ranked = 0;
    for (const metric of METRICS) {
      const [rows, time] = await timed(() =>
        topCollections(sql, chainId, { windowSeconds: seconds, metric, limit: 20, offset: 0 }),
      );
      times.push(time);
      ranked = rows.length;
      const top = rows[0];
      if (top === undefined) continue;
      if (label === "7 days" && metric === "volume") leader = top.contract;
      const value =
        metric === "volume"
          ? `${ether(top.volume)} ETH`
          : metric === "sales"
            ? `${top.sales} sales`
            : metric === "maxPrice"
              ? `${ether(top.maxUnitPrice)} ETH`
              : `${ether(top.units === 0n ? 0n : top.volume / top.units)} ETH`;
      leaders.push(`${metric} ${top.name} ${value}`);
    }
    say(
      `  ${label.padEnd(8)} ${String(ranked).padStart(2)} ranked; ${leaders.join("; ")} (${times.join(", ")})`,
    );
    if (ranked === 0 && seconds >= DAY) problems.push(`no collection has sales in the last ${label}`);
  }
  if (leader === undefined) {
    problems.push("no leader by 7-day volume: the series, owners and NFT checks have no collection");
    return problems;
  }

  const todayStart = now - (now % DAY);
  say(`series of ${leader} (the 7-day volume leader), ending at the start of today (UTC):`);
  for (const [label, duration, period] of SERIES) {
    const points = duration / period;
    const grid = { start: new Date((todayStart - duration) * 1000), periodSeconds: period, points };
    const [series, time] = await timed(() => collectionSeries(sql, chainId, leader, grid));
    const withSales = series.filter((p) => p.sales > 0n);
    const sales = series.reduce((sum, p) => sum + p.sales, 0n);
    const volume = series.reduce((sum, p) => sum + p.volume, 0n);
    const minted = series.reduce((sum, p) => sum + p.minted - p.burned, 0n);
    say(
      `  ${label.padEnd(20)} (${time}) ${series.length} points, ${withSales.length} with sales: ${sales} sales, ` +
        `${ether(volume)} ETH, supply change ${minted}, holders ${series[0]?.holders ?? "-"} → ${series.at(-1)?.holders ?? "-"}`,
    );
    if (series.length !== points)
      problems.push(`the ${label} series has ${series.length} points, not ${points}`);
    if (withSales.length === 0) problems.push(`the ${label} series of the leader has no sales`);
  }

  const [owners, ownersTime] = await timed(() =>
    listOwners(sql, chainId, leader, { limit: 100, offset: 0, direction: "desc" }),
  );
  const [stats] = await sql<{ holders: string; minted: string; burned: string }[]>`
    SELECT holders::text, minted::text, burned::text FROM collection_stats
    WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(leader), "hex")}`;
  say(
    `owners of the leader (${ownersTime}): a page of ${owners.length}, the largest holding ${owners[0]?.units ?? 0n} units; ` +
      `${stats?.holders ?? 0} holders, ${stats?.minted ?? 0} minted, ${stats?.burned ?? 0} burned`,
  );
  if (owners.length === 0) problems.push("the leader has no owners");

  // The latest sale of the leader, and the latest of an ERC-1155 and of an ERC-20-paid sale.
  const samples = await sql<{ label: string; contract: Uint8Array; token_id: string }[]>`
    (SELECT 'leader' AS label, contract, token_id::text FROM sales
     WHERE chain_id = ${chainId} AND contract = ${Buffer.from(bare(leader), "hex")} AND kind = 'sale'
     ORDER BY block_number DESC LIMIT 1)
    UNION ALL
    (SELECT 'erc1155', s.contract, s.token_id::text FROM sales s
     JOIN contracts c ON c.chain_id = s.chain_id AND c.address = s.contract AND 'TYPE_ERC1155' = ANY (c.types)
     WHERE s.chain_id = ${chainId} AND s.kind = 'sale' ORDER BY s.block_number DESC LIMIT 1)
    UNION ALL
    (SELECT 'erc20-paid', contract, token_id::text FROM sales
     WHERE chain_id = ${chainId} AND kind = 'sale' AND fungible_paid > 0 ORDER BY block_number DESC LIMIT 1)`;
  say("NFT details:");
  for (const sample of samples) {
    const contract = toHex(sample.contract) as Address;
    const [details, time] = await timed(() => nftDetails(sql, chainId, contract, BigInt(sample.token_id)));
    if (!details) {
      problems.push(`no details of ${contract}/${sample.token_id}`);
      continue;
    }
    const sale = details.lastSale;
    say(
      `  ${sample.label.padEnd(10)} (${time}) ${details.collectionName} #${details.tokenId} (${details.types.join(",")}): ` +
        `${details.quantity} units, ${details.ownerCount} owners, minted ${details.mint?.blockTime.toISOString() ?? "-"}; ` +
        (sale
          ? `last sold for ${ether(sale.totalNative)} ETH ($${Number(sale.totalUsd ?? 0).toFixed(2)}), ` +
            `${sale.attributedBy}, ${sale.payments.length} ERC-20 payments`
          : "never sold"),
    );
    if (!sale) problems.push(`${sample.label} sample ${contract}/${sample.token_id} has no last sale`);
  }
  if (samples.length < 3) problems.push(`only ${samples.length} of the 3 kinds of NFT sampled exist`);
  problems.push(...(await checkHoldings(sql, chainId, leader, say)));
  return problems;
}

/** A collection's figures and floor, the most owned token's owners and the largest wallet's NFTs. */
async function checkHoldings(
  sql: Queryable,
  chainId: number,
  leader: Address,
  say: (line: string) => void,
): Promise<string[]> {
  const problems: string[] = [];
  const [facts, factsTime] = await timed(() => collectionFacts(sql, chainId, leader, { sales: true }));
  say(
    `collection totals of the leader (${factsTime}): ${facts?.counts.holders ?? "-"} owners, ` +
      `${facts?.counts.transfers ?? "-"} transfers, ${facts?.sales?.sales ?? "-"} sales, ` +
      `${facts?.sales ? ether(facts.sales.volume) : "-"} ETH`,
  );
  if (!facts?.sales || facts.sales.sales === 0n) problems.push("the leader's totals have no sales");

  const [offered] = await sql<{ contract: Uint8Array; n: string }[]>`
    SELECT contract, count(*) AS n FROM punk_offers WHERE chain_id = ${chainId} GROUP BY contract LIMIT 1`;
  if (offered) {
    const contract = toHex(offered.contract) as Address;
    const [floor, time] = await timed(() => floorPrice(sql, chainId, contract));
    say(
      `floor of ${contract} (${time}), over ${offered.n} offer changes: ` +
        `${floor?.lowestWei === undefined ? "none open" : `${ether(floor.lowestWei)} ETH`}`,
    );
    if (floor?.lowestWei === undefined) problems.push("the collection with punk offers has none open");
  } else {
    say("floor: no collection has punk offers; every floor is measured on the path without offers");
  }

  const [crowded] = await sql<{ contract: Uint8Array; token_id: string; n: string }[]>`
    SELECT contract, token_id::text, count(*) AS n FROM token_balances
    WHERE chain_id = ${chainId} AND amount > 0 GROUP BY contract, token_id ORDER BY count(*) DESC LIMIT 1`;
  if (crowded) {
    const contract = toHex(crowded.contract) as Address;
    const [owners, time] = await timed(() =>
      listTokenOwners(sql, chainId, contract, BigInt(crowded.token_id), { limit: 100, offset: 0 }),
    );
    say(
      `owners of ${contract}/${crowded.token_id} (${time}): ${crowded.n} owners, a page of ${owners?.length ?? 0}`,
    );
    if (Number(crowded.n) < 2) problems.push("no token has more than one owner");
  } else problems.push("no token has an owner");

  const [whale] = await sql<{ holder: Uint8Array; n: string }[]>`
    SELECT holder, count(*) AS n FROM token_balances WHERE chain_id = ${chainId} AND amount > 0
    GROUP BY holder ORDER BY count(*) DESC LIMIT 1`;
  if (whale) {
    const holder = toHex(whale.holder) as Address;
    const [nfts, time] = await timed(() => listWalletNfts(sql, chainId, holder, { limit: 100, offset: 0 }));
    say(`NFTs of ${holder} (${time}): ${whale.n} held, a page of ${nfts.length}`);
    if (nfts.length === 0) problems.push("the largest wallet lists no NFTs");
  } else problems.push("no wallet holds an NFT");
  return problems;
}

/** Rows of every table the API reads, for the load's report. */
export async function tableRows(sql: Queryable, chainId: number): Promise<Record<string, number>> {
  const [row] = await sql<Record<string, string>[]>`
    SELECT (SELECT count(*) FROM sales WHERE chain_id = ${chainId} AND kind = 'sale') AS "sales",
           (SELECT count(*) FROM sales WHERE chain_id = ${chainId} AND kind = 'mint') AS "paid mints",
           (SELECT count(*) FROM sale_payments WHERE chain_id = ${chainId}) AS "sale_payments",
           (SELECT count(*) FROM nft_transfers WHERE chain_id = ${chainId}) AS "nft_transfers",
           (SELECT count(*) FROM fungible_transfers WHERE chain_id = ${chainId}) AS "fungible_transfers",
           (SELECT count(*) FROM contracts WHERE chain_id = ${chainId}) AS "contracts",
           (SELECT count(*) FROM tokens WHERE chain_id = ${chainId}) AS "tokens",
           (SELECT count(*) FROM token_balances WHERE chain_id = ${chainId}) AS "token_balances",
           (SELECT count(*) FROM collection_holders WHERE chain_id = ${chainId}) AS "collection_holders",
           (SELECT count(*) FROM collection_stats WHERE chain_id = ${chainId}) AS "collection_stats",
           (SELECT count(*) FROM collection_buckets WHERE chain_id = ${chainId}) AS "collection_buckets",
           (SELECT count(*) FROM collection_days WHERE chain_id = ${chainId}) AS "collection_days",
           (SELECT count(*) FROM pool_states WHERE chain_id = ${chainId}) AS "pool_states"`;
  return Object.fromEntries(Object.entries(row ?? {}).map(([table, n]) => [table, Number(n)]));
}
