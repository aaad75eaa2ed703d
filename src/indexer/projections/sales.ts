/**
 * Every trade that involved a payment (sales, paid mints, returns) with its payments, priced at its
 * block, with the wash rules that fired. The carry is the memory of each token's recent sales, which
 * tells a wash cycle (the store is asked only for tokens it does not hold), the memory of the value
 * flows over the funding lookback, which tells a common funder, and the deals of the last hour,
 * whose sellers may yet hand the proceeds back. Rules that fire on a sale after it was seen (an
 * earlier leg of a cycle, proceeds handed back) are the batch's verdicts, written by the verdicts
 * projection.
 */
import type { Address } from "../../core/hex.ts";
import { orderVerdicts } from "../../sales/verdicts.ts";
import {
  deleteSalesAfter,
  deployersOf,
  encodeSales,
  salesSince,
  salesStatements,
  tokenKey,
} from "../../store/tables/sales.ts";
import type { FetchedBatch } from "../batch.ts";
import { FlowMemory } from "../flow-memory.ts";
import { type FlowReader, readFlowsBefore } from "../flow-readback.ts";
import { RETURN_LOOKAHEAD_SECONDS, ReturnWatch, WATCH_READBACK_SECONDS } from "../return-watch.ts";
import { SaleMemory } from "../sale-memory.ts";
import { tradesOfBatch } from "../trades.ts";
import { defineProjection, need } from "./projection.ts";

export interface SalesProjectionOptions {
  /** Tokens the memory of last sales holds before it starts again (its default when absent). */
  memoryLimit?: number;
  /**
   * Reads the value flows of blocks from the node, as batches carry them, to fill the flow memory
   * and the deals of the last hour again on a resume. Pipelines built without one (tests,
   * benchmarks) start with both empty: a sale in their first hour sees only the funding of the
   * blocks they indexed, and a deal before their start is not watched for returned proceeds.
   */
  readFlows?: FlowReader;
}

interface SalesCarry {
  sales: SaleMemory;
  flows: FlowMemory;
  deals: ReturnWatch;
}

export function createSalesProjection(options: SalesProjectionOptions = {}) {
  const { memoryLimit, readFlows } = options;
  return defineProjection({
    name: "sales",
    tables: [
      { name: "sales", order: "chain_id, block_number, log_index, seq, seller" },
      { name: "sale_payments", order: "chain_id, block_number, log_index, seq, seller, token" },
    ],
    async resume({ sql, chainId, next }): Promise<SalesCarry> {
      const flows = new FlowMemory();
      const deals = new ReturnWatch();
      const [sales, before] = await Promise.all([
        SaleMemory.fromStore(sql, chainId, memoryLimit),
        readFlows ? readFlowsBefore(readFlows, next, WATCH_READBACK_SECONDS) : Promise.resolve(undefined),
      ]);
      if (before) {
        // The deals of the last hour, with their funding and what was handed back since, as the
        // batches that saw them left them: the verdicts they gave are stored already.
        flows.add(before.flows);
        const since = before.lastBlockTime - RETURN_LOOKAHEAD_SECONDS;
        deals.add(await salesSince(sql, chainId, before.firstBlock, since), flows);
        deals.observe(before.flows);
        deals.prune(before.lastBlockTime);
        flows.prune(before.lastBlockTime);
      }
      return { sales, flows, deals };
    },
    async prepare({ sql, chainId, batch, facts }, carry: SalesCarry) {
      const sold = soldTokens(batch);
      const batchFlows = batch.flows ?? [];
      carry.flows.add(batchFlows);
      const [previous, deployers] = await Promise.all([
        carry.sales.lookup(sql, chainId, sold.tokens),
        deployersOf(sql, chainId, [...sold.parties]),
      ]);
      for (const c of batch.creations) deployers.set(c.address, c.txFrom);
      const trades = tradesOfBatch(
        batch,
        need(facts, "prices", "sales"),
        previous,
        need(facts, "bidBefore", "sales"),
        (account) => deployers.get(account),
        carry.flows,
      );
      carry.sales.remember(trades.lastSalesAfter);
      carry.deals.add(
        trades.rows.filter((r) => r.kind === "sale"),
        carry.flows,
      );
      const returned = carry.deals.observe(batchFlows);
      const last = batch.headers.at(-1);
      if (last) {
        carry.flows.prune(last.timestamp);
        carry.deals.prune(last.timestamp);
      }
      facts.trades = trades;
      facts.verdicts = orderVerdicts([...trades.verdicts, ...returned]);
      return { prepared: encodeSales(trades.rows), carry };
    },
    statements: (tx, { chainId }, prepared) => salesStatements(tx, chainId, prepared),
    undo: (tx, { chainId, ancestor }) => deleteSalesAfter(tx, chainId, ancestor),
  });
}

/**
 * The tokens that may be sold in a batch, for their previous sales, and the accounts that may be
 * their parties, for who deployed them: those whose movements came with a payment in their
 * transaction. A transaction with no call value, no native movement and no ERC-20 movement pays
 * nothing, and most transfers of a backfill are of that kind.
 */
function soldTokens(batch: FetchedBatch): {
  tokens: { contract: Address; tokenId: bigint }[];
  parties: Set<Address>;
} {
  const paying = new Set<string>();
  for (const f of batch.fungible) paying.add(f.txHash);
  if (batch.native) for (const n of batch.native) paying.add(n.txHash);
  else for (const [txHash, call] of batch.calls) if (call.value > 0n) paying.add(txHash);
  const seen = new Set<string>();
  const tokens: { contract: Address; tokenId: bigint }[] = [];
  const parties = new Set<Address>();
  for (const t of batch.nft) {
    if (!paying.has(t.txHash)) continue;
    parties.add(t.from);
    parties.add(t.to);
    const key = tokenKey(t.contract, t.tokenId);
    if (seen.has(key)) continue;
    seen.add(key);
    tokens.push({ contract: t.contract, tokenId: t.tokenId });
  }
  return { tokens, parties };
}
