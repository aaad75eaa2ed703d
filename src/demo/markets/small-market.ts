/**
 * The small market (`TestMarketplace`): a holder lists one ERC-721 for ETH or for the DEMO token,
 * and a buyer takes it whole at the asking price.
 */
import { ZERO_ADDRESS } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, GAS } from "../contracts.ts";
import { type PlanContext, tokenKey } from "../plan/context.ts";
import { ensureErc20 } from "../plan/erc20.ts";
import { anyCollection, heldToken } from "../plan/erc721.ts";

const ETHER = 10n ** 18n;
const MILLI_ETHER = 10n ** 15n;

export function createSmallMarketPlanner(ctx: PlanContext) {
  const { world, prng, counts } = ctx;

  function list(touched: Set<string>): TxRequest[] | undefined {
    const market = world.contracts.marketplace;
    const c = anyCollection(ctx);
    const token = c && market && heldToken(ctx, c, touched, (id) => !c.listings.has(id));
    if (!c || !market || !token) return undefined;
    const txs: TxRequest[] = [];
    if (!c.marketApproved.has(token.owner)) {
      c.marketApproved.add(token.owner);
      counts.approvalsForAll++;
      txs.push(
        callTx(
          token.owner,
          c.contract.address,
          c.contract.contractName,
          "setApprovalForAll",
          [market.address, true],
          GAS.approvalForAll,
        ),
      );
    }
    const erc20 = world.erc20;
    const inToken = erc20 !== undefined && prng.chance(0.4);
    const price = inToken
      ? BigInt(prng.logUniform(10, 20_000, 1)) * ETHER
      : BigInt(prng.logUniform(5, 20_000, 1)) * MILLI_ETHER;
    const currency = inToken ? erc20.contract.address : null;
    c.listings.set(token.id, { seller: token.owner, currency, price });
    counts.erc721Listings++;
    txs.push(
      callTx(
        token.owner,
        market.address,
        "TestMarketplace",
        "list",
        // The marketplace names ETH as the zero address.
        [c.contract.address, token.id, currency ?? ZERO_ADDRESS, price],
        GAS.marketList,
      ),
    );
    return txs;
  }

  function buy(touched: Set<string>): TxRequest[] | undefined {
    const market = world.contracts.marketplace;
    const listed = [...world.erc721.values()].filter((m) => m.listings.size > 0);
    if (!market || listed.length === 0) return undefined;
    const c = prng.pick(listed);
    const candidates = [...c.listings.keys()].filter((id) => !touched.has(tokenKey(c.contract, id)));
    if (candidates.length === 0) return undefined;
    const id = prng.pick(candidates);
    const listing = c.listings.get(id);
    if (!listing) return undefined;
    touched.add(tokenKey(c.contract, id));
    const buyer = world.pickAccount(prng, listing.seller);
    const txs: TxRequest[] = [];
    const erc20 = world.erc20;
    if (listing.currency !== null) {
      if (!erc20) return undefined;
      txs.push(...ensureErc20(ctx, buyer, listing.price, market.address));
      erc20.move(buyer, listing.seller, listing.price);
    }
    c.setOwner(id, buyer, world.accountSet);
    counts.erc721Sales++;
    txs.push(
      callTx(buyer, market.address, "TestMarketplace", "buy", [c.contract.address, id], GAS.marketBuy, {
        value: listing.currency === null ? listing.price : 0n,
      }),
    );
    return txs;
  }

  return { list, buy };
}
