/**
 * What an NFT transfer was, as the labels of the transfers list name it: a pure function of the
 * transfer's addresses and of the trades it delivered. The store's filter by label
 * (src/store/read/nft-transfers.ts) asks the same questions in SQL, one predicate per label; a new
 * label is a value here, a line of `transferLabels`, and its predicate there.
 */
import { isBurnAddress } from "./burn.ts";
import { type Address, ZERO_ADDRESS } from "./hex.ts";
import { RATE_OUTLIER, saleClass, UNPRICED } from "./sale-classes.ts";

/** Every label, in the order of the `.proto` enum `Label` (numbers from 1). */
export const TRANSFER_LABELS = [
  "LABEL_MINT",
  "LABEL_BURN",
  "LABEL_TRANSFER",
  "LABEL_SALE",
  "LABEL_BUNDLE",
  "LABEL_MARKETPLACE_OPENSEA",
  "LABEL_MARKETPLACE_BLUR",
  "LABEL_MARKETPLACE_LOOKSRARE",
  "LABEL_MARKETPLACE_X2Y2",
  "LABEL_MARKETPLACE_CRYPTOPUNKS",
  "LABEL_PAID_MINT",
  "LABEL_RETURN",
  "LABEL_WASH",
  "LABEL_RATE_OUTLIER",
  "LABEL_UNPRICED",
  "LABEL_ORGANIC",
  "LABEL_SPAM",
] as const;

export type TransferLabel = (typeof TRANSFER_LABELS)[number];

/**
 * The label of each market the indexer records a sale's event from (`sales.market`). Seaport and
 * the Wyvern exchange before it were OpenSea's.
 */
export const MARKET_LABELS: Readonly<Record<string, TransferLabel>> = {
  seaport: "LABEL_MARKETPLACE_OPENSEA",
  wyvern: "LABEL_MARKETPLACE_OPENSEA",
  blur: "LABEL_MARKETPLACE_BLUR",
  looksrare: "LABEL_MARKETPLACE_LOOKSRARE",
  x2y2: "LABEL_MARKETPLACE_X2Y2",
  cryptopunks: "LABEL_MARKETPLACE_CRYPTOPUNKS",
};

/** A trade a transfer delivered to its recipient, as far as its labels go. */
export interface TradeFacts {
  kind: "sale" | "mint" | "return";
  /** The market whose event the transaction logged; "" when none. */
  market: string;
  flags: readonly string[];
  /** The buyer got other NFTs in trades of the same kind in the same transaction. */
  bundled: boolean;
}

/** What a transfer's labels are made of. */
export interface TransferFacts {
  from: Address;
  to: Address;
  /** The trades keyed by this transfer: none for most, one per seller of the units it delivered. */
  trades: readonly TradeFacts[];
  /** The collection is judged spam (by its verdict or an operator's override). */
  spam?: boolean;
}

/**
 * The labels of a transfer, each once, in the enum's order. A label that comes from a trade
 * applies when any of the transfer's trades gives it.
 */
export function transferLabels(facts: TransferFacts): TransferLabel[] {
  const found = new Set<TransferLabel>();
  const mint = facts.from === ZERO_ADDRESS;
  const burn = isBurnAddress(facts.to);
  if (mint) found.add("LABEL_MINT");
  if (burn) found.add("LABEL_BURN");
  for (const trade of facts.trades) {
    if (trade.kind === "mint") found.add("LABEL_PAID_MINT");
    if (trade.kind === "return") found.add("LABEL_RETURN");
    if (trade.kind !== "sale") continue;
    found.add("LABEL_SALE");
    if (trade.bundled) found.add("LABEL_BUNDLE");
    const market = MARKET_LABELS[trade.market];
    if (market) found.add(market);
    if (trade.flags.some((f) => f.startsWith("wash"))) found.add("LABEL_WASH");
    if (trade.flags.includes(RATE_OUTLIER)) found.add("LABEL_RATE_OUTLIER");
    if (trade.flags.includes(UNPRICED)) found.add("LABEL_UNPRICED");
    if (saleClass(trade.flags) === "organic") found.add("LABEL_ORGANIC");
  }
  if (!mint && !burn && !found.has("LABEL_SALE")) found.add("LABEL_TRANSFER");
  if (facts.spam) found.add("LABEL_SPAM");
  return TRANSFER_LABELS.filter((label) => found.has(label));
}
