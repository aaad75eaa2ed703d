/**
 * Direct deals: the seller settles through the deal desk, which moves the NFT to the buyer and the
 * buyer's WETH or dollars to the seller in one transaction. Half the WETH deals are the first leg
 * of a wash pair: later, the buyer sells the NFT back to the seller at the same price.
 */
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, GAS } from "../contracts.ts";
import { type PlanContext, tokenKey } from "../plan/context.ts";
import type { Erc20Model, Erc721Model } from "../world.ts";
import { anyHeldToken, approveOperator, deliver, ethPrice, marketContract } from "./trade.ts";

const DOLLAR = 10n ** 6n;

export function createDirectDealPlanner(ctx: PlanContext) {
  const { world, prng, counts } = ctx;

  /** The seller settles a deal through the desk: the NFT to the buyer, WETH or dollars to the seller. */
  function deal(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    const token = trading && anyHeldToken(ctx, touched);
    if (!trading || !token) return undefined;
    const buyer = world.pickAccount(prng, token.owner);
    const inDollars = prng.chance(0.4);
    const currency = inDollars ? trading.stablecoin : trading.weth;
    const price = inDollars ? BigInt(prng.logUniform(10, 20_000, 1)) * DOLLAR : ethPrice(prng) / 2n;
    if (currency.balanceOf(buyer) < price) return undefined;
    currency.move(buyer, token.owner, price);
    deliver(ctx, token.c, token.id, buyer);
    counts.dealSales++;
    // Some deals are the first leg of a wash pair: the buyer sells it straight back, later.
    if (!inDollars && prng.chance(0.5)) {
      trading.washLegs.push({ key: token.c.key, id: token.id, seller: token.owner, buyer, price });
    }
    return settle(token.c, token.id, token.owner, buyer, currency, price);
  }

  function settle(
    c: Erc721Model,
    id: bigint,
    seller: Address,
    buyer: Address,
    currency: Erc20Model,
    price: bigint,
  ): TxRequest[] {
    const desk = marketContract(world, "dealDesk");
    return [
      ...approveOperator(ctx, c, seller, desk.address),
      callTx(
        seller,
        desk.address,
        "DealDesk",
        "settle",
        [
          [
            {
              nft: c.contract.address,
              tokenId: id,
              seller,
              buyer,
              currency: currency.contract.address,
              price,
            },
          ],
        ],
        GAS.dealSettle,
      ),
    ];
  }

  /** The second leg of a wash pair: the buyer of a deal sells the NFT back to its seller, at the same price. */
  function washBack(touched: Set<string>): TxRequest[] | undefined {
    const trading = world.trading;
    if (!trading || trading.washLegs.length === 0) return undefined;
    const at = prng.int(0, trading.washLegs.length - 1);
    const leg = trading.washLegs[at] as (typeof trading.washLegs)[number];
    const c = world.erc721.get(leg.key);
    if (!c || c.owners.get(leg.id) !== leg.buyer || trading.weth.balanceOf(leg.seller) < leg.price) {
      trading.washLegs.splice(at, 1);
      return undefined;
    }
    if (touched.has(tokenKey(c.contract, leg.id))) return undefined;
    trading.washLegs.splice(at, 1);
    touched.add(tokenKey(c.contract, leg.id));
    trading.weth.move(leg.seller, leg.buyer, leg.price);
    deliver(ctx, c, leg.id, leg.seller);
    counts.washPairs++;
    return settle(c, leg.id, leg.buyer, leg.seller, trading.weth, leg.price);
  }

  return { deal, washBack };
}
