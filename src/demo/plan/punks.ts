/**
 * CryptoPunks, a market of its own: claims of the punks left unassigned, transfers, offers (some
 * to one buyer only) and their cancellations, purchases (some above the asking price), bids,
 * accepted and withdrawn, and withdrawals of what sellers and outbid bidders are owed.
 */
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, GAS } from "../contracts.ts";
import type { PlanContext } from "./context.ts";

const MILLI_ETHER = 10n ** 15n;

export function createPunksPlanner({ world, prng, counts }: PlanContext) {
  const key = (index: number) => `punk:${index}`;

  /** A punk a demo account holds, free in this block; marks it touched. */
  function punk(touched: Set<string>): number | undefined {
    const p = world.punks;
    if (!p?.allAssigned) return undefined;
    const index = p.held.pick(prng, (i) => !touched.has(key(i)));
    if (index !== undefined) touched.add(key(index));
    return index;
  }

  function punkPrice(): bigint {
    return BigInt(prng.logUniform(10, 50_000, 1)) * MILLI_ETHER;
  }

  function claim(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    if (!p?.allAssigned) return undefined;
    const index = p.unassigned.pick(prng, (i) => !touched.has(key(i)));
    if (index === undefined) return undefined;
    touched.add(key(index));
    const claimer = world.pickAccount(prng);
    p.setOwner(index, claimer, world.accountSet);
    counts.punksClaimed++;
    return [
      callTx(claimer, p.contract.address, "CryptoPunksMarket", "getPunk", [BigInt(index)], GAS.punksClaim),
    ];
  }

  function transfer(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    const index = punk(touched);
    if (!p || index === undefined) return undefined;
    const owner = p.owners[index] as Address;
    const to = world.pickAccount(prng, owner);
    p.setOwner(index, to, world.accountSet);
    counts.punkTransfers++;
    return [
      callTx(
        owner,
        p.contract.address,
        "CryptoPunksMarket",
        "transferPunk",
        [to, BigInt(index)],
        GAS.punksTransfer,
      ),
    ];
  }

  function offer(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    if (!p) return undefined;
    const index = punk(touched);
    if (index === undefined) return undefined;
    const owner = p.owners[index] as Address;
    const minValue = punkPrice();
    counts.punkOffers++;
    if (prng.chance(0.2)) {
      const buyer = world.pickAccount(prng, owner);
      p.offers.set(index, { seller: owner, minValue, onlySellTo: buyer });
      return [
        callTx(
          owner,
          p.contract.address,
          "CryptoPunksMarket",
          "offerPunkForSaleToAddress",
          [BigInt(index), minValue, buyer],
          GAS.punksOffer,
        ),
      ];
    }
    p.offers.set(index, { seller: owner, minValue, onlySellTo: null });
    return [
      callTx(
        owner,
        p.contract.address,
        "CryptoPunksMarket",
        "offerPunkForSale",
        [BigInt(index), minValue],
        GAS.punksOffer,
      ),
    ];
  }

  /** A punk on offer, free in this block; marks it touched. */
  function offeredPunk(touched: Set<string>): number | undefined {
    const p = world.punks;
    if (!p || p.offers.size === 0) return undefined;
    const candidates = [...p.offers.keys()].filter((i) => !touched.has(key(i)));
    if (candidates.length === 0) return undefined;
    const index = prng.pick(candidates);
    touched.add(key(index));
    return index;
  }

  function cancelOffer(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    const index = offeredPunk(touched);
    if (!p || index === undefined) return undefined;
    const seller = (p.offers.get(index) as { seller: Address }).seller;
    p.offers.delete(index);
    counts.punkOffersCancelled++;
    return [
      callTx(
        seller,
        p.contract.address,
        "CryptoPunksMarket",
        "punkNoLongerForSale",
        [BigInt(index)],
        GAS.punksCancel,
      ),
    ];
  }

  function buy(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    const index = offeredPunk(touched);
    if (!p || index === undefined) return undefined;
    const offer = p.offers.get(index);
    if (!offer) return undefined;
    const buyer = offer.onlySellTo ?? world.pickAccount(prng, offer.seller);
    // Buyers sometimes pay over the asking price; the event carries what was paid.
    const value = prng.chance(0.2) ? offer.minValue + offer.minValue / 10n : offer.minValue;
    p.credit(offer.seller, value);
    p.setOwner(index, buyer, world.accountSet);
    counts.punkSales++;
    return [
      callTx(buyer, p.contract.address, "CryptoPunksMarket", "buyPunk", [BigInt(index)], GAS.punksBuy, {
        value,
      }),
    ];
  }

  function bid(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    const index = punk(touched);
    if (!p || index === undefined) return undefined;
    const owner = p.owners[index] as Address;
    const bidder = world.pickAccount(prng, owner);
    const existing = p.bids.get(index);
    let value = punkPrice();
    if (existing) {
      if (value <= existing.value) value = existing.value + existing.value / 10n + MILLI_ETHER;
      p.credit(existing.bidder, existing.value);
    }
    p.bids.set(index, { bidder, value });
    counts.punkBids++;
    return [
      callTx(
        bidder,
        p.contract.address,
        "CryptoPunksMarket",
        "enterBidForPunk",
        [BigInt(index)],
        GAS.punksBid,
        {
          value,
        },
      ),
    ];
  }

  /** A punk with a bid on it, free in this block; marks it touched. */
  function biddedPunk(touched: Set<string>): number | undefined {
    const p = world.punks;
    if (!p || p.bids.size === 0) return undefined;
    const candidates = [...p.bids.keys()].filter((i) => !touched.has(key(i)));
    if (candidates.length === 0) return undefined;
    const index = prng.pick(candidates);
    touched.add(key(index));
    return index;
  }

  function acceptBid(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    const index = biddedPunk(touched);
    if (!p || index === undefined) return undefined;
    const bid = p.bids.get(index);
    const seller = p.owners[index];
    if (!bid || !seller || !world.accountSet.has(seller)) return undefined;
    p.bids.delete(index);
    p.credit(seller, bid.value);
    p.setOwner(index, bid.bidder, world.accountSet);
    counts.punkBidSales++;
    return [
      callTx(
        seller,
        p.contract.address,
        "CryptoPunksMarket",
        "acceptBidForPunk",
        [BigInt(index), bid.value],
        GAS.punksAcceptBid,
      ),
    ];
  }

  function withdrawBid(touched: Set<string>): TxRequest[] | undefined {
    const p = world.punks;
    const index = biddedPunk(touched);
    if (!p || index === undefined) return undefined;
    const bid = p.bids.get(index);
    if (!bid) return undefined;
    p.bids.delete(index);
    counts.punkBidsWithdrawn++;
    return [
      callTx(
        bid.bidder,
        p.contract.address,
        "CryptoPunksMarket",
        "withdrawBidForPunk",
        [BigInt(index)],
        GAS.punksWithdrawBid,
      ),
    ];
  }

  function withdrawProceeds(): TxRequest[] | undefined {
    const p = world.punks;
    if (!p?.allAssigned) return undefined;
    const owed = [...p.pendingWithdrawals.entries()].filter(([, amount]) => amount > 0n);
    if (owed.length === 0) return undefined;
    const [account] = prng.pick(owed);
    p.pendingWithdrawals.set(account, 0n);
    counts.punkWithdrawals++;
    return [callTx(account, p.contract.address, "CryptoPunksMarket", "withdraw", [], GAS.punksWithdraw)];
  }

  return {
    claim,
    transfer,
    offer,
    cancelOffer,
    buy,
    bid,
    acceptBid,
    withdrawBid,
    withdrawProceeds,
  };
}
