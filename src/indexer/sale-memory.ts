import type { Address } from "../core/hex.ts";
import { CYCLE_LOOKBACK, type PastSale } from "../sales/wash.ts";
import type { Queryable } from "../store/pg/database.ts";
import { hasSales, type LastSales, lastSales, tokenKey } from "../store/tables/sales.ts";

/** Tokens remembered before the memory starts again; about 250 bytes for each sale held. */
const DEFAULT_LIMIT = 250_000;

/**
 * Each token's recent sales (its parties and time, the last few), which tell a wash cycle, kept in memory for every sale
 * prepared since it was made so that the store is asked only for tokens it does not hold. When the
 * store held no sale when it was made (a chain indexed from its start), the store is never asked
 * until the memory fills up; it then starts again from the batch just prepared, whose sales may
 * not be written yet, and asks the store for the rest. It is made again after a failure or a
 * reorganisation, like everything else prepared ahead of the store.
 */
export class SaleMemory {
  private readonly last = new Map<string, readonly PastSale[]>();

  private constructor(
    private storeMayKnowMore: boolean,
    private readonly limit: number,
  ) {}

  static async fromStore(sql: Queryable, chainId: number, limit = DEFAULT_LIMIT): Promise<SaleMemory> {
    return new SaleMemory(await hasSales(sql, chainId), limit);
  }

  /** The recent sales of `tokens`, oldest first, from memory or, for tokens it does not hold, from the store. */
  async lookup(
    sql: Queryable,
    chainId: number,
    tokens: readonly { contract: Address; tokenId: bigint }[],
  ): Promise<(key: string) => readonly PastSale[]> {
    const missing = this.storeMayKnowMore
      ? tokens.filter((t) => !this.last.has(tokenKey(t.contract, t.tokenId)))
      : [];
    const stored = await lastSales(sql, chainId, missing, CYCLE_LOOKBACK.sales);
    return (key) => this.last.get(key) ?? stored.get(key) ?? [];
  }

  /** Takes in the latest sales of a batch just prepared. */
  remember(sales: LastSales): void {
    if (this.last.size + sales.size > this.limit) {
      this.last.clear();
      this.storeMayKnowMore = true;
    }
    for (const [key, parties] of sales) this.last.set(key, parties);
  }
}
