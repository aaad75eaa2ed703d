/**
 * The draw of the next user action: every action of every standard and market with its weight,
 * in one list. The draw picks an index into it by weight, so the list's order and weights are part
 * of what a seed means: adding, moving or reweighing an action changes every history.
 */
import type { TxRequest } from "./block-builder.ts";
import { createDirectDealPlanner } from "./markets/direct.ts";
import { createEscrowPlanner } from "./markets/escrow.ts";
import { createPaidMintPlanner } from "./markets/paid-mint.ts";
import { createPoolPlanner } from "./markets/pools.ts";
import { createSeaportPlanner } from "./markets/seaport.ts";
import { createSmallMarketPlanner } from "./markets/small-market.ts";
import type { Action, PlanContext } from "./plan/context.ts";
import { createErc20Planner } from "./plan/erc20.ts";
import { createErc721Planner } from "./plan/erc721.ts";
import { createErc1155Planner } from "./plan/erc1155.ts";
import { createLegacyPlanner } from "./plan/legacy.ts";
import { createPunksPlanner } from "./plan/punks.ts";

export interface ActivityPlanner {
  /**
   * One user action (one to three transactions from the same sender). `touched` holds the assets
   * already used in the block being planned and is updated.
   */
  plan(touched: Set<string>): TxRequest[];
}

export function createActivityPlanner(ctx: PlanContext): ActivityPlanner {
  const erc721 = createErc721Planner(ctx);
  const erc1155 = createErc1155Planner(ctx);
  const legacy = createLegacyPlanner(ctx);
  const punks = createPunksPlanner(ctx);
  const erc20 = createErc20Planner(ctx);
  const smallMarket = createSmallMarketPlanner(ctx);
  const seaport = createSeaportPlanner(ctx);
  const escrow = createEscrowPlanner(ctx);
  const direct = createDirectDealPlanner(ctx);
  const paidMint = createPaidMintPlanner(ctx);
  const pools = createPoolPlanner(ctx);
  const actions: { weight: number; run: Action }[] = [
    { weight: 5, run: erc721.mint },
    { weight: 3, run: erc721.mintBatch },
    { weight: 16, run: erc721.transfer },
    { weight: 5, run: smallMarket.list },
    { weight: 6, run: smallMarket.buy },
    { weight: 1.5, run: erc721.burn },
    { weight: 1, run: erc721.sendToDead },
    { weight: 0.7, run: erc721.mintConsecutive },
    { weight: 3, run: erc1155.mint },
    { weight: 2, run: erc1155.mintBatch },
    { weight: 6, run: erc1155.transfer },
    { weight: 3, run: erc1155.batchTransfer },
    { weight: 1, run: erc1155.burn },
    { weight: 0.5, run: erc1155.burnBatch },
    { weight: 0.5, run: erc1155.sendToDead },
    { weight: 2.5, run: legacy.mint },
    { weight: 3, run: legacy.transfer },
    { weight: 1, run: legacy.approve },
    { weight: 1, run: legacy.pull },
    { weight: 0.5, run: legacy.sendToDead },
    { weight: 2, run: punks.claim },
    { weight: 3, run: punks.transfer },
    { weight: 4, run: punks.offer },
    { weight: 0.7, run: punks.cancelOffer },
    { weight: 4, run: punks.buy },
    { weight: 3, run: punks.bid },
    { weight: 3, run: punks.acceptBid },
    { weight: 0.7, run: punks.withdrawBid },
    { weight: 1, run: punks.withdrawProceeds },
    { weight: 4, run: erc20.transfer },
    { weight: 4, run: seaport.list },
    { weight: 4, run: seaport.buy },
    { weight: 2.5, run: seaport.offer },
    { weight: 2.5, run: seaport.acceptOffer },
    { weight: 1.5, run: seaport.sweep },
    { weight: 4, run: escrow.list },
    { weight: 2, run: escrow.buy },
    { weight: 1.5, run: escrow.sweep },
    { weight: 2, run: direct.deal },
    { weight: 2, run: direct.washBack },
    { weight: 1.5, run: paidMint.mint },
    { weight: 2.5, run: pools.swap },
  ];
  const weights = actions.map((a) => a.weight);

  return {
    plan(touched) {
      for (let attempt = 0; attempt < 40; attempt++) {
        const action = actions[ctx.prng.weightedIndex(weights)];
        const txs = action?.run(touched);
        if (txs && txs.length > 0) return txs;
      }
      // Nothing else applied (an empty world): a mint always does, if any collection exists.
      return erc721.mint(touched) ?? legacy.mint(touched) ?? [];
    },
  };
}
