import type { Address } from "../core/hex.ts";
import type { ValueFlow } from "../core/types.ts";
import { FUNDING_LOOKBACK, type FundingFlows } from "../sales/wash.ts";

/**
 * The value flows of transactions that moved no NFT over the funding lookback before the newest
 * block taken in, by recipient and by sender, for the funder rule (src/sales/wash.ts). A batch's
 * flows are taken in before its sales are flagged (the rule reads only those before each sale),
 * and those older than the lookback before the batch's last block are dropped after it: a sale of
 * the next batch is never earlier than that block, so it finds every flow it may read.
 */
export class FlowMemory implements FundingFlows {
  /**
   * Flows dropped before their hour was up, to keep the memory within `limit`: on a chain busier
   * than that, a sale sees only the most recent funding.
   */
  droppedEarly = 0;

  /** @param limit flows held at most: about 400 bytes each with their indexes (200 MB by default). */
  constructor(private readonly limit = 500_000) {}

  /** Every flow held, in chain order: the oldest are dropped first. */
  private readonly held: ValueFlow[] = [];
  private readonly byRecipient = new Map<Address, ValueFlow[]>();
  private readonly bySender = new Map<Address, ValueFlow[]>();

  get size(): number {
    return this.held.length;
  }

  into(account: Address): readonly ValueFlow[] {
    return this.byRecipient.get(account) ?? NONE;
  }

  outOf(account: Address): readonly ValueFlow[] {
    return this.bySender.get(account) ?? NONE;
  }

  /** Takes in flows later than every flow held, in chain order; those of trades are left out. */
  add(flows: readonly ValueFlow[]): void {
    for (const f of flows) {
      if (f.inTrade) continue;
      this.held.push(f);
      append(this.byRecipient, f.to, f);
      append(this.bySender, f.from, f);
    }
  }

  /** Drops the flows no sale at or after `newestTime` can read, and the oldest beyond the limit. */
  prune(newestTime: number): void {
    const oldest = newestTime - FUNDING_LOOKBACK.seconds;
    let drop = 0;
    while (drop < this.held.length && (this.held[drop] as ValueFlow).time < oldest) drop++;
    if (this.held.length - drop > this.limit) {
      this.droppedEarly += this.held.length - drop - this.limit;
      drop = this.held.length - this.limit;
    }
    if (drop === 0) return;
    // Each account's flows are in chain order too, so what goes is a prefix of each: one splice per account.
    const received = new Map<Address, number>();
    const sent = new Map<Address, number>();
    for (const f of this.held.splice(0, drop)) {
      received.set(f.to, (received.get(f.to) ?? 0) + 1);
      sent.set(f.from, (sent.get(f.from) ?? 0) + 1);
    }
    dropPrefixes(this.byRecipient, received);
    dropPrefixes(this.bySender, sent);
  }
}

const NONE: readonly ValueFlow[] = [];

function append(index: Map<Address, ValueFlow[]>, account: Address, flow: ValueFlow): void {
  const list = index.get(account);
  if (list) list.push(flow);
  else index.set(account, [flow]);
}

function dropPrefixes(index: Map<Address, ValueFlow[]>, counts: ReadonlyMap<Address, number>): void {
  for (const [account, count] of counts) {
    const list = index.get(account);
    if (!list) continue;
    if (count >= list.length) index.delete(account);
    else list.splice(0, count);
  }
}
