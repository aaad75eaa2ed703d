import { isBurnAddress } from "../core/burn.ts";
import { type Address, ZERO_ADDRESS } from "../core/hex.ts";
import type { NftTransfer } from "../core/types.ts";
import {
  type Flows,
  type Movement,
  type Movements,
  movements,
  NATIVE,
  netFlows,
  paidBy,
} from "./movements.ts";
import { reachedSellerSide } from "./reach.ts";
import { splitProportionally } from "./split.ts";
import type { AttributedBy, PunkBid, SaleTransaction, TokenAmount, Trade } from "./types.ts";

/** Finds the open bid an accepted CryptoPunks bid was paid with. */
export type BidLookup = (contract: Address, punkIndex: bigint, bidder: Address) => PunkBid | undefined;

/**
 * The trades of one transaction: which NFTs changed hands between whom, and what each buyer paid
 * for each, found from what moved rather than from any marketplace's events.
 *
 * 1. Each token's movements are netted per account: intermediaries (aggregators, escrows, MEV bots)
 *    end where they started and drop out, the account left with fewer units is the seller, the one
 *    left with more the buyer; a token whose first holder has it back was returned, not sold.
 * 2. Payments are netted per account and currency (native coin from call traces, or the
 *    transaction's value without them; each ERC-20), so refunds cancel what they give back.
 * 3. A buyer who paid is the payer of its NFTs; a buyer who paid nothing is paid for by the
 *    transaction's sender, if that sender paid and sold nothing.
 * 4. A payer's payment is what of its money reached the seller side (reach.ts): what went
 *    elsewhere in the same transaction is no part of it, a lender's money through the buyer is.
 *    Paid mints, and sales seen without call traces, keep what their payer paid out, net.
 * 5. A payer's payment is split over its NFTs: in proportion to what each seller received when
 *    there are several sellers (or to the order amounts that paid them, when each payment can be
 *    traced to one), by units otherwise.
 * 6. A trade is a sale when its payer paid and its seller was paid something, even if only to pass
 *    it on (an escrow); without call traces, when the payer paid the transaction's value. CryptoPunks, whose
 *    market credits sellers for a later withdrawal, are priced from the market's `PunkBought`
 *    value or, when an accepted bid logs 0, from the bid. A new NFT paid for is a paid mint.
 */
export function attributeTransaction(tx: SaleTransaction, bids: BidLookup = () => undefined): Trade[] {
  if (!mayTrade(tx)) return [];
  const moves = tokenMoves(tx.nft);
  if (moves.length === 0) return [];
  const payments = movements(tx);
  const flows = netFlows(payments);
  const market = tx.markets[0]?.market ?? "";
  const priceFromTransactionValue = tx.native === undefined;

  const trades: Trade[] = [];
  const priced: Pairing[] = [];
  for (const move of moves) {
    if (move.returned) {
      const { holder, transfer } = move.returned;
      trades.push(
        tradeOf(
          transfer,
          "return",
          { seller: holder, buyer: holder, quantity: transfer.amount },
          { native: 0n, fungible: [], attributedBy: "ATTRIBUTED_BY_NO_PAYMENTS" },
          market,
          priceFromTransactionValue,
        ),
      );
    }
    priced.push(...move.pairings);
  }

  const sellers = new Set(priced.map((p) => p.seller));
  const payerOf = (buyer: Address): { payer: Address; forOther: boolean } | undefined => {
    if (paidBy(flows, buyer).size > 0) return { payer: buyer, forOther: false };
    if (tx.from !== buyer && !sellers.has(tx.from) && paidBy(flows, tx.from).size > 0)
      return { payer: tx.from, forOther: true };
    return undefined;
  };

  // Pairings grouped by who paid for them, in the order they first appear.
  const groups = new Map<Address, { forOther: boolean; pairings: Pairing[] }>();
  const unpaid: Pairing[] = [];
  for (const pairing of priced) {
    const found = payerOf(pairing.buyer);
    if (!found) {
      unpaid.push(pairing);
      continue;
    }
    const group = groups.get(found.payer) ?? { forOther: false, pairings: [] };
    group.forOther ||= found.forOther;
    group.pairings.push(pairing);
    groups.set(found.payer, group);
  }

  const reached = priceFromTransactionValue ? undefined : reachedBy(tx, groups, priced, payments, flows);
  [...groups].forEach(([payer, group], g) => {
    // A new NFT has no seller side to follow: a paid mint is priced at what its payer spent.
    const minted = group.pairings.every((p) => p.seller === ZERO_ADDRESS);
    const paid = reached && !minted ? (reached[g] as Map<string, bigint>) : paidBy(flows, payer);
    if (paid.size === 0) {
      // The payer paid, but none of it reached the seller side: only a market that credits its
      // sellers for later (CryptoPunks) can make that a sale.
      unpaid.push(...group.pairings);
      return;
    }
    const listed = paid.size === 1 ? listedPrices(tx.markets, group.pairings) : undefined;
    const shares = listed
      ? splitByListing(paid, listed)
      : splitPayment(paid, group.pairings, flows, payments);
    const attributedBy = listed
      ? "ATTRIBUTED_BY_MARKET_EVENT"
      : attributionOf(group.pairings, group.forOther);
    group.pairings.forEach((pairing, i) => {
      const share = shares[i] ?? { native: 0n, fungible: [] };
      const isMint = pairing.seller === ZERO_ADDRESS;
      // Without call traces the coin that reached the seller is not seen: the transaction's
      // value paid for it is all there is to go by.
      const unseen = priceFromTransactionValue && share.native > 0n;
      if (!isMint && !unseen && !receivedAny(payments, pairing.seller)) {
        // Paid, but the seller side got nothing here: only a market that credits its sellers
        // for later (CryptoPunks) can make that a sale.
        unpaid.push(pairing);
        return;
      }
      trades.push(
        tradeOf(
          pairing.delivery,
          isMint ? "mint" : "sale",
          pairing,
          { native: share.native, fungible: share.fungible, attributedBy },
          market,
          priceFromTransactionValue,
        ),
      );
    });
  });

  for (const pairing of unpaid) {
    if (pairing.seller === ZERO_ADDRESS) continue;
    const price = punkPrice(tx, pairing, bids);
    if (price === undefined || price === 0n) continue;
    trades.push(
      tradeOf(
        pairing.delivery,
        "sale",
        pairing,
        { native: price, fungible: [], attributedBy: "ATTRIBUTED_BY_MARKET_EVENT" },
        market || "cryptopunks",
        false,
      ),
    );
  }

  return trades.sort((a, b) => a.logIndex - b.logIndex || a.seq - b.seq);
}

/**
 * What of each group's payment reached the seller side (see reach.ts), the groups in the order
 * they were formed. A group's members are its payer and the buyers it paid for.
 */
function reachedBy(
  tx: SaleTransaction,
  groups: ReadonlyMap<Address, { pairings: Pairing[] }>,
  priced: readonly Pairing[],
  moves: Movements,
  flows: Flows,
): Map<string, bigint>[] {
  const sellers = new Set<Address>();
  for (const p of priced) if (p.seller !== ZERO_ADDRESS) sellers.add(p.seller);
  const handlers = new Set<Address>();
  const boundaries: number[] = [];
  for (const t of tx.nft) {
    handlers.add(t.from);
    boundaries.push(t.logIndex);
  }
  for (const event of tx.markets) boundaries.push(event.logIndex);
  boundaries.sort((a, b) => a - b);
  const members = [...groups].map(([payer, group]) => [payer, ...group.pairings.map((p) => p.buyer)]);
  return reachedSellerSide({ moves, flows, sellers, handlers, boundaries, groups: members });
}

/**
 * Whether a transaction can hold a trade at all: something was paid, a marketplace logged a trade,
 * or a token moved more than once (it may have come back). Most transfers of a backfill are
 * none of these, and are passed over without the work of netting them.
 */
function mayTrade(tx: SaleTransaction): boolean {
  if (tx.fungible.length > 0 || tx.markets.length > 0) return true;
  if (tx.native ? tx.native.length > 0 : tx.to !== null && tx.value > 0n) return true;
  if (tx.nft.length < 2) return false;
  const seen = new Map<Address, Set<bigint>>();
  for (const t of tx.nft) {
    let ids = seen.get(t.contract);
    if (!ids) {
      ids = new Set();
      seen.set(t.contract, ids);
    }
    if (ids.has(t.tokenId)) return true;
    ids.add(t.tokenId);
  }
  return false;
}

/** Units of one token going from a seller (or the zero address, for a mint) to a buyer. */
interface Pairing {
  contract: Address;
  tokenId: bigint;
  seller: Address;
  buyer: Address;
  quantity: bigint;
  /** The last transfer that gave the buyer units of this token. */
  delivery: NftTransfer;
}

interface TokenMove {
  pairings: Pairing[];
  /** The token's first holder ended with what it had, and nobody else gained: a return. */
  returned?: { holder: Address; transfer: NftTransfer };
}

/** The trade a transfer delivered, its fields set in one order: such objects share one shape. */
function tradeOf(
  t: NftTransfer,
  kind: Trade["kind"],
  parties: { seller: Address; buyer: Address; quantity: bigint },
  price: { native: bigint; fungible: readonly TokenAmount[]; attributedBy: AttributedBy },
  market: string,
  priceFromTransactionValue: boolean,
): Trade {
  return {
    kind,
    contract: t.contract,
    tokenId: t.tokenId,
    seller: parties.seller,
    buyer: parties.buyer,
    quantity: parties.quantity,
    blockNumber: t.blockNumber,
    logIndex: t.logIndex,
    seq: t.seq,
    txHash: t.txHash,
    txIndex: t.txIndex,
    native: price.native,
    fungible: price.fungible,
    attributedBy: price.attributedBy,
    market,
    priceFromTransactionValue,
  };
}

/** Nets each token's movements per account and pairs who ended with fewer units with who ended with more. */
function tokenMoves(nft: readonly NftTransfer[]): TokenMove[] {
  const byToken = new Map<string, NftTransfer[]>();
  for (const t of nft) {
    const key = `${t.contract}:${t.tokenId}`;
    const list = byToken.get(key);
    if (list) list.push(t);
    else byToken.set(key, [t]);
  }
  const moves: TokenMove[] = [];
  for (const transfers of byToken.values()) {
    const net = new Map<Address, bigint>();
    const delivery = new Map<Address, NftTransfer>();
    for (const t of transfers) {
      net.set(t.from, (net.get(t.from) ?? 0n) - t.amount);
      net.set(t.to, (net.get(t.to) ?? 0n) + t.amount);
      delivery.set(t.to, t);
    }
    // Map order is first appearance: sellers and buyers are paired in the order they took part.
    const sellers: { account: Address; units: bigint }[] = [];
    const buyers: { account: Address; units: bigint }[] = [];
    for (const [account, units] of net) {
      if (units < 0n) sellers.push({ account, units: -units });
      else if (units > 0n && !isBurnAddress(account)) buyers.push({ account, units });
    }
    const pairings: Pairing[] = [];
    let s = 0;
    for (const buyer of buyers) {
      let wanted = buyer.units;
      while (wanted > 0n && s < sellers.length) {
        const seller = sellers[s] as { account: Address; units: bigint };
        const quantity = wanted < seller.units ? wanted : seller.units;
        pairings.push({
          contract: (transfers[0] as NftTransfer).contract,
          tokenId: (transfers[0] as NftTransfer).tokenId,
          seller: seller.account,
          buyer: buyer.account,
          quantity,
          delivery: delivery.get(buyer.account) as NftTransfer,
        });
        seller.units -= quantity;
        wanted -= quantity;
        if (seller.units === 0n) s++;
      }
    }
    const first = transfers[0] as NftTransfer;
    const move: TokenMove = { pairings };
    if (
      pairings.length === 0 &&
      first.from !== ZERO_ADDRESS &&
      net.get(first.from) === 0n &&
      transfers.length > 1
    ) {
      move.returned = { holder: first.from, transfer: transfers[transfers.length - 1] as NftTransfer };
    }
    moves.push(move);
  }
  return moves;
}

/**
 * Whether an account was paid anything in the transaction, even if it passed it all on: an escrow
 * that held the NFT (a lending contract selling a locked token) is paid and pays out the parties.
 */
function receivedAny(moves: Movements, account: Address): boolean {
  for (const list of moves.values()) if (list.some((m) => m.to === account)) return true;
  return false;
}

interface Share {
  native: bigint;
  fungible: TokenAmount[];
}

/**
 * Splits what a payer paid over the NFTs it paid for. With several sellers, each currency goes to
 * the sellers in proportion to what each received of it (or to the orders that paid them, when
 * each can be traced: see orderAmounts), then over each seller's NFTs by units; with one seller,
 * or when no seller received that currency, over all the NFTs by units.
 */
function splitPayment(
  paid: Map<string, bigint>,
  pairings: readonly Pairing[],
  flows: Flows,
  moves: Movements,
): Share[] {
  const shares: Share[] = pairings.map(() => ({ native: 0n, fungible: [] }));
  const sellers = [...new Set(pairings.map((p) => p.seller))];
  for (const [currency, amount] of paid) {
    const accounts = flows.get(currency);
    const proceeds =
      sellers.length < 2
        ? []
        : (orderAmounts(moves.get(currency) ?? [], sellers) ??
          sellers.map((s) => {
            const net = accounts?.get(s) ?? 0n;
            return net > 0n ? net : 0n;
          }));
    let parts: bigint[];
    if (sellers.length > 1 && proceeds.some((p) => p > 0n)) {
      parts = pairings.map(() => 0n);
      const perSeller = splitProportionally(amount, proceeds);
      sellers.forEach((seller, si) => {
        const own = pairings.map((p, i) => ({ p, i })).filter(({ p }) => p.seller === seller);
        const split = splitProportionally(
          perSeller[si] ?? 0n,
          own.map(({ p }) => p.quantity),
        );
        own.forEach(({ i }, k) => {
          parts[i] = split[k] ?? 0n;
        });
      });
    } else {
      parts = splitProportionally(
        amount,
        pairings.map((p) => p.quantity),
      );
    }
    parts.forEach((part, i) => {
      const share = shares[i] as Share;
      if (currency === NATIVE) share.native += part;
      else if (part > 0n) share.fungible.push({ token: currency as Address, amount: part });
    });
  }
  return shares;
}

/**
 * The listed price of each of several NFTs bought together, when the marketplace's events state one
 * for each (one unit each, one listing per token): the exact proportions to split their payment in,
 * which the movements cannot always give (a sweep that pays every royalty after all its sellers).
 */
function listedPrices(
  markets: SaleTransaction["markets"],
  pairings: readonly Pairing[],
): bigint[] | undefined {
  if (pairings.length < 2) return undefined;
  const prices = new Map<string, bigint | null>();
  for (const event of markets) {
    const listing = event.listing;
    if (!listing) continue;
    const key = `${listing.contract}:${listing.tokenId}`;
    // A token listed twice in one transaction (bought and sold on) is ambiguous.
    prices.set(key, prices.has(key) ? null : listing.price);
  }
  const listed: bigint[] = [];
  for (const p of pairings) {
    const price = prices.get(`${p.contract}:${p.tokenId}`);
    if (price === undefined || price === null || price === 0n || p.quantity !== 1n) return undefined;
    listed.push(price);
  }
  return listed;
}

/** Splits a payment in one currency over NFTs in proportion to their listed prices. */
function splitByListing(paid: Map<string, bigint>, listed: readonly bigint[]): Share[] {
  const [currency, amount] = [...paid][0] as [string, bigint];
  return splitProportionally(amount, listed).map((part) =>
    currency === NATIVE
      ? { native: part, fungible: [] }
      : { native: 0n, fungible: part > 0n ? [{ token: currency as Address, amount: part }] : [] },
  );
}

/**
 * What each seller's orders came to before fees, when every payment to a seller can be traced to
 * the amount that funded it: a contract (an exchange called once per order, as aggregators do)
 * receives an amount and, before it receives the next, pays out exactly that amount, to this one
 * seller and to accounts that sold nothing (fees, royalties). Sellers' net proceeds would
 * misprice orders whose fees differ; undefined when any payment cannot be traced this way.
 */
function orderAmounts(list: readonly Movement[], sellers: readonly Address[]): bigint[] | undefined {
  const isSeller = new Set(sellers);
  const gross = new Map<Address, bigint>();
  const counted = new Set<number>();
  for (let k = 0; k < list.length; k++) {
    const payment = list[k] as Movement;
    if (!isSeller.has(payment.to)) continue;
    const payer = payment.from;
    let inflow = -1;
    for (let j = k - 1; j >= 0 && inflow < 0; j--) if ((list[j] as Movement).to === payer) inflow = j;
    if (inflow < 0) return undefined;
    let paidOut = 0n;
    for (let j = inflow + 1; j < list.length; j++) {
      const m = list[j] as Movement;
      if (m.to === payer) break;
      if (m.from !== payer) continue;
      if (isSeller.has(m.to) && m.to !== payment.to) return undefined;
      paidOut += m.amount;
    }
    const funded = (list[inflow] as Movement).amount;
    if (paidOut !== funded) return undefined;
    if (counted.has(inflow)) continue;
    counted.add(inflow);
    gross.set(payment.to, (gross.get(payment.to) ?? 0n) + funded);
  }
  if (sellers.some((s) => !gross.has(s))) return undefined;
  return sellers.map((s) => gross.get(s) as bigint);
}

function attributionOf(pairings: readonly Pairing[], forOther: boolean): AttributedBy {
  if (forOther) return "ATTRIBUTED_BY_RECIPIENT_NO_PAYMENT";
  if (pairings.length === 1) return "ATTRIBUTED_BY_SINGLE_TRANSFER";
  if (new Set(pairings.map((p) => p.seller)).size > 1) return "ATTRIBUTED_BY_SELLER_PROCEEDS";
  if (new Set(pairings.map((p) => p.contract)).size > 1) return "ATTRIBUTED_BY_MULTI_CONTRACT_AVERAGE";
  return "ATTRIBUTED_BY_SAME_CONTRACT_AVERAGE";
}

/** A CryptoPunks trade's price from its `PunkBought`, or from the bid it accepted when that logs 0. */
function punkPrice(tx: SaleTransaction, pairing: Pairing, bids: BidLookup): bigint | undefined {
  for (const event of tx.markets) {
    const punk = event.punk;
    if (!punk || event.contract !== pairing.contract || punk.index !== pairing.tokenId) continue;
    if (punk.from !== pairing.seller) continue;
    if (punk.value > 0n) return punk.value;
    return bids(pairing.contract, pairing.tokenId, pairing.buyer)?.value;
  }
  return undefined;
}
