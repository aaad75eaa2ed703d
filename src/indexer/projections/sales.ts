/**
 * Every trade that involved a payment (sales, paid mints, returns) with its payments, priced at its
 * block, with the wash rules that fired. The carry is the memory of each token's recent sales, which
 * tells a wash cycle (the store is asked only for tokens it does not hold), and the memory of the
 * value flows over the funding lookback, which tells a common funder.
 */
import type { Address } from "../../core/hex.ts";
import {
  deleteSalesAfter,
  deployersOf,
  encodeSales,
  salesStatements,
  tokenKey,
} from "../../store/tables/sales.ts";
import type { FetchedBatch } from "../batch.ts";
import { FlowMemory } from "../flow-memory.ts";
import { type FlowReader, readFlowsBefore } from "../flow-readback.ts";
import { SaleMemory } from "../sale-memory.ts";
import { tradesOfBatch } from "../trades.ts";
import { defineProjection, need } from "./projection.ts";

export interface SalesProjectionOptions {
  /** Tokens the memory of last sales holds before it starts again (its default when absent). */
  memoryLimit?: number;
  /**
   * Reads the value flows of blocks from the node, as batches carry them, to fill the flow memory
   * again on a resume. Pipelines built without one (tests, benchmarks) start with an empty memory:
   * a sale in their first hour sees only the funding of the blocks they indexed.
   */
  readFlows?: FlowReader;
}

interface SalesCarry {
  sales: SaleMemory;
  flows: FlowMemory;
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
      const [sales, before] = await Promise.all([
        SaleMemory.fromStore(sql, chainId, memoryLimit),
        readFlows ? readFlowsBefore(readFlows, next) : Promise.resolve(undefined),
      ]);
      if (before) {
        flows.add(before.flows);
        flows.prune(before.lastBlockTime);
      }
      return { sales, flows };
    },
    async prepare({ sql, chainId, batch, facts }, carry: SalesCarry) {
      const sold = soldTokens(batch);
      carry.flows.add(batch.flows ?? []);
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
      const last = batch.headers.at(-1);
      if (last) carry.flows.prune(last.timestamp);
      facts.trades = trades;
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
