/**
 * The demo's ERC-20 token (DEMO): transfers between accounts, and the top-ups and approvals a buyer
 * paying in it needs first.
 */
import { maxUint256 } from "viem";
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, GAS } from "../contracts.ts";
import type { PlanContext } from "./context.ts";

const ETHER = 10n ** 18n;

/** Tops up and approves the buyer's token, in transactions that precede the purchase. */
export function ensureErc20(
  { world, counts }: PlanContext,
  buyer: Address,
  amount: bigint,
  spender: Address,
): TxRequest[] {
  const erc20 = world.erc20;
  if (!erc20) return [];
  const txs: TxRequest[] = [];
  if (erc20.balanceOf(buyer) < amount) {
    const topUp = amount * 10n;
    erc20.move(null, buyer, topUp);
    counts.erc20Mints++;
    txs.push(callTx(buyer, erc20.contract.address, "TestERC20", "mint", [buyer, topUp], GAS.erc20Mint));
  }
  if (!erc20.marketApproved.has(buyer)) {
    erc20.marketApproved.add(buyer);
    counts.erc20Approvals++;
    txs.push(
      callTx(buyer, erc20.contract.address, "TestERC20", "approve", [spender, maxUint256], GAS.erc20Approve),
    );
  }
  return txs;
}

export function createErc20Planner({ world, prng, counts }: PlanContext) {
  function transfer(): TxRequest[] | undefined {
    const erc20 = world.erc20;
    if (!erc20) return undefined;
    const from = world.pickAccount(prng);
    const balance = erc20.balanceOf(from);
    if (balance < ETHER) return undefined;
    const to = world.pickAccount(prng, from);
    const amount = BigInt(prng.logUniform(1, 5_000, 1)) * ETHER;
    if (amount > balance) return undefined;
    erc20.move(from, to, amount);
    counts.erc20Transfers++;
    return [callTx(from, erc20.contract.address, "TestERC20", "transfer", [to, amount], GAS.erc20Transfer)];
  }

  return { transfer };
}
