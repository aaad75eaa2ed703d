/** Paid mints: a pass of the paid-mint collection, bought from the contract at its fixed price. */
import type { TxRequest } from "../block-builder.ts";
import { callTx, GAS } from "../contracts.ts";
import type { PlanContext } from "../plan/context.ts";
import { marketContract } from "./trade.ts";

/** What a pass of the paid-mint collection costs: 0.05 ETH. */
export const PAID_MINT_PRICE = 50n * 10n ** 15n;

export function createPaidMintPlanner({ world, prng, counts }: PlanContext) {
  function mint(): TxRequest[] | undefined {
    const minter = world.pickAccount(prng);
    counts.paidMints++;
    return [
      callTx(minter, marketContract(world, "paidMint").address, "PaidMintERC721", "mint", [], GAS.paidMint, {
        value: PAID_MINT_PRICE,
      }),
    ];
  }

  return { mint };
}
