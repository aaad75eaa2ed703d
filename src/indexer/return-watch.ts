import type { Address, Hex } from "../core/hex.ts";
import { saleClass, WASH_RULES } from "../core/sale-classes.ts";
import type { SaleKey, SaleVerdict, ValueFlow } from "../core/types.ts";
import { type Deal, RETURN_LOOKAHEAD, returnedEnough, returnsProceeds } from "../sales/returns.ts";
import { FUNDING_LOOKBACK, type FundingFlows, ownFunders } from "../sales/wash.ts";

/** A sale as the watch takes it in: a stored or batch sale of kind `sale`. */
export interface WatchedSale extends SaleKey {
  buyer: Address;
  txHash: Hex;
  txIndex: number;
  totalNative: bigint;
  flags: readonly string[];
}

interface WatchedDeal extends Deal {
  sales: SaleKey[];
  returned: bigint;
  /** Already flagged `wash_returned`: nothing more to tell. */
  done: boolean;
}

/**
 * The deals of the last hour whose sellers may still hand their proceeds back (src/sales/returns.ts),
 * with what each has handed back so far. Carried by the sales projection from batch to batch, and
 * made again on a resume from the stored sales and the flows read back from the node.
 */
export class ReturnWatch {
  /** Every deal held, in chain order: the oldest are dropped first. */
  private deals: WatchedDeal[] = [];
  /**
   * The deals by the payments that could hand their proceeds back: seller and recipient (the buyer
   * or one of its funders). A payment is checked against those deals only, so a seller with many
   * deals and many payments costs each payment its own few deals, not all of the seller's.
   */
  private readonly byPayment = new Map<Address, Map<Address, WatchedDeal[]>>();

  get size(): number {
    return this.deals.length;
  }

  /**
   * Takes in sales in chain order, later than every deal held, grouped into deals. `funding` holds
   * the flows before them (it may hold later ones: only those before each deal are read).
   */
  add(sales: readonly WatchedSale[], funding: FundingFlows): void {
    const byKey = new Map<string, WatchedDeal>();
    for (const s of sales) {
      const cls = saleClass(s.flags);
      if (cls === "unpriced" || s.totalNative <= 0n) continue;
      const key = `${s.txHash}${s.seller}${s.buyer}`;
      let deal = byKey.get(key);
      if (!deal) {
        const at = { time: s.time, blockNumber: s.blockNumber, txIndex: s.txIndex };
        deal = {
          seller: s.seller,
          buyer: s.buyer,
          blockNumber: s.blockNumber,
          txIndex: s.txIndex,
          time: s.time,
          price: 0n,
          funders: ownFunders(s.buyer, at, funding),
          sales: [],
          returned: 0n,
          done: true,
        };
        byKey.set(key, deal);
        this.deals.push(deal);
        let paid = this.byPayment.get(deal.seller);
        if (!paid) {
          paid = new Map();
          this.byPayment.set(deal.seller, paid);
        }
        for (const to of recipients(deal)) {
          const list = paid.get(to);
          if (list) list.push(deal);
          else paid.set(to, [deal]);
        }
      }
      deal.price += s.totalNative;
      deal.done &&= s.flags.includes(WASH_RULES.returned);
      const { contract, blockNumber, logIndex, seq, seller, time } = s;
      deal.sales.push({ contract, blockNumber, logIndex, seq, seller, time });
    }
  }

  /**
   * Reads flows in chain order, each after every flow read before: the verdicts on the deals whose
   * sellers have now handed back at least half their price, given at the flow that made it so.
   */
  observe(flows: readonly ValueFlow[]): SaleVerdict[] {
    const verdicts: SaleVerdict[] = [];
    for (const flow of flows) {
      const deals = this.byPayment.get(flow.from)?.get(flow.to);
      if (!deals) continue;
      for (const deal of deals) {
        if (deal.done || !returnsProceeds(deal, flow)) continue;
        deal.returned += flow.value;
        if (!returnedEnough(deal.price, deal.returned)) continue;
        deal.done = true;
        for (const sale of deal.sales)
          verdicts.push({
            sale,
            rule: WASH_RULES.returned,
            blockNumber: flow.blockNumber,
            txIndex: flow.txIndex,
          });
      }
    }
    return verdicts;
  }

  /** Drops the deals whose hour is over at `newestTime`. */
  prune(newestTime: number): void {
    const oldest = newestTime - RETURN_LOOKAHEAD.seconds;
    let drop = 0;
    while (drop < this.deals.length && (this.deals[drop] as WatchedDeal).time < oldest) drop++;
    if (drop === 0) return;
    // Each payment's deals are in chain order too, so what goes is a prefix of each list: counted,
    // then cut once per list.
    const dropped = new Map<WatchedDeal[], { seller: Address; to: Address; count: number }>();
    for (const deal of this.deals.splice(0, drop)) {
      const paid = this.byPayment.get(deal.seller);
      for (const to of recipients(deal)) {
        const list = paid?.get(to);
        if (!list) continue;
        const cut = dropped.get(list);
        if (cut) cut.count++;
        else dropped.set(list, { seller: deal.seller, to, count: 1 });
      }
    }
    for (const [list, { seller, to, count }] of dropped) {
      if (count < list.length) {
        list.splice(0, count);
        continue;
      }
      const paid = this.byPayment.get(seller);
      paid?.delete(to);
      if (paid?.size === 0) this.byPayment.delete(seller);
    }
  }
}

/** Who the seller could hand a deal's proceeds back to: its buyer or one of the buyer's funders. */
function recipients(deal: Deal): Address[] {
  return deal.funders.size === 0 ? [deal.buyer] : [deal.buyer, ...deal.funders];
}

export const RETURN_LOOKAHEAD_SECONDS = RETURN_LOOKAHEAD.seconds;
/** How far back a resume must read flows: a deal of the last hour, and the funding before it. */
export const WATCH_READBACK_SECONDS = RETURN_LOOKAHEAD.seconds + FUNDING_LOOKBACK.seconds;
